use schemars::JsonSchema;
use serde::Deserialize;

#[kbr_derive::schema]
#[derive(Deserialize, JsonSchema)]
pub struct Deployment {
    #[kbr(default = 3)]
    #[serde(alias = "count")]
    pub replicas: i32,
}

fn main() {}
