//! `kbr alpha generate`: the project rendered again from PROJECT, byte for byte.

mod common;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use common::*;

/// The files `make manifests` writes (CRDs, the RBAC role, webhook configurations): generated
/// from the code, not by the scaffold.
fn written_by_make_manifests(path: &str) -> bool {
    path == "config/crd/bases"
        || path.starts_with("config/crd/bases/")
        || path == "config/rbac/role.yaml"
        || path == "config/member/role.yaml"
        || path == "config/webhook/manifests.yaml"
}

/// The files of `dir` (`None` for directories), without build output and lock file.
fn project_files(dir: &Path) -> BTreeMap<String, Option<String>> {
    snapshot(dir)
        .into_iter()
        .filter(|(path, _)| {
            path != "Cargo.lock" && path != "target" && !path.starts_with("target/")
        })
        .collect()
}

/// Names the paths where two trees differ, and shows the first difference.
fn assert_same_files(
    actual: &BTreeMap<String, Option<String>>,
    expected: &BTreeMap<String, Option<String>>,
    what: &str,
) {
    let differ: Vec<&String> = actual
        .keys()
        .chain(expected.keys())
        .filter(|path| actual.get(*path) != expected.get(*path))
        .collect();
    if let Some(first) = differ.first() {
        panic!(
            "{what}: differs at {differ:?}; {first}:\n--- generated\n{:?}\n--- expected\n{:?}",
            actual.get(*first),
            expected.get(*first)
        );
    }
}

