use schemars::JsonSchema;

#[kbr_derive::schema]
#[derive(JsonSchema)]
#[kbr(validation(message = "low must not exceed high"))]
pub struct Bounds {
    pub low: i32,
    pub high: i32,
}

fn main() {}
