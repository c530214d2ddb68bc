use schemars::JsonSchema;

#[kbr_derive::schema]
#[derive(JsonSchema)]
pub struct Deployment {
    #[kbr(default = "three")]
    pub replicas: i32,
}

fn main() {}