/// The golden projects of testdata/, every directory holding a PROJECT.
fn golden_projects() -> Vec<PathBuf> {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let mut dirs: Vec<PathBuf> = fs::read_dir(&testdata)
        .expect("testdata/")
        .map(|entry| entry.expect("entry").path())
        .filter(|dir| dir.join("PROJECT").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// Acceptance: on every golden project, `kbr alpha generate` reproduces every file byte for
/// byte. `--no-manifests` keeps the test cheap: the files `make manifests` writes are taken as
/// committed (they follow from the code, which is compared).
#[test]
fn generate_reproduces_every_golden_project() {
    let goldens = golden_projects();
    assert!(goldens.len() >= 2, "{goldens:?}");
    let tmp = tempfile::tempdir().expect("temp dir");
    for golden in goldens {
        let name = golden
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let output = tmp.path().join(&name);
        // Another year: the copyright year of the project's headers is kept.
        let out = kbr_with(
            tmp.path(),
            &[
                "alpha",
                "generate",
                "--input-dir",
                &golden.display().to_string(),
                "--output-dir",
                &output.display().to_string(),
                "--no-manifests",
            ],
            &[("SOURCE_DATE_EPOCH", OsStr::new("1924992000"))], // 2031
        );
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        assert!(
            out.stdout.starts_with("Generated "),
            "{name}: {}",
            out.stdout
        );
        let expected = project_files(&golden);
        let mut generated = project_files(&output);
        for (path, content) in &expected {
            if written_by_make_manifests(path) {
                generated.insert(path.clone(), content.clone());
            }
        }
        assert_same_files(&generated, &expected, &name);
    }
}

#[test]
fn generate_in_place_restores_scaffolded_files_and_keeps_the_others() {
    let (_tmp, dir) = init_knative();
    for api in KNATIVE_APIS {
        assert_eq!(create_api(&dir, api, &[]).code, 0);
    }
    let pristine = project_files(&dir);
    let main = dir.join("src/main.rs");
    let edited = fs::read_to_string(&main).expect("main.rs") + "// an edit\n";
    fs::write(&main, edited).expect("write");
    fs::write(dir.join("NOTES.md"), "mine\n").expect("write");
    fs::create_dir_all(dir.join("target/debug")).expect("target");
    fs::write(dir.join("target/debug/artifact"), "build output\n").expect("write");

    let out = kbr_ok(&dir, &["alpha", "generate", "--no-manifests"]);
    assert!(out.stdout.contains("(1 written)"), "{}", out.stdout);
    assert!(out.stdout.contains("make manifests"), "{}", out.stdout);
    let mut after = project_files(&dir);
    assert_eq!(after.remove("NOTES.md"), Some(Some("mine\n".into())));
    assert_same_files(&after, &pristine, "in place");
    assert_eq!(
        fs::read_to_string(dir.join("target/debug/artifact")).expect("kept"),
        "build output\n"
    );
}

#[test]
fn generate_without_project_fails_and_writes_nothing() {
    let (_tmp, dir) = empty_dir("empty");
    assert_fails(
        &dir,
        &["alpha", "generate", "--no-manifests"],
        &format!(
            "failed to generate the project: no PROJECT file found in {}; run kbr init first",
            dir.display()
        ),
    );
    let (_tmp, dir) = empty_dir("empty");
    assert_fails(
        &dir,
        &["alpha", "generate", "--input-dir", "nowhere"],
        &format!(
            "failed to generate the project: cannot read --input-dir {}/nowhere: No such file or directory (os error 2); pass the directory holding PROJECT",
            dir.display()
        ),
    );
}

#[test]
fn a_failing_make_manifests_is_reported_after_generating() {
    let (tmp, dir) = init_knative();
    let output = tmp.path().join("out");
    // No `make` on PATH.
    let out = kbr_with(
        &dir,
        &["alpha", "generate", "--output-dir", "../out"],
        &[("PATH", OsStr::new(""))],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        format!(
            "Error: failed to generate the project: the project was generated in {}, but make manifests failed (cannot run make: No such file or directory (os error 2)); fix the build and run make manifests, or pass --no-manifests\n",
            output.canonicalize().expect("out").display()
        )
    );
    assert_same_files(&project_files(&output), &project_files(&dir), "out");
}

/// `to` relative to the directory `from` (both canonical).
fn relative(from: &Path, to: &Path) -> String {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let ups = std::iter::repeat_n("..".to_owned(), from.len() - common);
    let downs = to[common..]
        .iter()
        .map(|c| c.as_os_str().to_string_lossy().into_owned());
    ups.chain(downs).collect::<Vec<_>>().join("/")
}

/// Issue 28: a project moved away from its relative `--runtime-path` still renders (`alpha
/// generate`, `alpha update` with another kbr binary), with a warning that names the path and
/// the fix, and `kbr edit --runtime-path` fixes it.
#[test]
fn a_project_moved_away_from_its_runtime_renders_with_a_warning() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let before = tmp.path().canonicalize().expect("tmp").join("op");
    fs::create_dir(&before).expect("project dir");
    let runtime = PathBuf::from(workspace_runtime());
    let recorded = relative(&before, &runtime);
    kbr_ok(
        &before,
        &[
            "init",
            "--domain",
            "example.com",
            "--runtime-path",
            &recorded,
        ],
    );
    assert_eq!(create_api(&before, KNATIVE_APIS[0], &[]).code, 0);
    // One level deeper: the relative path now climbs one directory short.
    let dir = tmp.path().canonicalize().expect("tmp").join("moved/op");
    fs::create_dir(dir.parent().expect("parent")).expect("moved/");
    fs::rename(&before, &dir).expect("move the project");
    let pristine = project_files(&dir);
    let warning = format!(
        "Warning: the kbr-runtime path {recorded:?} in PROJECT holds no crate seen from {} (was the project moved?): the files are rendered as PROJECT records them, but the project does not build until you move it back beside the runtime, or point it elsewhere with kbr edit --runtime-path PATH (relative to the project) or --runtime-version VERSION\n",
        dir.display()
    );

    // Without --no-manifests: make manifests would only fail to build, so it is skipped.
    let out = kbr_ok(&dir, &["alpha", "generate"]);
    assert!(out.stdout.contains("(0 written)"), "{}", out.stdout);
    assert!(out.stdout.contains(&warning), "{}", out.stdout);
    assert!(
        out.stdout
            .ends_with("Next: generate the manifests with:\n$ make manifests\n"),
        "{}",
        out.stdout
    );
    assert_same_files(&project_files(&dir), &pristine, "moved, generated");

    // An update renders the base with another kbr binary: it sees the same stand-in.
    let out = kbr_ok(
        &dir,
        &[
            "alpha",
            "update",
            "--from-binary",
            env!("CARGO_BIN_EXE_kbr"),
        ],
    );
    assert!(out.stdout.contains(&warning), "{}", out.stdout);
    assert_same_files(&project_files(&dir), &pristine, "moved, updated");

    // The fix: point PROJECT and Cargo.toml at the runtime from where the project is now.
    let fixed = relative(&dir, &runtime);
    let out = kbr_ok(&dir, &["edit", "--runtime-path", &fixed]);
    assert!(!out.stdout.contains("Warning"), "{}", out.stdout);
    let manifest = fs::read_to_string(dir.join("Cargo.toml")).expect("Cargo.toml");
    assert!(
        manifest.contains(&format!("kbr-runtime = {{ path = \"{fixed}\"")),
        "{manifest}"
    );
    let project = fs::read_to_string(dir.join("PROJECT")).expect("PROJECT");
    assert!(project.contains(&format!("path: {fixed}\n")), "{project}");
    let out = kbr_ok(&dir, &["alpha", "generate", "--no-manifests"]);
    assert!(!out.stdout.contains("Warning"), "{}", out.stdout);
}
