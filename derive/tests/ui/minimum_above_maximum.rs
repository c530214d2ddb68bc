use schemars::JsonSchema;

#[kbr_derive::schema]
#[derive(JsonSchema)]
pub struct Deployment {
    #[kbr(minimum = 10, maximum = 1)]
    pub replicas: i32,
}

fn main() {}
