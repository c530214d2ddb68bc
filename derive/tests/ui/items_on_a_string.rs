use schemars::JsonSchema;

#[kbr_derive::schema]
#[derive(JsonSchema)]
pub struct Image {
    #[kbr(items(max_length = 5))]
    pub name: String,
}

fn main() {}
