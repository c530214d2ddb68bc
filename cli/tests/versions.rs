//! `kbr version`'s constants match what the workspace pins. The check reads the workspace's
//! `Cargo.toml`, so it lives here, in the repository's tests (the kbr package ships without
//! them), not in the crate.

use kbr::commands::version::{K8S_OPENAPI_VERSION, KUBE_VERSION};

#[test]
fn versions_match_the_workspace() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
    let manifest = std::fs::read_to_string(path).expect("the workspace's Cargo.toml");
    assert!(
        manifest.contains(&format!("kube = {{ version = \"{KUBE_VERSION}\"")),
        "update KUBE_VERSION"
    );
    assert!(
        manifest.contains(&format!("kube-core = {{ version = \"{KUBE_VERSION}\"")),
        "kube-core and kube move together"
    );
    assert!(
        manifest.contains(&format!(
            "k8s-openapi = {{ version = \"{K8S_OPENAPI_VERSION}\""
        )),
        "update K8S_OPENAPI_VERSION"
    );
}
