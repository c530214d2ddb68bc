use schemars::JsonSchema;

#[kbr_derive::schema]
#[derive(JsonSchema)]
pub struct Port {
    #[kbr(minLength = 1)]
    pub name: String,
}

fn main() {}
