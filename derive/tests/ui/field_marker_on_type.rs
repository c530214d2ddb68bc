use schemars::JsonSchema;

#[kbr_derive::schema]
#[derive(JsonSchema)]
#[kbr(default = {"replicas": 1})]
pub struct Deployment {
    pub replicas: i32,
}

fn main() {}
