use kbr_derive::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "eventing.knative.dev", version = "v1alpha1", kind = "Broker")]
pub struct BrokerSpec {
    #[serde(alias = "class")]
    pub broker_class: Option<String>,
}

fn main() {}
