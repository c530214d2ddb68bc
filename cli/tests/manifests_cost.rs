//! `make manifests` refuses a CEL rule kube-apiserver would refuse for its estimated cost, with
//! one line naming the field and the bound to add (issue 26, acceptance 4); with that bound it
//! writes the CRD.
//!
//! Ignored by default (slow: builds a generated project against the workspace runtime). Run it
//! with `cargo test -p kbr --test manifests_cost -- --ignored`.

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::*;

/// The example field of a scaffolded `Tag` spec, which the test puts a field before.
const FOO: &str = "    /// An example field of Tag.";

/// `make manifests` in `dir` with the workspace's target directory and `Cargo.lock`:
/// (success, stderr).
fn make_manifests(dir: &Path) -> (bool, String) {
    let lock = dir.join("Cargo.lock");
    if !lock.exists() {
        let workspace_lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
        fs::copy(&workspace_lock, &lock).expect("copy the workspace's Cargo.lock");
    }
    let out = Command::new("make")
        .args(["--no-print-directory", "manifests"])
        .arg(format!("CARGO={}", env!("CARGO")))
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", workspace_target())
        .env("CARGO_TERM_COLOR", "never")
        .output()
        .expect("make runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Puts `field` (its lines, indented) before the example field of `src/api/cost/v1/tag.rs`.
fn add_field(dir: &Path, field: &str) {
    let path = dir.join("src/api/cost/v1/tag.rs");
    let source = fs::read_to_string(&path).expect("the Tag kind");
    assert!(
        source.contains(FOO),
        "no example field in {}:\n{source}",
        path.display()
    );
    fs::write(&path, source.replacen(FOO, &format!("{field}{FOO}"), 1))
        .expect("write the Tag kind");
}

#[test]
#[ignore = "slow: builds a generated project against the workspace runtime"]
fn manifests_refuses_a_rule_over_an_unbounded_vec_with_one_line() {
    let (_tmp, dir) = empty_dir("costly");
    let runtime = workspace_runtime();
    kbr_ok(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--runtime-path",
            &runtime,
        ],
    );
    assert_eq!(create_api(&dir, ["cost", "v1", "Tag"], &[]).code, 0);
    let rule = r#"#[kbr(validation(rule = "self.all(t, t.matches('^[a-z]+$'))"))]"#;
    let tags = format!(
        "    /// Lower-case tags.\n    {rule}\n    #[serde(default)]\n    pub tags: Vec<String>,\n"
    );
    add_field(&dir, &tags);

    let (success, stderr) = make_manifests(&dir);
    assert!(!success, "make manifests succeeded:\n{stderr}");
    let ours: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("error: "))
        .collect();
    assert_eq!(
        ours,
        [
            "error: cannot build the CRDs: CustomResourceDefinition tags.cost.example.com: the \
             schema of Tag v1: .spec.tags: the CEL rule `self.all(t, t.matches('^[a-z]+$'))` \
             has an estimated cost of 659710961252, over the API server's limit of 10000000 \
             per rule (\"estimated rule cost exceeds budget by factor of more than 100x\"): it \
             would refuse the CRD; bound what it iterates: #[kbr(max_items = ..)] on \
             .spec.tags, #[kbr(items(max_length = ..))] on .spec.tags"
        ],
        "{stderr}"
    );
    // The CI log shows the line (hack/test.sh runs this test with --nocapture).
    println!("make manifests without the bound: {}", ours[0]);

    // With the bounds the error names, the CRD is written.
    let bounded = tags.replace(
        "    #[serde(default)]",
        "    #[kbr(max_items = 16, items(max_length = 63))]\n    #[serde(default)]",
    );
    let path = dir.join("src/api/cost/v1/tag.rs");
    let source = fs::read_to_string(&path).expect("the Tag kind");
    fs::write(&path, source.replace(&tags, &bounded)).expect("write the Tag kind");
    let (success, stderr) = make_manifests(&dir);
    assert!(success, "make manifests failed:\n{stderr}");
    let crd = fs::read_to_string(dir.join("config/crd/bases/cost.example.com_tags.yaml"))
        .expect("the CRD is written");
    assert!(crd.contains("maxItems: 16"), "{crd}");
}
