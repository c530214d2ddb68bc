//! [`Scratch`]: the directory PROJECT is replayed in, placed so that PROJECT's runtime path
//! resolves there as `kbr init` requires, even when it no longer resolves from the project.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use tempfile::TempDir;

use crate::commands::merge::Tree;
use crate::project::{Project, Runtime};

/// What the stand-in for a missing kbr-runtime crate holds: `kbr init` only checks that
/// `<runtime path>/Cargo.toml` is a file.
const STAND_IN: &str = "# A stand-in for the kbr-runtime crate while kbr renders the project.\n";

/// A scratch directory to replay PROJECT in, removed when dropped.
#[derive(Debug)]
pub(super) struct Scratch {
    /// The temporary directory; removed with everything in it.
    root: TempDir,
    /// Where the commands run: `root`, or a directory below it (see [`Scratch::new`]).
    dir: PathBuf,
    /// The stand-in `Cargo.toml`s made for a missing runtime (kbr-runtime's and kbr-testing's),
    /// removed before the tree is read.
    stand_ins: Vec<PathBuf>,
}

impl Scratch {
    /// A scratch directory for `project`, whose own directory is `project_dir`.
    ///
    /// PROJECT's relative runtime path must resolve from where the commands run (`kbr init`
    /// refuses a `--runtime-path` without a crate). When it resolves from `project_dir`, the
    /// scratch directory is made beside the project, so the path resolves to the same crate.
    /// When it does not ([`missing_runtime`]: the project moved away from it), the scratch
    /// directory is made in the system's temporary directory, as deep below its root as the
    /// path climbs, and an empty stand-in `Cargo.toml` is put where the path leads: the
    /// project renders as PROJECT records it. An absolute or crates.io runtime renders in the
    /// temporary directory as it is.
    pub(super) fn new(project: &Project, project_dir: &Path) -> io::Result<Self> {
        let relative = match &project.runtime {
            Runtime::Path(path) if Path::new(path).is_relative() => Some(Path::new(path)),
            _ => None,
        };
        let Some(path) = relative.filter(|_| missing_runtime(project, project_dir).is_some())
        else {
            let parent = match relative {
                Some(_) => project_dir.parent().unwrap_or(project_dir),
                None => &std::env::temp_dir(),
            };
            let root = temp_dir_in(parent)?;
            let dir = root.path().to_path_buf();
            return Ok(Self {
                root,
                dir,
                stand_ins: Vec::new(),
            });
        };
        let root = temp_dir_in(&std::env::temp_dir())?;
        let climbs = path
            .components()
            .filter(|c| matches!(c, Component::ParentDir))
            .count();
        let dir = (0..climbs).fold(root.path().join("project"), |dir, i| {
            dir.join(format!("{i}"))
        });
        fs::create_dir_all(&dir)?;
        // Every directory on the way, so the OS resolves `a/../b` as kbr init will.
        let mut crate_dir = dir.clone();
        for component in path.components() {
            crate_dir.push(component);
            if matches!(component, Component::Normal(_)) {
                fs::create_dir_all(&crate_dir)?;
            }
        }
        let mut stand_ins = vec![crate_dir.join("Cargo.toml")];
        // kbr-testing beside it, where `kbr init` looks for it.
        if let Some(testing) = project.runtime.testing_path() {
            let testing = dir.join(testing);
            fs::create_dir_all(&testing)?;
            stand_ins.push(testing.join("Cargo.toml"));
        }
        for stand_in in &stand_ins {
            fs::write(stand_in, STAND_IN)?;
        }
        Ok(Self {
            root,
            dir,
            stand_ins,
        })
    }

    /// Where to run the commands.
    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every file the commands wrote (without the stand-in runtime), then removes the
    /// directory.
    pub(super) fn into_tree(self) -> io::Result<Tree> {
        for stand_in in &self.stand_ins {
            fs::remove_file(stand_in)?;
        }
        let tree = read_tree(&self.dir)?;
        self.root.close()?;
        Ok(tree)
    }
}

/// A fresh `.kbr-render-*` directory in `parent`.
fn temp_dir_in(parent: &Path) -> io::Result<TempDir> {
    tempfile::Builder::new()
        .prefix(".kbr-render-")
        .tempdir_in(parent)
}

/// PROJECT's kbr-runtime path when it holds no crate seen from the project directory `dir`
/// (no `<dir>/<path>/Cargo.toml`, or no kbr-testing beside it: the project or the runtime
/// moved); `None` for crates that are there or a crates.io version.
pub fn missing_runtime<'a>(project: &'a Project, dir: &Path) -> Option<&'a str> {
    let holds_crate = |path: &str| dir.join(path).join("Cargo.toml").is_file();
    match (&project.runtime, project.runtime.testing_path()) {
        (Runtime::Path(path), Some(testing)) if !holds_crate(path) || !holds_crate(&testing) => {
            Some(path)
        }
        _ => None,
    }
}

/// The warning for a project at `dir` whose runtime path `path` holds no crate: it renders,
/// but does not build until the path is fixed.
pub fn missing_runtime_warning(path: &str, dir: &Path) -> String {
    format!(
        "Warning: the kbr-runtime path {path:?} in PROJECT holds no crate seen from {} (was the project moved?): the files are rendered as PROJECT records them, but the project does not build until you move it back beside the runtime, or point it elsewhere with kbr edit --runtime-path PATH (relative to the project) or --runtime-version VERSION",
        dir.display()
    )
}

/// Every file under `root`, with its content.
pub(super) fn read_tree(root: &Path) -> io::Result<Tree> {
    let mut tree = Tree::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let relative: Vec<String> = path
                .strip_prefix(root)
                .map_err(io::Error::other)?
                .components()
                .map(|part| part.as_os_str().to_string_lossy().into_owned())
                .collect();
            tree.insert(relative.join("/"), fs::read_to_string(&path)?);
        }
    }
    Ok(tree)
}
