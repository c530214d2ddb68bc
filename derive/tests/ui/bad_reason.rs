use schemars::JsonSchema;

#[kbr_derive::schema]
#[derive(JsonSchema)]
pub struct Bounds {
    #[kbr(validation(rule = "self >= 0", reason = "Invalid"))]
    pub low: i32,
}

fn main() {}
