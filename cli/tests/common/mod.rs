//! Helpers for the end-to-end tests: run the built `kbr` binary in a temporary directory and
//! snapshot the tree around it.

#![allow(dead_code)] // each test crate uses a subset

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `SOURCE_DATE_EPOCH` for every run: 2026-01-01T00:00:00Z, so headers say 2026.
pub const EPOCH: &str = "1767225600";

/// What a `kbr` run did.
#[derive(Debug)]
pub struct Output {
    /// The exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs `kbr args` in `dir`.
pub fn kbr(dir: &Path, args: &[&str]) -> Output {
    kbr_with(dir, args, &[])
}

/// Runs `kbr args` in `dir` with the environment variables `envs` set too.
pub fn kbr_with(dir: &Path, args: &[&str], envs: &[(&str, &std::ffi::OsStr)]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_kbr"))
        .args(args)
        .current_dir(dir)
        .env("SOURCE_DATE_EPOCH", EPOCH)
        .env_remove("RUST_BACKTRACE")
        .envs(envs.iter().copied())
        .output()
        .expect("kbr runs");
    Output {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Runs `kbr args` in `dir` and asserts success.
pub fn kbr_ok(dir: &Path, args: &[&str]) -> Output {
    let out = kbr(dir, args);
    assert_eq!(out.code, 0, "kbr {args:?} failed: {}", out.stderr);
    out
}

/// Every file and directory under `root` with file contents (`None` for directories).
pub fn snapshot(root: &Path) -> BTreeMap<String, Option<String>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Option<String>>) {
        for entry in fs::read_dir(dir).expect("readable dir") {
            let path = entry.expect("dir entry").path();
            let rel = path
                .strip_prefix(root)
                .expect("under root")
                .display()
                .to_string();
            if path.is_dir() {
                out.insert(rel, None);
                walk(root, &path, out);
            } else {
                let bytes = fs::read(&path).expect("readable file");
                out.insert(rel, Some(String::from_utf8_lossy(&bytes).into_owned()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Runs `kbr args` in `dir`, expecting the one-line error `Error: <message>`, exit code 1 and
/// no change to the tree.
pub fn assert_fails(dir: &Path, args: &[&str], message: &str) {
    let before = snapshot(dir);
    let out = kbr(dir, args);
    assert_eq!(out.code, 1, "kbr {args:?}: {out:?}");
    assert_eq!(out.stderr, format!("Error: {message}\n"), "kbr {args:?}");
    assert_eq!(out.stdout, "", "kbr {args:?}");
    assert_eq!(snapshot(dir), before, "kbr {args:?} changed the tree");
}

/// A new empty project directory named `name` inside a temp dir (kept alive by the guard).
pub fn empty_dir(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join(name);
    fs::create_dir(&dir).expect("project dir");
    (tmp, dir)
}

/// The runtime source of this workspace, for `--runtime-path`.
pub fn workspace_runtime() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../runtime")
        .canonicalize()
        .expect("runtime dir")
        .display()
        .to_string()
}

/// The workspace's target directory, shared with generated projects so dependencies build once.
pub fn workspace_target() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target")
}

/// Runs `cargo <args>` in the generated project `dir` with the workspace's target directory and,
/// unless the project has one, the workspace's `Cargo.lock`: the project then builds the very
/// dependency versions the workspace built (no resolution against the registry, nothing built
/// twice). Panics when cargo fails.
pub fn cargo_in(dir: &Path, args: &[&str]) {
    let lock = dir.join("Cargo.lock");
    if !lock.exists() {
        let workspace_lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
        fs::copy(&workspace_lock, &lock).expect("copy the workspace's Cargo.lock");
    }
    let status = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", workspace_target())
        .status()
        .unwrap_or_else(|e| panic!("cargo: {e}"));
    assert!(
        status.success(),
        "cargo {args:?} failed in {}",
        dir.display()
    );
}

/// `kbr init` for knative-lite in a fresh directory, depending on crates.io kbr-runtime 0.1.0.
pub fn init_knative() -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = empty_dir("knative-lite");
    kbr_ok(
        &dir,
        &[
            "init",
            "--domain",
            "knative.dev",
            "--project-name",
            "knative-lite",
            "--runtime-version",
            "0.1.0",
        ],
    );
    (tmp, dir)
}

/// The three `create api` commands of the knative example.
pub const KNATIVE_APIS: [[&str; 3]; 3] = [
    ["eventing", "v1alpha1", "Broker"],
    ["eventing", "v1alpha1", "Channel"],
    ["serving", "v1alpha1", "Service"],
];

/// `kbr create api --group g --version v --kind k` plus `extra`.
pub fn create_api(dir: &Path, [group, version, kind]: [&str; 3], extra: &[&str]) -> Output {
    let mut args = vec![
        "create",
        "api",
        "--group",
        group,
        "--version",
        version,
        "--kind",
        kind,
    ];
    args.extend_from_slice(extra);
    kbr(dir, &args)
}

/// Kinds named like items the generated code uses, Rust keywords, or other locals: each must
/// still produce code that compiles, lints and formats cleanly.
pub const TRICKY_KINDS: &[&str] = &[
    "Option",
    "Result",
    "Box",
    "Vec",
    "String",
    "Service",
    "Type",
    "Condition",
    "Error",
    "Client",
    "Action",
    "Controller",
    "Manager",
    "Serialize",
    "Deserialize",
    "JsonSchema",
    "CustomResource",
    "Default",
    "Clone",
    "Arc",
    "Scheme",
    "Reconciler",
    "Rbac",
    "Crate",
    "Super",
    "Match",
    "Gen",
    "Env",
    "Foo",
    "Some",
    "None",
    "Ok",
    "Err",
    "Send",
    "Sync",
    "Future",
    "I64",
    "Metav1",
    "Main",
    // What a sharded project imports (`init --sharding`).
    "Sharding",
    "Sharded",
    "ShardingOptions",
    "Timestamp",
    "Duration",
];

/// A kind as long as generated code stays rustfmt-clean for with version `v2alpha1`: 52
/// characters (see `Layout::test_new_one_line`).
pub const LONGEST_KIND: &str = "ClusterNetworkAdmissionPolicyBindingConfigurationSet";

/// A project with every kind of [`TRICKY_KINDS`] in group `things`, plus groups and kinds whose
/// modules need care (`match`, `crate`, `api`, `controller`, a kind named like its group).
pub fn tricky_project(runtime: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = empty_dir("tricky");
    let mut init = vec!["init", "--domain", "example.com"];
    init.extend_from_slice(runtime);
    kbr_ok(&dir, &init);
    for kind in TRICKY_KINDS {
        let out = create_api(&dir, ["things", "v1", kind], &[]);
        assert_eq!(out.code, 0, "{kind}: {}", out.stderr);
    }
    for (api, extra) in [
        (["match", "v1", "Thing"], &[][..]),
        (["crate", "v2", "V2"], &[]),
        (["api", "v1", "Api"], &[]),
        (["controller", "v1", "Controller"], &["--namespaced=false"]),
        (["cache", "v1beta1", "Cache"], &[]),
        (["a-b.c", "v10", "Long"], &["--controller=false"]),
        (["a-b.c", "v10", "Long"], &["--resource=false"]),
        // Built-in kinds: `core` as a module name, and a Service beside `things`' own.
        (["core", "v1", "Service"], &["--resource=false"]),
        (["rbac.authorization", "v1", "Role"], &["--resource=false"]),
        (["eventing", "v1alpha1", "ClusterChannelProvisioner"], &[]),
        (
            [
                "eventing",
                "v1beta12",
                "ValidatingAdmissionPolicyBindingConfiguration",
            ],
            &[],
        ),
        (
            [
                "networking-configuration.policies",
                "v2alpha1",
                LONGEST_KIND,
            ],
            &[],
        ),
    ] {
        let out = create_api(&dir, api, extra);
        assert_eq!(out.code, 0, "{api:?}: {}", out.stderr);
    }
    (tmp, dir)
}
