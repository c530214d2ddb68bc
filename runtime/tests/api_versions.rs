//! Several versions of one kind: one CRD, versions in priority order, one storage version.

use kbr_runtime::Scheme;
use kbr_runtime::crd::CustomResourceExt as _;
use kbr_runtime::crd::{self, CrdError};
use kbr_runtime::scheme::SchemeError;

macro_rules! widget_version {
    ($module:ident, $version:literal $(, $extra:meta)*) => {
        pub mod $module {
            use kbr_runtime::CustomResource;

            /// WidgetSpec defines the desired state of Widget.
            #[derive(CustomResource, Clone, Debug, Default, ::serde::Serialize, ::serde::Deserialize, ::schemars::JsonSchema)]
            #[kbr(group = "toys.example.com", version = $version, kind = "Widget", plural = "widgets", namespaced)]
            $(#[kbr($extra)])*
            pub struct WidgetSpec {
                /// Size of the widget.
                #[serde(default)]
                pub size: i32,
            }
        }
    };
}

widget_version!(v1, "v1");
widget_version!(v1beta1, "v1beta1", storage = false, shortname = "wb");
widget_version!(
    v1alpha1,
    "v1alpha1",
    storage = false,
    deprecated = "use toys.example.com/v1"
);
widget_version!(v2alpha1, "v2alpha1", storage = false, served = false);
widget_version!(v1alpha2_stored, "v1alpha2");

/// Another kind under the same CRD name, to provoke a mismatch.
pub mod gadget {
    use kbr_runtime::CustomResource;

    /// GadgetSpec defines the desired state of Gadget.
    #[derive(
        CustomResource,
        Clone,
        Debug,
        Default,
        ::serde::Serialize,
        ::serde::Deserialize,
        ::schemars::JsonSchema,
    )]
    #[kbr(
        group = "toys.example.com",
        version = "v1beta2",
        kind = "Gadget",
        plural = "widgets",
        storage = false
    )]
    pub struct GadgetSpec {}
}

/// A second Rust type claiming `toys.example.com/v1 Widget`.
pub mod duplicate {
    use kbr_runtime::CustomResource;

    /// WidgetSpec defines the desired state of Widget.
    #[derive(
        CustomResource,
        Clone,
        Debug,
        Default,
        ::serde::Serialize,
        ::serde::Deserialize,
        ::schemars::JsonSchema,
    )]
    #[kbr(
        group = "toys.example.com",
        version = "v1",
        kind = "Widget",
        plural = "widgets",
        namespaced
    )]
    pub struct WidgetSpec {}
}

fn version_names(
    crd: &kbr_runtime::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
) -> Vec<&str> {
    crd.spec.versions.iter().map(|v| v.name.as_str()).collect()
}

#[test]
fn scheme_merges_versions_in_priority_order() {
    let mut scheme = Scheme::new();
    scheme
        .add::<v1alpha1::Widget>()
        .add::<v2alpha1::Widget>()
        .add::<v1::Widget>()
        .add::<v1beta1::Widget>();
    let order: Vec<&str> = scheme
        .versions_of("toys.example.com", "Widget")
        .map(|r| r.info().version)
        .collect();
    assert_eq!(order, ["v1", "v1beta1", "v2alpha1", "v1alpha1"]);

    let stored = scheme
        .storage_version("toys.example.com", "Widget")
        .map(|r| r.info().version);
    assert_eq!(stored, Some("v1"));
    assert!(
        scheme
            .storage_version("toys.example.com", "Gadget")
            .is_none()
    );

    let crds = scheme.crds().unwrap();
    assert_eq!(crds.len(), 1);
    let crd = &crds[0];
    kbr_runtime::crd::check_crd(crd).unwrap();
    assert_eq!(
        crd.metadata.name.as_deref(),
        Some("widgets.toys.example.com")
    );
    assert_eq!(
        version_names(crd),
        ["v1", "v1beta1", "v2alpha1", "v1alpha1"]
    );
    let storage: Vec<&str> = crd
        .spec
        .versions
        .iter()
        .filter(|v| v.storage)
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(storage, ["v1"]);
    assert!(!crd.spec.versions[2].served);
    assert_eq!(
        crd.spec.versions[3].deprecation_warning.as_deref(),
        Some("use toys.example.com/v1")
    );
    // Names come from the storage version's CRD, not from v1beta1's short name.
    assert_eq!(crd.spec.names.short_names, None);
}

#[test]
fn merge_is_independent_of_input_order() {
    let forward = crd::merge(vec![
        v1::Widget::crd(),
        v1beta1::Widget::crd(),
        v1alpha1::Widget::crd(),
    ])
    .unwrap();
    let backward = crd::merge(vec![
        v1alpha1::Widget::crd(),
        v1beta1::Widget::crd(),
        v1::Widget::crd(),
    ])
    .unwrap();
    assert_eq!(forward, backward);
    assert_eq!(version_names(&forward), ["v1", "v1beta1", "v1alpha1"]);
}

