use schemars::JsonSchema;

#[derive(JsonSchema)]
#[kbr_derive::schema]
pub struct Deployment {
    pub replicas: i32,
}

fn main() {}
