//! Bad input a new user typed (the table of the daily-loop issue): each is refused with one line
//! naming the value and the fix, exit code 1, and the tree left as it was.

mod common;

use std::fs;
use std::path::PathBuf;

use common::{KNATIVE_APIS, assert_fails, create_api, empty_dir, init_knative, kbr, kbr_ok};

#[test]
fn init_refuses_a_runtime_version_that_is_not_a_version_requirement() {
    let (_tmp, dir) = empty_dir("op");
    assert_fails(
        &dir,
        &["init", "--runtime-version", "not-a-version"],
        "invalid runtime version \"not-a-version\": pass a crates.io version requirement, e.g. --runtime-version 0.1.0",
    );
    // Cargo's requirement grammar is accepted as Cargo reads it.
    kbr_ok(&dir, &["init", "--runtime-version", ">=0.1, <0.3"]);
    let manifest = fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("\">=0.1, <0.3\""), "{manifest}");
}

#[test]
fn init_refuses_a_directory_with_unknown_files() {
    let (_tmp, dir) = empty_dir("op");
    fs::write(dir.join("notes.txt"), "mine").unwrap();
    assert_fails(
        &dir,
        &["init"],
        "target directory is not empty: found \"notes.txt\"; run kbr init in an empty directory (only hidden files, *.md files and capitalized files such as LICENSE may be there)",
    );
}

#[test]
fn init_allows_what_kubebuilder_allows() {
    let (_tmp, dir) = empty_dir("op");
    fs::create_dir_all(dir.join(".git/objects")).unwrap();
    fs::write(dir.join(".git/objects/x"), "git").unwrap();
    fs::write(dir.join(".gitignore"), "/target\n").unwrap();
    fs::write(dir.join("NOTES.md"), "# notes").unwrap();
    fs::write(dir.join("LICENSE"), "Apache").unwrap();
    fs::write(dir.join("README.md"), "# op").unwrap();
    kbr_ok(&dir, &["init"]);
    assert_eq!(fs::read_to_string(dir.join("LICENSE")).unwrap(), "Apache");
    // The user's own files are kept, not replaced by the scaffold's.
    assert_eq!(
        fs::read_to_string(dir.join(".gitignore")).unwrap(),
        "/target\n"
    );
    assert_eq!(fs::read_to_string(dir.join("README.md")).unwrap(), "# op");
    assert!(dir.join("src/main.rs").is_file());
}

#[test]
fn init_refuses_a_go_project() {
    let (_tmp, dir) = empty_dir("op");
    fs::write(dir.join("go.mod"), "module example.com/op\n").unwrap();
    fs::create_dir(dir.join("cmd")).unwrap();
    fs::write(dir.join("cmd/main.go"), "package main\n").unwrap();
    assert_fails(
        &dir,
        &["init"],
        "target directory holds a Go project: found \"cmd/main.go\"; kbr scaffolds a Rust project, run kbr init in a new directory",
    );
}

#[test]
fn values_starting_with_a_hyphen_are_validated_not_taken_for_flags() {
    let (_tmp, dir) = empty_dir("op");
    assert_fails(
        &dir,
        &["init", "--domain", "-x.com"],
        "invalid domain \"-x.com\": a domain must be a lower-case DNS-1123 subdomain (dot-separated labels of a-z, 0-9 and '-', each starting and ending with a letter or digit); pass e.g. --domain example.com",
    );
    let (_tmp, dir) = init_knative();
    let out = kbr(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "-a",
            "--version",
            "v1",
            "--kind",
            "A",
        ],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .starts_with("Error: failed to create API: invalid group \"-a\": "),
        "{out:?}"
    );
    assert_eq!(out.stderr.lines().count(), 1, "{out:?}");
}

#[test]
fn a_file_where_a_directory_belongs_is_named() {
    let (_tmp, dir) = init_knative();
    fs::remove_dir_all(dir.join("src/api")).unwrap();
    fs::write(dir.join("src/api"), "not a directory").unwrap();
    assert_fails(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "eventing",
            "--version",
            "v1alpha1",
            "--kind",
            "Broker",
        ],
        "failed to create API: cannot write src/api/mod.rs: src/api is a file, not a directory; move it out of the way",
    );
}

#[test]
fn a_project_file_of_random_bytes_names_the_fix() {
    let (_tmp, dir) = init_knative();
    fs::write(dir.join("PROJECT"), [0xff, 0xfe, 0x00, 0x9c, 0x80]).unwrap();
    let project = dir.join("PROJECT").display().to_string();
    assert_fails(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "a",
            "--version",
            "v1",
            "--kind",
            "A",
        ],
        &format!(
            "failed to create API: cannot parse {project}: the file is not UTF-8 text; fix the file or restore it from version control"
        ),
    );
}

