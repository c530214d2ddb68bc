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

/// Issue 27: `kbr edit --sharding` re-renders only what sharding touches, as `kbr init
/// --sharding` would have scaffolded it, keeping the user's edits; `--sharding=false` goes back.
#[test]
fn edit_sharding_gives_what_init_sharding_gives_and_back() {
    let (_tmp, edited) = broker_project(&[]);
    edit_like_a_user(&edited);
    let unsharded = snapshot(&edited);
    let out = kbr(&edited, &["edit", "--sharding"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        "  updated  PROJECT\n  updated  README.md\n  updated  config/manager/manager.yaml\n  updated  config/rbac/kustomization.yaml\n  added    config/rbac/shard_lease_role.yaml\n  added    config/rbac/shard_lease_role_binding.yaml\n  updated  src/bin/manifests.rs\n  merged   src/controller/eventing/broker.rs\n  updated  src/lib.rs\n  merged   src/main.rs\n  updated  tests/controller/main.rs\nEdited 11 file(s). Next: review the changes, then run make manifests and make test\n"
    );

    // Byte for byte what `kbr init --sharding` scaffolds, plus the user's edits.
    let (_tmp, fresh) = broker_project(&["--sharding"]);
    edit_like_a_user(&fresh);
    assert_eq!(snapshot(&edited), snapshot(&fresh));
    let manager = fs::read_to_string(edited.join("config/manager/manager.yaml")).unwrap();
    assert!(
        manager.contains("replicas: 3")
            && manager.contains("- --sharding\n")
            && !manager.contains("--leader-elect")
            && manager.contains("name: POD_NAME\n          valueFrom:\n            fieldRef:\n              fieldPath: metadata.name\n"),
        "{manager}"
    );
    let lib = fs::read_to_string(edited.join("src/lib.rs")).unwrap();
    assert!(
        lib.contains("    ShardingOptions::kind::<crate::api::eventing::v1alpha1::Broker>,\n"),
        "{lib}"
    );
    // `make manifests` writes the sharder's label patches from the offline manager's wiring.
    let manifests = fs::read_to_string(edited.join("src/bin/manifests.rs")).unwrap();
    assert!(
        manifests.contains("sharding: Some(sharding),"),
        "{manifests}"
    );
    let controller = fs::read_to_string(edited.join("src/controller/eventing/broker.rs")).unwrap();
    assert!(
        controller.contains("Sharded::optional(reconciler, manager.kube_client(), sharding)")
            && controller.contains("fn mine()"),
        "{controller}"
    );
    let tests = fs::read_to_string(edited.join("tests/controller/main.rs")).unwrap();
    assert!(
        tests.contains("async fn three_replicas_form_the_shard_ring()"),
        "{tests}"
    );

    // A kind created afterwards is sharded too.
    assert_eq!(create_api(&edited, KNATIVE_APIS[1], &[]).code, 0);
    let lib = fs::read_to_string(edited.join("src/lib.rs")).unwrap();
    assert!(
        lib.contains("    ShardingOptions::kind::<crate::api::eventing::v1alpha1::Channel>,\n"),
        "{lib}"
    );
    let (_tmp, fresh) = broker_project(&[]);
    assert_eq!(create_api(&fresh, KNATIVE_APIS[1], &[]).code, 0);
    edit_like_a_user(&fresh);
    kbr_ok(&edited, &["edit", "--sharding=false"]);
    assert_eq!(snapshot(&edited), snapshot(&fresh));
    assert_ne!(snapshot(&edited), unsharded);
}

#[test]
fn sharding_and_namespaced_exclude_each_other() {
    let message = "--sharding and --namespaced exclude each other: the sharder assigns the objects of the sharded kinds in every namespace, which a manager with namespaced RBAC cannot read; drop one of them (kbr edit --namespaced=false or --sharding=false)";
    let (_tmp, dir) = empty_dir("op");
    let out = kbr(&dir, &["init", "--sharding", "--namespaced"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.stderr, format!("Error: {message}\n"));
    assert!(snapshot(&dir).is_empty());

    let (_tmp, dir) = broker_project(&["--namespaced"]);
    let before = snapshot(&dir);
    let out = kbr(&dir, &["edit", "--sharding"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        format!("Error: failed to edit the project: {message}\n")
    );
    assert_eq!(snapshot(&dir), before);
}

/// Issue 37: `kbr edit --workflows` gives a project made before kbr wrote CI workflows the ones
/// `kbr init` writes now, and keeps a workflow the user wrote under one of their names.
#[test]
fn edit_workflows_adds_the_ci_workflows_to_an_older_project() {
    let (_tmp, fresh) = broker_project(&[]);
    let (_tmp, old) = broker_project(&[]);
    fs::remove_dir_all(old.join(".github")).unwrap();
    let out = kbr(&old, &["edit", "--workflows"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        "  added    .github/workflows/lint.yml\n  added    .github/workflows/test-e2e.yml\n  added    .github/workflows/test.yml\nEdited 3 file(s). Next: review the changes, then run make manifests and make test\n"
    );
    assert_eq!(snapshot(&old), snapshot(&fresh));

    // A lint workflow of the user's own survives (merged over an empty base: conflict markers
    // around both versions, exit code 1), the missing ones are added.
    fs::remove_dir_all(old.join(".github/workflows")).unwrap();
    fs::create_dir_all(old.join(".github/workflows")).unwrap();
    fs::write(old.join(".github/workflows/lint.yml"), "name: Mine\n").unwrap();
    let out = kbr(&old, &["edit", "--workflows"]);
    assert_eq!(out.code, 1, "{out:?}");
    let lint = fs::read_to_string(old.join(".github/workflows/lint.yml")).unwrap();
    assert!(
        lint.contains("name: Mine") && lint.contains("make lint"),
        "{lint}"
    );
    assert!(old.join(".github/workflows/test.yml").is_file());
}

/// Issue 37: `kbr edit --plugins grafana,autoupdate` gives what `kbr init --plugins` gives, and
/// run again after the user listed metrics in `grafana/custom-metrics/config.yaml`, renders
/// their dashboard.
#[test]
fn edit_plugins_gives_what_init_plugins_gives_and_renders_custom_metrics() {
    let (_tmp, edited) = broker_project(&[]);
    edit_like_a_user(&edited);
    let out = kbr(&edited, &["edit", "--plugins", "grafana,autoupdate"]);
    assert_eq!(out.code, 0, "{out:?}");
    let (_tmp, fresh) = broker_project(&["--plugins", "autoupdate,grafana"]);
    edit_like_a_user(&fresh);
    assert_eq!(snapshot(&edited), snapshot(&fresh));
    let project = fs::read_to_string(edited.join("PROJECT")).unwrap();
    assert!(
        project.contains(
            "plugins:\n  autoupdate.kbr.dev/v1-alpha: {}\n  grafana.kbr.dev/v1-alpha: {}\n"
        ),
        "{project}"
    );

    let config = edited.join("grafana/custom-metrics/config.yaml");
    let text = fs::read_to_string(&config).unwrap();
    let text = text.replace(
        "customMetrics: []",
        "customMetrics:\n- metric: brokers_ready\n  type: gauge",
    );
    fs::write(&config, text).unwrap();
    let out = kbr(&edited, &["edit", "--plugins", "grafana"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("added    grafana/custom-metrics/custom-metrics-dashboard.json"),
        "{out:?}"
    );
    let dashboard =
        fs::read_to_string(edited.join("grafana/custom-metrics/custom-metrics-dashboard.json"))
            .unwrap();
    assert!(
        dashboard.contains(r#""expr": "brokers_ready{job=\"$job\", namespace=\"$namespace\"}""#),
        "{dashboard}"
    );
}
