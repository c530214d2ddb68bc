use schemars::JsonSchema;

#[kbr_derive::schema]
#[derive(JsonSchema)]
pub struct Port {
    #[kbr(max_length = "15")]
    pub name: String,
}

fn main() {}
