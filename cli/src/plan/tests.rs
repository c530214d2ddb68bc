use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;

use super::*;

/// Every file and directory under `root`, with file contents.
fn snapshot(root: &Path) -> BTreeMap<String, Option<String>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Option<String>>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            if path.is_dir() {
                out.insert(rel, None);
                walk(root, &path, out);
            } else {
                out.insert(rel, Some(fs::read_to_string(&path).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// A project-like tree with a marker file and a user file.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(
        dir.path().join("src/lib.rs"),
        "// user code\nconst A: &[u8] = &[\n    // +kbr:scaffold:scheme\n];\n",
    )
    .unwrap();
    fs::write(dir.path().join("README.md"), "mine\n").unwrap();
    dir
}

/// Real writes, failing on the `fail_at`-th file write (0-based).
struct FailingFs {
    writes: usize,
    fail_at: usize,
}

impl Fs for FailingFs {
    fn create_dir(&mut self, path: &Path) -> io::Result<()> {
        RealFs.create_dir(path)
    }

    fn write_file(&mut self, path: &Path, content: &[u8]) -> io::Result<()> {
        let n = self.writes;
        self.writes += 1;
        if n == self.fail_at {
            return Err(io::Error::other("injected failure"));
        }
        RealFs.write_file(path, content)
    }

    fn remove_file(&mut self, path: &Path) -> io::Result<()> {
        RealFs.remove_file(path)
    }

    fn remove_dir(&mut self, path: &Path) -> io::Result<()> {
        RealFs.remove_dir(path)
    }
}

/// A plan that modifies src/lib.rs, overwrites README.md and creates files in new directories.
fn plan(root: &Path) -> Plan {
    let mut builder = PlanBuilder::new(root);
    builder
        .insert("src/lib.rs", Marker::rust("scheme"), "    1,\n")
        .unwrap();
    builder
        .create(
            "src/api/eventing/mod.rs",
            "// new\n".into(),
            IfExists::Overwrite,
        )
        .unwrap();
    builder
        .create("README.md", "theirs\n".into(), IfExists::Overwrite)
        .unwrap();
    builder
        .create(
            "src/api/eventing/v1/broker.rs",
            "// broker\n".into(),
            IfExists::Error("pass --force"),
        )
        .unwrap();
    builder
        .create("tests/broker.rs", "// test\n".into(), IfExists::Overwrite)
        .unwrap();
    builder.finish().unwrap()
}

#[test]
fn applies_creates_and_inserts() {
    let dir = tree();
    plan(dir.path()).apply().unwrap();
    let after = snapshot(dir.path());
    assert_eq!(
        after["src/lib.rs"].as_deref(),
        Some("// user code\nconst A: &[u8] = &[\n    1,\n    // +kbr:scaffold:scheme\n];\n")
    );
    assert_eq!(after["README.md"].as_deref(), Some("theirs\n"));
    assert_eq!(
        after["src/api/eventing/v1/broker.rs"].as_deref(),
        Some("// broker\n")
    );
    // No temporary files are left behind.
    assert!(
        after.keys().all(|path| !path.contains(".kbr-")),
        "{after:?}"
    );
}

#[test]
fn failure_half_way_restores_the_tree() {
    for fail_at in 0..5 {
        let dir = tree();
        let before = snapshot(dir.path());
        let plan = plan(dir.path());
        let err = plan
            .apply_with(&mut FailingFs { writes: 0, fail_at })
            .unwrap_err();
        assert!(
            matches!(err, PlanError::Write { .. }),
            "fail_at {fail_at}: {err}"
        );
        assert!(
            err.to_string()
                .ends_with("injected failure; nothing was changed")
        );
        assert_eq!(snapshot(dir.path()), before, "fail_at {fail_at}");
    }
}

#[test]
fn existing_file_without_force_is_refused() {
    let dir = tree();
    let mut builder = PlanBuilder::new(dir.path());
    let err = builder
        .create(
            "README.md",
            "x".into(),
            IfExists::Error("pass --force to overwrite it"),
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "file README.md already exists; pass --force to overwrite it"
    );
}

#[test]
fn missing_marker_and_file_are_errors() {
    let dir = tree();
    let mut builder = PlanBuilder::new(dir.path());
    let err = builder
        .insert("src/lib.rs", Marker::rust("builder"), "x\n")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot add to src/lib.rs: marker `// +kbr:scaffold:builder` not found; restore the marker line where kbr should add code"
    );
    let err = builder
        .insert("src/main.rs", Marker::rust("builder"), "x\n")
        .unwrap_err();
    assert!(matches!(err, PlanError::MissingFile { .. }), "{err}");
}

