use schemars::JsonSchema;

#[kbr_derive::schema]
#[derive(JsonSchema)]
#[kbr(exactly_one_of = [image, templat])]
pub struct Source {
    pub image: Option<String>,
    pub template: Option<String>,
}

fn main() {}
