use schemars::JsonSchema;

#[kbr_derive::schema]
#[derive(JsonSchema)]
pub struct Event {
    #[kbr(format = "datetime-local")]
    pub at: String,
}

fn main() {}