#[test]
fn parent_that_is_a_file_is_named_before_writing() {
    let dir = tree();
    fs::write(dir.path().join("tests"), "not a directory").unwrap();
    let before = snapshot(dir.path());
    let mut builder = PlanBuilder::new(dir.path());
    builder
        .insert("src/lib.rs", Marker::rust("scheme"), "    1,\n")
        .unwrap();
    let err = builder
        .create("tests/broker.rs", "x".into(), IfExists::Overwrite)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot write tests/broker.rs: tests is a file, not a directory; move it out of the way"
    );
    // Also for a file kbr inserts into (not reported as missing).
    let err = builder
        .insert("tests/main.rs", Marker::rust("tests"), "mod a;\n")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot write tests/main.rs: tests is a file, not a directory; move it out of the way"
    );
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn unchanged_files_are_dropped_and_inserts_are_idempotent() {
    let dir = tree();
    plan(dir.path()).apply().unwrap();
    let mut builder = PlanBuilder::new(dir.path());
    builder
        .insert("src/lib.rs", Marker::rust("scheme"), "    1,\n")
        .unwrap();
    builder
        .create("README.md", "theirs\n".into(), IfExists::Overwrite)
        .unwrap();
    assert!(builder.finish().unwrap().files().is_empty());
}

#[test]
fn insert_into_planned_file() {
    let dir = tree();
    let mut builder = PlanBuilder::new(dir.path());
    builder
        .create(
            "src/api/mod.rs",
            "// +kbr:scaffold:groups\n".into(),
            IfExists::Error("x"),
        )
        .unwrap();
    assert!(builder.exists("src/api/mod.rs"));
    builder
        .insert_sorted("src/api/mod.rs", Marker::rust("groups"), "pub mod b;\n")
        .unwrap();
    builder
        .insert_sorted("src/api/mod.rs", Marker::rust("groups"), "pub mod a;\n")
        .unwrap();
    let plan = builder.finish().unwrap();
    assert_eq!(
        plan.files()[0].content.as_deref(),
        Some("pub mod a;\npub mod b;\n// +kbr:scaffold:groups\n")
    );
    assert_eq!(plan.files()[0].previous, None);
}

#[test]
fn removals_apply_and_roll_back() {
    let plan_with_removal = |root: &Path| {
        let mut builder = PlanBuilder::new(root);
        builder.remove("README.md").unwrap();
        builder
            .create("tests/broker.rs", "// test\n".into(), IfExists::Overwrite)
            .unwrap();
        // Nothing to remove: not planned.
        builder.remove("gone.txt").unwrap();
        assert!(!builder.exists("README.md"));
        assert_eq!(builder.content("README.md").unwrap(), None);
        builder.finish().unwrap()
    };
    let dir = tree();
    let plan = plan_with_removal(dir.path());
    assert_eq!(plan.files().len(), 2);
    assert_eq!(plan.files()[0].content, None);
    assert_eq!(plan.files()[0].previous.as_deref(), Some("mine\n"));
    plan.apply().unwrap();
    let after = snapshot(dir.path());
    assert!(!after.contains_key("README.md"), "{after:?}");
    assert_eq!(after["tests/broker.rs"].as_deref(), Some("// test\n"));

    // The write after the removal fails: the removed file comes back.
    let dir = tree();
    let before = snapshot(dir.path());
    let err = plan_with_removal(dir.path())
        .apply_with(&mut FailingFs {
            writes: 0,
            fail_at: 0,
        })
        .unwrap_err();
    assert!(matches!(err, PlanError::Write { .. }), "{err}");
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn a_removed_file_has_no_marker_to_insert_at() {
    let dir = tree();
    let mut builder = PlanBuilder::new(dir.path());
    builder.remove("src/lib.rs").unwrap();
    let err = builder
        .insert("src/lib.rs", Marker::rust("scheme"), "    1,\n")
        .unwrap_err();
    assert!(matches!(err, PlanError::MissingFile { .. }), "{err}");
}