#[test]
fn a_kubebuilder_go_project_file_is_named_for_what_it_is() {
    let (_tmp, dir) = empty_dir("op");
    // What `kubebuilder init` writes (pkg/config/v3), without kbr's keys.
    fs::write(
        dir.join("PROJECT"),
        "domain: example.com\nlayout:\n- go.kubebuilder.io/v4\nprojectName: op\nrepo: example.com/op\nversion: \"3\"\n",
    )
    .unwrap();
    fs::write(dir.join("Cargo.toml"), "").unwrap();
    let project = dir.join("PROJECT").display().to_string();
    assert_fails(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "a",
            "--version",
            "v1",
            "--kind",
            "A",
        ],
        &format!(
            "failed to create API: {project} has layout \"go.kubebuilder.io/v4\", not kbr's \"kbr.dev/v1alpha1\" (a Kubebuilder Go project); run kbr in a project made by kbr init"
        ),
    );
}

#[test]
fn a_foreign_layout_in_a_kbr_project_file_is_refused() {
    let (_tmp, dir) = init_knative();
    let path = dir.join("PROJECT");
    let text = fs::read_to_string(&path).unwrap();
    fs::write(
        &path,
        text.replace("kbr.dev/v1alpha1", "go.kubebuilder.io/v4"),
    )
    .unwrap();
    let out = kbr(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "a",
            "--version",
            "v1",
            "--kind",
            "A",
        ],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("has layout \"go.kubebuilder.io/v4\", not kbr's \"kbr.dev/v1alpha1\""),
        "{out:?}"
    );
}

#[test]
fn an_unparsable_cargo_toml_stops_create_before_anything_is_written() {
    let (_tmp, dir) = init_knative();
    let manifest = dir.join("Cargo.toml");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(&manifest, format!("{text}\n[dependencies\n")).unwrap();
    let before = common::snapshot(&dir);
    let [group, version, kind] = KNATIVE_APIS[0];
    let out = create_api(&dir, [group, version, kind], &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.starts_with(&format!(
            "Error: failed to create API: cannot parse {}: ",
            manifest.display()
        )),
        "{out:?}"
    );
    assert!(
        out.stderr
            .ends_with("; fix the file (cargo build points at the line) and run kbr again\n"),
        "{out:?}"
    );
    assert_eq!(out.stderr.lines().count(), 1, "{out:?}");
    assert_eq!(common::snapshot(&dir), before);
}

#[test]
fn create_api_for_a_built_in_kind_without_resource_false_is_refused() {
    let (_tmp, dir) = init_knative();
    assert_fails(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "apps",
            "--version",
            "v1",
            "--kind",
            "Deployment",
        ],
        "failed to create API: --kind Deployment with --group apps is the built-in kind apps/v1, Kind=Deployment; pass --resource=false to scaffold a controller for it, or choose another --group or --kind for an API of your own",
    );
    assert_fails(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Service",
        ],
        "failed to create API: --kind Service with --group core is the built-in kind v1, Kind=Service; pass --resource=false to scaffold a controller for it, or choose another --group or --kind for an API of your own",
    );
}

/// The kind of the webhook tests, its webhook file, and `create webhook` for it.
const CHANNEL: [&str; 3] = KNATIVE_APIS[1];
const CHANNEL_WEBHOOK: &str = "src/webhook/eventing/v1alpha1/channel.rs";

/// knative-lite with the Channel API and its defaulting webhook.
fn channel_with_defaulting() -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = init_knative();
    assert_eq!(create_api(&dir, CHANNEL, &[]).code, 0);
    kbr_ok(&dir, &webhook_args("--defaulting", false));
    (tmp, dir)
}

