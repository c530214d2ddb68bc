use schemars::JsonSchema;

#[kbr_derive::schema]
#[derive(JsonSchema)]
pub struct Deployment {
    #[kbr(min_length = 1)]
    pub replicas: Option<i32>,
}

fn main() {}
