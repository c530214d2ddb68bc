//! `kbr edit`: a project-wide setting changed after `kbr init`, end to end through the binary.

mod common;

use std::fs;
use std::path::Path;

use common::{KNATIVE_APIS, create_api, empty_dir, kbr, kbr_ok, snapshot};

/// The user's edits applied to a project: a function in the Broker controller and a line at the
/// end of `src/main.rs`.
fn edit_like_a_user(dir: &Path) {
    let controller = dir.join("src/controller/eventing/broker.rs");
    let code = fs::read_to_string(&controller).unwrap();
    fs::write(&controller, format!("{code}\n/// Mine.\nfn mine() {{}}\n")).unwrap();
    let main = dir.join("src/main.rs");
    let code = fs::read_to_string(&main).unwrap();
    fs::write(&main, format!("{code}// Mine too.\n")).unwrap();
}

/// knative-lite with the Broker API, initialized with `init_flags`.
fn broker_project(init_flags: &[&str]) -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, dir) = empty_dir("knative-lite");
    let mut args = vec!["init", "--domain", "knative.dev", "--owner", "Knative"];
    args.extend_from_slice(init_flags);
    kbr_ok(&dir, &args);
    assert_eq!(create_api(&dir, KNATIVE_APIS[0], &[]).code, 0);
    (tmp, dir)
}

#[test]
fn edit_namespaced_gives_what_init_namespaced_gives_and_keeps_user_edits() {
    let (_tmp, edited) = broker_project(&[]);
    edit_like_a_user(&edited);
    let out = kbr(&edited, &["edit", "--namespaced"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        "  updated  PROJECT\n  updated  config/manager/manager.yaml\n  updated  config/rbac/role.yaml\n  updated  config/rbac/role_binding.yaml\n  merged   src/main.rs\nEdited 5 file(s). Next: review the changes, then run make manifests and make test\n"
    );

    // Byte for byte what `kbr init --namespaced` scaffolds, plus the user's edits.
    let (_tmp, fresh) = broker_project(&["--namespaced"]);
    edit_like_a_user(&fresh);
    assert_eq!(snapshot(&edited), snapshot(&fresh));
    let main = fs::read_to_string(edited.join("src/main.rs")).unwrap();
    assert!(main.contains("watch_namespaces_from_env()"), "{main}");
    let binding = fs::read_to_string(edited.join("config/rbac/role_binding.yaml")).unwrap();
    assert!(binding.contains("kind: RoleBinding"), "{binding}");
}

#[test]
fn edit_owner_rewrites_the_headers_only() {
    let (_tmp, dir) = broker_project(&[]);
    edit_like_a_user(&dir);
    kbr_ok(&dir, &["edit", "--owner", "The Knative Authors"]);
    let (_tmp, fresh) = empty_dir("knative-lite");
    kbr_ok(
        &fresh,
        &[
            "init",
            "--domain",
            "knative.dev",
            "--owner",
            "The Knative Authors",
        ],
    );
    assert_eq!(create_api(&fresh, KNATIVE_APIS[0], &[]).code, 0);
    edit_like_a_user(&fresh);
    assert_eq!(snapshot(&dir), snapshot(&fresh));
}

#[test]
fn edit_needs_a_setting() {
    let (_tmp, dir) = broker_project(&[]);
    let before = snapshot(&dir);
    let out = kbr(&dir, &["edit"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("--namespaced") && out.stderr.contains("--owner"),
        "{out:?}"
    );
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn edits_overlapping_the_change_are_left_with_markers_and_exit_1() {
    let (_tmp, dir) = broker_project(&[]);
    let binding = dir.join("config/rbac/role_binding.yaml");
    fs::write(&binding, "# all mine\n").unwrap();
    let out = kbr(&dir, &["edit", "--namespaced"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stdout
            .contains("  conflict config/rbac/role_binding.yaml: resolve the conflict markers\n"),
        "{out:?}"
    );
    assert_eq!(
        out.stderr,
        "Error: the edit left 1 file(s) to resolve: config/rbac/role_binding.yaml; fix them (conflict markers: ours = your project, original = the scaffold before the edit, theirs = after), then run make manifests\n"
    );
    let text = fs::read_to_string(&binding).unwrap();
    assert!(
        text.contains("<<<<<<< ours\n# all mine\n") && text.contains("kind: RoleBinding"),
        "{text}"
    );
    // The rest is edited.
    let main = fs::read_to_string(dir.join("src/main.rs")).unwrap();
    assert!(main.contains("watch_namespaces_from_env()"), "{main}");
}