/// `kbr create webhook` for the Channel with `flag` (and `--force`).
fn webhook_args(flag: &'static str, force: bool) -> Vec<&'static str> {
    let [group, version, kind] = CHANNEL;
    let mut args = vec![
        "create",
        "webhook",
        "--group",
        group,
        "--version",
        version,
        "--kind",
        kind,
        flag,
    ];
    if force {
        args.push("--force");
    }
    args
}

/// `create webhook --programmatic-validation` after `--defaulting` re-renders the kind's
/// webhook file with both: unedited, it is replaced without `--force`.
#[test]
fn a_second_webhook_type_replaces_an_unedited_webhook_file() {
    let (_tmp, dir) = channel_with_defaulting();
    let scaffolded = fs::read_to_string(dir.join(CHANNEL_WEBHOOK)).unwrap();
    let out = kbr(&dir, &webhook_args("--programmatic-validation", false));
    assert_eq!(out.code, 0, "{out:?}");
    let both = fs::read_to_string(dir.join(CHANNEL_WEBHOOK)).unwrap();
    assert_ne!(both, scaffolded);
    assert!(both.contains("validate"), "{both}");
}

/// Edited, the webhook file is refused without `--force` and merged with it: the user's
/// defaulting code is kept, never silently dropped.
#[test]
fn a_second_webhook_type_keeps_the_users_webhook_code() {
    let (_tmp, reference) = channel_with_defaulting();
    kbr_ok(
        &reference,
        &webhook_args("--programmatic-validation", false),
    );
    let both = fs::read_to_string(reference.join(CHANNEL_WEBHOOK)).unwrap();

    let (_tmp, dir) = channel_with_defaulting();
    let file = dir.join(CHANNEL_WEBHOOK);
    let addition = "\n// the user's own helper\nfn my_default() {}\n";
    let edited = format!("{}{addition}", fs::read_to_string(&file).unwrap());
    fs::write(&file, &edited).unwrap();
    assert_fails(
        &dir,
        &webhook_args("--programmatic-validation", false),
        &format!(
            "failed to create webhook: file {CHANNEL_WEBHOOK} already exists; you edited it: pass --force to merge the new scaffold into your edits"
        ),
    );

    let out = kbr(&dir, &webhook_args("--programmatic-validation", true));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains(&format!(
            "updated {CHANNEL_WEBHOOK}\nupdated tests/webhook/channel.rs\n"
        )) && out.stdout.contains(&format!(
            "\nkept your edits in {CHANNEL_WEBHOOK} (3-way merge with the new scaffold): review it\n"
        )),
        "{out:?}"
    );
    let merged = fs::read_to_string(&file).unwrap();
    assert_eq!(merged, format!("{both}{addition}"));
}

#[test]
fn force_refuses_to_merge_overlapping_edits() {
    let (_tmp, dir) = channel_with_defaulting();
    // Replace the whole file: every line the new scaffold changes is the user's too.
    fs::write(dir.join(CHANNEL_WEBHOOK), "// all mine\n").unwrap();
    assert_fails(
        &dir,
        &webhook_args("--programmatic-validation", true),
        &format!(
            "failed to create webhook: --force cannot keep your edits to {CHANNEL_WEBHOOK}: they change the same lines as the new scaffold; nothing was written: move your code out of {CHANNEL_WEBHOOK}, run the command again and add it back"
        ),
    );
}

/// Issue 37: the deploy-image plugin's flags are checked before anything is written.
#[test]
fn create_api_image_refuses_what_the_plugin_cannot_scaffold() {
    let (_tmp, dir) = init_knative();
    let api = |rest: &[&'static str]| -> Vec<&'static str> {
        let mut args = vec!["create", "api", "--group", "cache", "--version", "v1alpha1"];
        args.extend_from_slice(&["--kind", "Memcached"]);
        args.extend_from_slice(rest);
        args
    };
    for (rest, message) in [
        (
            &["--image", "memcached:1.6", "--namespaced=false"][..],
            "failed to create API: --image needs a namespaced kind (its Deployment lives in the object's namespace); drop --namespaced=false",
        ),
        (
            &["--image", "memcached:1.6", "--controller=false"],
            "failed to create API: --image scaffolds the API type and its controller together; drop --resource=false and --controller=false",
        ),
        (
            &["--image", "memcached 1.6"],
            "failed to create API: --image needs an image reference without spaces, e.g. memcached:1.6.26-alpine3.19",
        ),
        (
            &[
                "--image",
                "memcached:1.6",
                "--image-container-command",
                "memcached,,-v",
            ],
            "failed to create API: --image --image-container-command takes comma-separated words without spaces or empty parts, e.g. memcached,--memory-limit=64,-o,modern,-v",
        ),
        (
            &["--image", "memcached:1.6", "--image-container-port", "0"],
            "failed to create API: --image --image-container-port must be a port from 1 to 65535",
        ),
    ] {
        assert_fails(&dir, &api(rest), message);
    }
    // The image's own flags need --image (clap's usage error, exit code 2).
    let out = kbr(&dir, &api(&["--image-container-port", "11211"]));
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("--image <IMAGE>"), "{out:?}");
}
