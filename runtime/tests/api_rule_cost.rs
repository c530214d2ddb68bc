//! `make manifests` refuses a CEL rule the API server would refuse for its estimated cost
//! (issue 26, acceptance 4): [`Scheme::crds`] fails with one line naming the field and the
//! `#[kbr(..)]` bound to add. The estimate is the one kbr's fake API server applies at CRD
//! install (`crd::cel::cost`), kube-apiserver's.
#![cfg(feature = "cel")]

use kbr_runtime::{CustomResource, Scheme};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// TagSpec: every tag is lower-case, checked over an unbounded list of unbounded strings.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "cost.example.com", version = "v1", kind = "Tag")]
pub struct TagSpec {
    /// The tags.
    #[kbr(validation(rule = "self.all(t, t.matches('^[a-z]+$'))"))]
    #[serde(default)]
    pub tags: Vec<String>,
}

/// BoundedTagSpec: the same rule, bounded as the error says.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "cost.example.com", version = "v1", kind = "BoundedTag")]
pub struct BoundedTagSpec {
    /// The tags.
    #[kbr(validation(rule = "self.all(t, t.matches('^[a-z]+$'))"))]
    #[kbr(max_items = 16, items(max_length = 63))]
    #[serde(default)]
    pub tags: Vec<String>,
}

/// A port of a [`ServerSpec`], checked on its own.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(validation(rule = "self.name.matches('^[a-z]+(-[a-z0-9]+)*$')"))]
pub struct Port {
    /// The port's name.
    #[kbr(max_length = 15)]
    pub name: String,
}

/// ServerSpec: the rule on each port is cheap, but there can be a million ports.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "cost.example.com", version = "v1", kind = "Server")]
pub struct ServerSpec {
    /// The ports.
    #[serde(default)]
    pub ports: Vec<Port>,
}

fn crds_error<K: CustomResource>() -> String {
    let mut scheme = Scheme::new();
    scheme.add::<K>();
    match scheme.crds() {
        Ok(crds) => panic!("expected an error, got {} CRDs", crds.len()),
        Err(error) => error.to_string(),
    }
}

#[test]
fn a_rule_over_an_unbounded_vec_of_strings_names_the_field_and_the_bounds() {
    let error = crds_error::<Tag>();
    assert_eq!(
        error,
        "CustomResourceDefinition tags.cost.example.com: the schema of Tag v1: .spec.tags: the \
         CEL rule `self.all(t, t.matches('^[a-z]+$'))` has an estimated cost of \
         659710961252, over the API server's limit of 10000000 per rule (\"estimated rule \
         cost exceeds budget by factor of more than 100x\"): it would refuse the CRD; bound \
         what it iterates: #[kbr(max_items = ..)] on .spec.tags, \
         #[kbr(items(max_length = ..))] on .spec.tags"
    );
    assert!(!error.contains('\n'));
}

#[test]
fn the_bounded_rule_builds() {
    let mut scheme = Scheme::new();
    scheme.add::<BoundedTag>();
    assert!(scheme.crds().is_ok());
}

#[test]
fn a_rule_under_an_unbounded_vec_names_the_vec() {
    let error = crds_error::<Server>();
    assert!(
        error.contains(".spec.ports[*]: the CEL rule `self.name.matches('^[a-z]+(-[a-z0-9]+)*$')`"),
        "{error}"
    );
    assert!(
        error.ends_with("bound what it iterates: #[kbr(max_items = ..)] on .spec.ports"),
        "{error}"
    );
}
