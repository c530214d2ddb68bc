//! `kbr alpha update`: user edits kept, scaffold changes merged, conflicts reported.
//!
//! These tests use a stand-in for an older kbr: a script running this kbr and then changing
//! what `init` wrote, as an older scaffold would differ. The golden test with a real older kbr
//! (ignored by default: it builds kbr from an older commit and the updated project) is
//! `alpha_update_golden.rs`.

mod common;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::*;

/// A line of the Makefile that the "old" scaffold writes differently.
const MAKEFILE_LINE: &str = "KUBECTL ?= kubectl\n";
/// The line of src/main.rs after which the "old" scaffold lacks the doc line below.
const MAIN_ANCHOR: &str = "async fn main() -> anyhow::Result<()> {\n";

/// Writes an executable shell script `name` into `dir` and returns its path.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, format!("#!/bin/sh\n{body}")).expect("write script");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// An "older kbr": this kbr, after whose `init` the Makefile says `kubectl-old`, main.rs has an
/// `// old scaffold` line the new one dropped, README.md an extra footer, `OLD.md` and
/// `old-dropped.yaml` exist (dropped by the new scaffold) and `.dockerignore` and
/// config/network-policy/ do not (new in the new one).
fn old_kbr(dir: &Path) -> PathBuf {
    script(
        dir,
        "old-kbr",
        &format!(
            r#""{kbr}" "$@" || exit $?
if [ "$1" = init ]; then
  sed -i 's/^KUBECTL ?= kubectl$/KUBECTL ?= kubectl-old/' Makefile
  sed -i 's/^async fn main() -> anyhow::Result<()> {{$/&\n    \/\/ old scaffold/' src/main.rs
  echo "Old footer." >> README.md
  echo "old notes" > OLD.md
  echo "old: true" > old-dropped.yaml
  rm .dockerignore
  rm -r config/network-policy
fi
"#,
            kbr = env!("CARGO_BIN_EXE_kbr")
        ),
    )
}

/// knative-lite scaffolded by the old kbr in `<tmp>/knative-lite`, with the old binary's path.
fn old_project() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let old = old_kbr(tmp.path());
    let dir = tmp.path().join("knative-lite");
    fs::create_dir(&dir).expect("project dir");
    let run = |args: &[&str]| {
        let status = std::process::Command::new(&old)
            .args(args)
            .current_dir(&dir)
            .env("SOURCE_DATE_EPOCH", EPOCH)
            .output()
            .expect("old kbr runs");
        assert!(
            status.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&status.stderr)
        );
    };
    run(&[
        "init",
        "--domain",
        "knative.dev",
        "--project-name",
        "knative-lite",
        "--runtime-version",
        "0.1.0",
    ]);
    for [group, version, kind] in KNATIVE_APIS {
        run(&[
            "create",
            "api",
            "--group",
            group,
            "--version",
            version,
            "--kind",
            kind,
        ]);
    }
    (tmp, dir, old)
}

fn read(dir: &Path, path: &str) -> String {
    fs::read_to_string(dir.join(path)).unwrap_or_else(|err| panic!("{path}: {err}"))
}

fn edit(dir: &Path, path: &str, f: impl FnOnce(String) -> String) {
    let content = read(dir, path);
    fs::write(dir.join(path), f(content)).expect("write");
}

fn update(dir: &Path, old: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["alpha", "update", "--from-binary"];
    let old = old.display().to_string();
    args.push(&old);
    args.extend_from_slice(extra);
    kbr(dir, &args)
}

