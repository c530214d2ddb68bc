use kbr_derive::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(version = "v1alpha1", kind = "Broker")]
pub struct BrokerSpec {}

fn main() {}
