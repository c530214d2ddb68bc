//! [`Plan`], a checked set of file writes, and applying it: temp file + rename per file
//! (unlink for a removal), and a full rollback on failure.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::error::PlanError;

/// One file of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedFile {
    /// The path relative to the project root, with `/` separators.
    pub path: String,
    /// The complete new content; `None` removes the file.
    pub content: Option<String>,
    /// The content on disk before the plan, `None` for a new file.
    pub previous: Option<String>,
}

/// A checked set of file writes, ready to apply.
#[derive(Debug)]
pub struct Plan {
    root: PathBuf,
    files: Vec<PlannedFile>,
}

impl Plan {
    /// The plan writing `files` under `root` (checked by [`super::PlanBuilder::finish`]).
    pub(super) fn new(root: PathBuf, files: Vec<PlannedFile>) -> Self {
        Self { root, files }
    }

    /// The project root the paths are relative to.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The files to write, in order.
    pub fn files(&self) -> &[PlannedFile] {
        &self.files
    }

    /// One line per file for the user, in plan order: `created <path>`, `updated <path>` or
    /// `removed <path>` (Kubebuilder prints each file it scaffolds too).
    pub fn report(&self) -> Vec<String> {
        self.files
            .iter()
            .map(|file| {
                let verb = match (&file.previous, &file.content) {
                    (None, _) => "created",
                    (Some(_), Some(_)) => "updated",
                    (Some(_), None) => "removed",
                };
                format!("{verb} {}", file.path)
            })
            .collect()
    }

    /// Writes the plan to disk atomically; see [`Plan::apply_with`].
    pub fn apply(&self) -> Result<(), PlanError> {
        self.apply_with(&mut RealFs)
    }

    /// Writes (or removes) every file through `fs`, creating missing directories. If a write
    /// fails, the files already written or removed get their old content back, new files and
    /// directories are removed, and the error says whether that succeeded.
    pub fn apply_with(&self, fs: &mut dyn Fs) -> Result<(), PlanError> {
        apply(self, fs)
    }
}

/// The file-system operations a plan needs. [`RealFs`] is the real one; tests substitute a
/// failing one to exercise the rollback.
pub trait Fs {
    /// Creates the directory `path` (its parent exists).
    fn create_dir(&mut self, path: &Path) -> io::Result<()>;
    /// Replaces or creates the file `path` with `content`, atomically.
    fn write_file(&mut self, path: &Path, content: &[u8]) -> io::Result<()>;
    /// Removes the file `path`.
    fn remove_file(&mut self, path: &Path) -> io::Result<()>;
    /// Removes the empty directory `path`.
    fn remove_dir(&mut self, path: &Path) -> io::Result<()>;
}

/// The real file system: each file is written to a temporary sibling, then renamed over the
/// target, keeping an existing file's permissions.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealFs;

impl Fs for RealFs {
    fn create_dir(&mut self, path: &Path) -> io::Result<()> {
        fs::create_dir(path)
    }

    fn write_file(&mut self, path: &Path, content: &[u8]) -> io::Result<()> {
        let name = path
            .file_name()
            .map_or_else(|| "file".into(), |name| name.to_string_lossy().into_owned());
        let tmp = path.with_file_name(format!(".{name}.kbr-{}.tmp", std::process::id()));
        let result = (|| {
            let mut file = fs::File::create(&tmp)?;
            file.write_all(content)?;
            if let Ok(metadata) = fs::metadata(path) {
                file.set_permissions(metadata.permissions())?;
            }
            drop(file);
            fs::rename(&tmp, path)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }

    fn remove_file(&mut self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }

    fn remove_dir(&mut self, path: &Path) -> io::Result<()> {
        fs::remove_dir(path)
    }
}

/// One step to undo.
enum Undo<'a> {
    /// Remove a directory the plan created.
    Dir(PathBuf),
    /// Restore a file: remove it (`None`) or write its old content back.
    File(PathBuf, Option<&'a str>),
}

/// See [`Plan::apply_with`].
fn apply(plan: &Plan, fs: &mut dyn Fs) -> Result<(), PlanError> {
    let mut done: Vec<Undo<'_>> = Vec::new();
    for file in &plan.files {
        let full = plan.root.join(&file.path);
        let result = match &file.content {
            Some(content) => write_one(plan.root(), &full, content, fs, &mut done),
            None => fs.remove_file(&full),
        };
        if let Err(source) = result {
            let unrestored = rollback(done, fs);
            return Err(if unrestored.is_empty() {
                PlanError::Write {
                    path: file.path.clone(),
                    source,
                }
            } else {
                PlanError::RollbackFailed {
                    path: file.path.clone(),
                    source,
                    unrestored: unrestored.join(", "),
                }
            });
        }
        done.push(Undo::File(full, file.previous.as_deref()));
    }
    Ok(())
}

/// Creates the missing parent directories of `full` (recording them) and writes it.
fn write_one(
    root: &Path,
    full: &Path,
    content: &str,
    fs: &mut dyn Fs,
    done: &mut Vec<Undo<'_>>,
) -> io::Result<()> {
    let mut missing: Vec<&Path> = full
        .ancestors()
        .skip(1)
        .take_while(|dir| *dir != root && !dir.exists())
        .collect();
    missing.reverse();
    for dir in missing {
        fs.create_dir(dir)?;
        done.push(Undo::Dir(dir.to_path_buf()));
    }
    fs.write_file(full, content.as_bytes())
}

/// Undoes `done` in reverse order; returns the paths that could not be restored.
fn rollback(done: Vec<Undo<'_>>, fs: &mut dyn Fs) -> Vec<String> {
    let mut unrestored = Vec::new();
    for undo in done.into_iter().rev() {
        let (path, result) = match undo {
            Undo::Dir(dir) => {
                let result = fs.remove_dir(&dir);
                (dir, result)
            }
            Undo::File(path, None) => {
                let result = fs.remove_file(&path);
                (path, result)
            }
            Undo::File(path, Some(old)) => {
                let result = fs.write_file(&path, old.as_bytes());
                (path, result)
            }
        };
        if result.is_err() {
            unrestored.push(path.display().to_string());
        }
    }
    unrestored
}
