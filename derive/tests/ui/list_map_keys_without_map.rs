use schemars::JsonSchema;

#[kbr_derive::schema]
#[derive(JsonSchema)]
pub struct Status {
    #[kbr(list_type = "set", list_map_keys = ["type"])]
    pub conditions: Vec<String>,
}

fn main() {}
