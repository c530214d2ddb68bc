use schemars::JsonSchema;

#[kbr_derive::schema]
#[derive(JsonSchema)]
#[kbr(group = "eventing.knative.dev")]
pub struct Address {
    pub hostname: String,
}

fn main() {}
