//! No source file over 600 lines, in any crate of the workspace (DESIGN §6: "files under ~400
//! lines"; 600 is the hard limit issue 28 set). A file that is itself a unit-test module (its
//! parent declares `#[cfg(test)] mod tests;`) is exempt; an inline `#[cfg(test)] mod tests { .. }`
//! counts with its file, so a file near the limit moves its tests out before it grows.

mod source_scan;

use std::collections::BTreeSet;
use std::path::Path;

use source_scan::{module_path, sources, test_modules};

/// The most lines a source file may have.
const MAX_LINES: usize = 600;

/// The files of the crate in `workspace/dir` with more than [`MAX_LINES`] lines, as
/// `dir/src/path: N lines`, skipping unit-test module files.
fn over_the_limit(workspace: &Path, dir: &str) -> Vec<String> {
    let files = sources(&workspace.join(dir).join("src"));
    let mut test_modules_paths = BTreeSet::new();
    for (path, text) in &files {
        for name in test_modules(text) {
            let mut module = module_path(path);
            module.push(name);
            test_modules_paths.insert(module);
        }
    }
    files
        .iter()
        .filter(|(path, _)| {
            let module = module_path(path);
            !test_modules_paths
                .iter()
                .any(|test| module.starts_with(test))
        })
        .filter_map(|(path, text)| {
            let lines = text.lines().count();
            (lines > MAX_LINES).then(|| format!("{dir}/src/{}: {lines} lines", path.display()))
        })
        .collect()
}

#[test]
fn no_source_file_is_over_the_limit() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let over: Vec<String> = [
        "core", "cli", "derive", "crd", "runtime", "testing", "bench",
    ]
    .iter()
    .flat_map(|dir| over_the_limit(&workspace, dir))
    .collect();
    assert!(
        over.is_empty(),
        "split these files along their concepts (at most {MAX_LINES} lines each):\n{}",
        over.join("\n")
    );
}