#[test]
fn two_storage_versions_are_an_error_naming_both() {
    let mut scheme = Scheme::new();
    scheme.add::<v1::Widget>().add::<v1alpha2_stored::Widget>();
    let error = scheme.crds().unwrap_err();
    let SchemeError::Crd { crd, source } = &error else {
        panic!("unexpected error: {error:?}")
    };
    assert_eq!(crd, "widgets.toys.example.com");
    match source.as_ref() {
        CrdError::MultipleStorageVersions { first, second, .. } => {
            assert_eq!((first.as_str(), second.as_str()), ("v1", "v1alpha2"));
        }
        other => panic!("unexpected error: {other:?}"),
    }
    let message = error.to_string();
    assert!(
        message.contains("v1 and v1alpha2") && message.contains("storage = false"),
        "{message}"
    );
}

#[test]
fn no_storage_version_is_an_error() {
    let error = crd::merge(vec![v1beta1::Widget::crd(), v1alpha1::Widget::crd()]).unwrap_err();
    assert!(
        matches!(&error, CrdError::NoStorageVersion { versions, .. } if versions == "v1beta1, v1alpha1"),
        "{error:?}"
    );
}

#[test]
fn mismatched_kinds_and_duplicates_are_errors() {
    let error = crd::merge(vec![v1::Widget::crd(), gadget::Gadget::crd()]).unwrap_err();
    assert!(
        matches!(&error, CrdError::Mismatch { field: "kind", .. }),
        "{error:?}"
    );
    let error = crd::merge(vec![v1::Widget::crd(), v1::Widget::crd()]).unwrap_err();
    assert!(
        matches!(&error, CrdError::DuplicateVersion { version, .. } if version == "v1"),
        "{error:?}"
    );
    assert!(matches!(
        crd::merge(Vec::new()),
        Err(CrdError::NothingToMerge)
    ));
}

#[test]
fn two_types_for_one_gvk_conflict() {
    let mut scheme = Scheme::new();
    scheme.add::<v1::Widget>().add::<duplicate::Widget>();
    assert_eq!(scheme.len(), 1, "the first registration wins");
    assert!(scheme.contains::<v1::Widget>() && !scheme.contains::<duplicate::Widget>());
    let error = scheme.crds().unwrap_err();
    assert!(
        matches!(&error, SchemeError::Conflict { gvk, .. } if gvk == "toys.example.com/v1, Kind=Widget"),
        "{error:?}"
    );
    let mut other = Scheme::new();
    other.extend(&scheme);
    assert!(other.crds().is_err(), "conflicts travel with extend");
}

/// kbr orders versions with kbr-core's grammar (apimachinery's `CompareKubeAwareVersionStrings`,
/// what kube-apiserver sorts CRD and discovery versions by); kube-core has its own
/// (`Version::priority`). On this table they agree on every pair except where kube-core
/// accepts what the API server does not: `v<N>alpha`/`v<N>beta` without a number (kube-core:
/// alpha/beta; apimachinery: not kube-like) and numbers beyond `u32` (kube-core: not
/// kube-like; apimachinery: any Go `int`). Any other disagreement fails here.
#[test]
fn version_priority_agrees_with_kube_core_where_kube_core_follows_the_api_server() {
    use kube::core::Version;
    use std::cmp::Ordering;

    let table = [
        "v1",
        "v2",
        "v10",
        "v01",
        "v1beta1",
        "v1beta2",
        "v2beta1",
        "v10beta3",
        "v1alpha1",
        "v1alpha2",
        "v11alpha2",
        "v12alpha1",
        "v3beta1",
        "foo",
        "foo1",
        "foo10",
        "bar",
        "V1",
        "v",
        "vbeta1",
        "v1gamma1",
        "v1beta1x",
        "1",
        "",
    ];
    let kube_core_only = ["v1beta", "v2alpha", "v4294967296", "v1beta4294967296"];
    let kube_core = |a: &str, b: &str| {
        Version::parse(a)
            .priority()
            .cmp(&Version::parse(b).priority())
    };
    let mut disagreements = Vec::new();
    for a in table.iter().chain(&kube_core_only) {
        for b in table.iter().chain(&kube_core_only) {
            let ours = crd::compare_versions(a, b);
            if ours != kube_core(a, b) {
                disagreements.push((*a, *b));
            }
        }
    }
    assert!(
        disagreements
            .iter()
            .all(|(a, b)| kube_core_only.contains(a) || kube_core_only.contains(b)),
        "{disagreements:?}"
    );
    for odd in kube_core_only {
        assert!(
            disagreements.iter().any(|(a, b)| *a == odd || *b == odd),
            "kube-core now agrees on {odd}: drop it from the exceptions"
        );
    }
    assert_eq!(
        crd::compare_versions("v1alpha1", "v1beta"),
        Ordering::Greater
    );
    assert_eq!(kube_core("v1alpha1", "v1beta"), Ordering::Less);
}