#[test]
fn update_keeps_user_edits_and_brings_scaffold_changes() {
    let (_tmp, dir, old) = old_project();
    // User edits: a field, a Makefile target, a line in main.rs far from the old scaffold's
    // difference, their own files (one in target/), and an edit to a file the new scaffold drops.
    edit(&dir, "src/api/eventing/v1alpha1/broker.rs", |c| {
        c.replace(
            "    pub foo: Option<String>,\n",
            "    pub foo: Option<String>,\n\n    /// The broker class.\n    pub class: Option<String>,\n",
        )
    });
    edit(&dir, "Makefile", |c| {
        c + "\n.PHONY: hello\nhello: ## Say hello.\n\t@echo hello\n"
    });
    edit(&dir, "src/main.rs", |c| {
        c.replacen("use ", "// user: imports\nuse ", 1)
    });
    fs::write(dir.join("NOTES.md"), "mine\n").expect("write");
    fs::create_dir_all(dir.join("target/debug")).expect("target");
    fs::write(dir.join("target/debug/artifact"), "build output\n").expect("write");
    let old_main = read(&dir, "src/main.rs");
    assert!(old_main.contains("    // old scaffold\n"), "{old_main}");

    let out = update(&dir, &old, &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .starts_with(&format!("Updating from {} to kbr ", old.display())),
        "{}",
        out.stdout
    );
    for line in [
        "  added    .dockerignore\n",
        "  added    config/network-policy/allow-metrics-traffic.yaml\n",
        "  updated  README.md\n",
        "  merged   Makefile\n",
        "  merged   src/main.rs\n",
        "  removed  OLD.md\n",
        "  removed  old-dropped.yaml\n",
    ] {
        assert!(out.stdout.contains(line), "{line:?} in\n{}", out.stdout);
    }
    assert!(
        !out.stdout.contains("broker.rs"),
        "unchanged by the scaffold: {}",
        out.stdout
    );

    // The new scaffold's changes arrived.
    assert!(read(&dir, "Makefile").contains(MAKEFILE_LINE));
    assert!(!read(&dir, "Makefile").contains("kubectl-old"));
    let main = read(&dir, "src/main.rs");
    assert!(!main.contains("// old scaffold"), "{main}");
    assert!(main.contains(MAIN_ANCHOR), "{main}");
    assert!(!read(&dir, "README.md").contains("Old footer."));
    assert!(!dir.join("OLD.md").exists() && !dir.join("old-dropped.yaml").exists());
    assert!(dir.join(".dockerignore").is_file());
    // Every user edit is still there.
    assert!(
        read(&dir, "src/api/eventing/v1alpha1/broker.rs").contains("pub class: Option<String>,")
    );
    assert!(read(&dir, "Makefile").ends_with("\nhello: ## Say hello.\n\t@echo hello\n"));
    assert!(main.contains("// user: imports\nuse "), "{main}");
    assert_eq!(read(&dir, "NOTES.md"), "mine\n");
    assert_eq!(read(&dir, "target/debug/artifact"), "build output\n");

    // The project is now the new scaffold plus the user's edits: a second update from this kbr
    // has nothing to do.
    let again = kbr(&dir, &["alpha", "update"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(
        again.stdout.contains("nothing to update"),
        "{}",
        again.stdout
    );
}

#[test]
fn conflicts_are_written_with_markers_listed_and_exit_1() {
    let (_tmp, dir, old) = old_project();
    // The user changes the line the new scaffold changes; edits a file the new scaffold drops;
    // deletes a file the new scaffold changes.
    edit(&dir, "src/main.rs", |c| {
        c.replace("    // old scaffold\n", "    // user's line\n")
    });
    edit(&dir, "OLD.md", |c| c + "more notes\n");
    fs::remove_file(dir.join("Makefile")).expect("rm");

    let out = update(&dir, &old, &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        "Error: the update left 3 file(s) to resolve: Makefile, OLD.md, src/main.rs; fix them (conflict markers: ours = your project, original = the old scaffold, theirs = the new one), then run make manifests\n"
    );
    for line in [
        "  conflict src/main.rs: resolve the conflict markers\n",
        "  kept     OLD.md: the new scaffold dropped it but you changed it: delete it or keep it\n",
        "  deleted  Makefile: you deleted it but the new scaffold changed it: restore it if you need it\n",
        // The rest is merged.
        "  added    .dockerignore\n",
        "  removed  old-dropped.yaml\n",
    ] {
        assert!(out.stdout.contains(line), "{line:?} in\n{}", out.stdout);
    }
    let main = read(&dir, "src/main.rs");
    assert!(
        main.contains(&format!(
            "{MAIN_ANCHOR}<<<<<<< ours\n    // user's line\n||||||| original\n    // old scaffold\n=======\n>>>>>>> theirs\n"
        )),
        "{main}"
    );
    assert_eq!(read(&dir, "OLD.md"), "old notes\nmore notes\n");
    assert!(!dir.join("Makefile").exists());
    assert!(dir.join(".dockerignore").is_file());

    // --force-conflicts: the same report, exit code 0 (e.g. for automation opening a PR).
    let (_tmp, dir, old) = old_project();
    edit(&dir, "src/main.rs", |c| {
        c.replace("    // old scaffold\n", "    // user's line\n")
    });
    let out = update(&dir, &old, &["--force-conflicts"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("--force-conflicts: the update left 1 file(s) to resolve: src/main.rs;"),
        "{}",
        out.stdout
    );
    assert!(read(&dir, "src/main.rs").contains("<<<<<<< ours\n"));
}

#[test]
fn nothing_is_written_when_the_merge_cannot_be() {
    let (_tmp, dir, old) = old_project();
    // A file where the new scaffold adds a directory: the plan fails before writing anything.
    fs::write(dir.join("config/network-policy"), "in the way\n").expect("write");
    let before = snapshot(&dir);
    let out = update(&dir, &old, &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        "Error: failed to update the project: cannot write config/network-policy/allow-metrics-traffic.yaml: config/network-policy is a file, not a directory; move it out of the way\n"
    );
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn a_failing_old_kbr_is_named_and_nothing_is_written() {
    let (tmp, dir, _old) = old_project();
    let broken = script(
        tmp.path(),
        "broken-kbr",
        "echo 'Error: unknown flag --plural' >&2\nexit 1\n",
    );
    let before = snapshot(&dir);
    let out = update(&dir, &broken, &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        format!(
            "Error: failed to update the project: replaying `kbr init --domain=knative.dev --project-name=knative-lite --runtime-version=0.1.0` with {} failed: unknown flag --plural\n",
            broken.display()
        )
    );
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn same_version_without_binary_has_nothing_to_update() {
    let (_tmp, dir) = init_knative();
    let before = snapshot(&dir);
    let out = kbr_ok(&dir, &["alpha", "update"]);
    assert_eq!(
        out.stdout,
        format!(
            "PROJECT was written by kbr {v}, the version of this kbr: nothing to update (pass --from-binary PATH to update from another kbr build)\n",
            v = env!("CARGO_PKG_VERSION")
        )
    );
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn other_versions_are_installed_with_cargo_once() {
    let (tmp, dir, old) = old_project();
    let cache = tmp.path().join("cache");
    let log = tmp.path().join("cargo.log");
    // A cargo that "installs" the old kbr: copies it to <root>/bin/kbr and logs its arguments.
    let cargo = script(
        tmp.path(),
        "fake-cargo",
        &format!(
            r#"echo "$@" >> "{log}"
root=""; while [ $# -gt 0 ]; do [ "$1" = --root ] && root="$2"; shift; done
mkdir -p "$root/bin" && cp "{old}" "$root/bin/kbr"
"#,
            log = log.display(),
            old = old.display()
        ),
    );
    let envs = [
        ("KBR_CACHE_DIR", cache.as_os_str()),
        ("CARGO", cargo.as_os_str()),
    ];
    let args = ["alpha", "update", "--from-version", "0.0.9"];
    let out = kbr_with(&dir, &args, &envs);
    assert_eq!(out.code, 0, "{out:?}");
    let installed = cache.join("0.0.9/bin/kbr");
    assert!(
        out.stdout
            .starts_with(&format!("Updating from {} to kbr ", installed.display())),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("  added    .dockerignore\n"),
        "{}",
        out.stdout
    );
    let out = kbr_with(&dir, &args, &envs);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        fs::read_to_string(&log).expect("log"),
        format!(
            "install kbr --locked --quiet --version =0.0.9 --root {}\n",
            cache.join("0.0.9").display()
        ),
        "installed once"
    );
}

#[test]
fn a_failing_install_is_one_line_naming_the_version_and_the_fix() {
    let (tmp, dir) = init_knative();
    let cargo = script(
        tmp.path(),
        "fake-cargo",
        "echo '    Updating crates.io index' >&2\necho 'error: could not find `kbr` in registry `crates-io` with version `=0.0.9`' >&2\nexit 101\n",
    );
    let cache = tmp.path().join("cache");
    assert_fails_with(
        &dir,
        &["alpha", "update", "--from-version", "0.0.9"],
        &[
            ("KBR_CACHE_DIR", cache.as_os_str()),
            ("CARGO", cargo.as_os_str()),
        ],
        "failed to update the project: cannot install kbr 0.0.9 (`cargo install kbr --version =0.0.9`: could not find `kbr` in registry `crates-io` with version `=0.0.9`); pass --from-binary PATH with a kbr 0.0.9 binary, e.g. built from kbr's source at that version with `cargo build -p kbr`",
    );
    assert_fails_with(
        &dir,
        &["alpha", "update", "--to-version", "1.2.3; rm -rf /"],
        &[],
        "failed to update the project: invalid --to-version \"1.2.3; rm -rf /\": pass a kbr version such as 0.1.0",
    );
}

/// Like `assert_fails`, with environment variables.
fn assert_fails_with(dir: &Path, args: &[&str], envs: &[(&str, &OsStr)], message: &str) {
    let before = snapshot(dir);
    let out = kbr_with(dir, args, envs);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.stderr, format!("Error: {message}\n"));
    assert_eq!(snapshot(dir), before);
}
