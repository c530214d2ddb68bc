//! Render plans: every file a command creates or changes, computed and checked before the first
//! write, then written atomically ([`Plan::apply`]).
//!
//! A command flows one way (`docs/design-notes.md`, "A command flows one way"): flags ->
//! validated names -> a render plan -> written atomically. A [`PlanBuilder`]
//! collects new files ([`PlanBuilder::create`]), marker insertions into existing or planned
//! files ([`PlanBuilder::insert`]) and removals ([`PlanBuilder::remove`]); every conflict (a file that exists without `--force`, a
//! missing marker, a path blocked by a regular file) is an error from the builder, so a command
//! that fails has written nothing. Applying writes each file through a temporary file and a
//! rename (a removal is a plain unlink), and on any failure restores everything already written or
//! removed.

mod error;
pub mod marker;
mod write;

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

pub use error::PlanError;
pub use marker::Marker;
pub use write::{Fs, Plan, PlannedFile, RealFs};

/// What to do when a file the plan creates already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfExists {
    /// Refuse; the text tells the user how to proceed (e.g. "pass --force to overwrite it").
    Error(&'static str),
    /// Replace it (`--force`).
    Overwrite,
}

/// Collects the files of a [`Plan`], checking each against the disk as it goes.
#[derive(Debug)]
pub struct PlanBuilder {
    root: PathBuf,
    files: Vec<PlannedFile>,
    index: HashMap<String, usize>,
}

impl PlanBuilder {
    /// An empty plan for the project at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            files: Vec::new(),
            index: HashMap::new(),
        }
    }

    /// Plans a new file at `path` (relative, `/`-separated) with `content`. An existing file is
    /// an error or is replaced, as `if_exists` says.
    pub fn create(
        &mut self,
        path: &str,
        content: String,
        if_exists: IfExists,
    ) -> Result<(), PlanError> {
        if self.index.contains_key(path) {
            return Err(PlanError::Duplicate { path: path.into() });
        }
        let previous = self.read_disk(path)?;
        if previous.is_some()
            && let IfExists::Error(fix) = if_exists
        {
            return Err(PlanError::FileExists {
                path: path.into(),
                fix,
            });
        }
        self.push(PlannedFile {
            path: path.into(),
            content: Some(content),
            previous,
        });
        Ok(())
    }

    /// Plans `content` for `path`, whether or not it exists (e.g. the PROJECT file).
    pub fn put(&mut self, path: &str, content: String) -> Result<(), PlanError> {
        self.set(path, Some(content))
    }

    /// Plans removing the file `path`; nothing happens if it exists neither on disk nor in the
    /// plan. Directories left empty stay.
    pub fn remove(&mut self, path: &str) -> Result<(), PlanError> {
        self.set(path, None)
    }

    /// Plans `content` for `path` (`None`: removed), replacing what was planned for it.
    fn set(&mut self, path: &str, content: Option<String>) -> Result<(), PlanError> {
        if let Some(&i) = self.index.get(path) {
            self.files[i].content = content;
            return Ok(());
        }
        let previous = self.read_disk(path)?;
        self.push(PlannedFile {
            path: path.into(),
            content,
            previous,
        });
        Ok(())
    }

    /// The content of `path` as planned so far, else as on disk; `None` if it exists in neither
    /// or is planned to be removed.
    pub fn content(&self, path: &str) -> Result<Option<String>, PlanError> {
        match self.index.get(path) {
            Some(&i) => Ok(self.files[i].content.clone()),
            None => self.read_disk(path),
        }
    }

    /// Whether `path` is planned (and not to be removed) or exists on disk.
    pub fn exists(&self, path: &str) -> bool {
        match self.index.get(path) {
            Some(&i) => self.files[i].content.is_some(),
            None => self.root.join(path).exists(),
        }
    }

    /// Plans inserting `fragment` before `marker` in `path`, which is a file planned earlier or
    /// one on disk. A fragment already present is skipped (idempotent).
    pub fn insert(&mut self, path: &str, marker: Marker, fragment: &str) -> Result<(), PlanError> {
        self.insert_with(path, marker, fragment, marker::insert)
    }

    /// Like [`PlanBuilder::insert`], but keeps the declarations above the marker sorted
    /// ([`marker::insert_sorted`]), for `mod` lists that rustfmt would reorder.
    pub fn insert_sorted(
        &mut self,
        path: &str,
        marker: Marker,
        fragment: &str,
    ) -> Result<(), PlanError> {
        self.insert_with(path, marker, fragment, marker::insert_sorted)
    }

    fn insert_with(
        &mut self,
        path: &str,
        marker: Marker,
        fragment: &str,
        insert: fn(&str, Marker, &str) -> marker::Insertion,
    ) -> Result<(), PlanError> {
        let i = match self.index.get(path) {
            Some(&i) if self.files[i].content.is_some() => i,
            Some(_) => {
                return Err(PlanError::MissingFile {
                    path: path.into(),
                    marker,
                });
            }
            None => {
                let previous = self
                    .read_disk(path)?
                    .ok_or_else(|| PlanError::MissingFile {
                        path: path.into(),
                        marker,
                    })?;
                self.push(PlannedFile {
                    path: path.into(),
                    content: Some(previous.clone()),
                    previous: Some(previous),
                })
            }
        };
        let current = self.files[i].content.as_deref().unwrap_or_default();
        match insert(current, marker, fragment) {
            marker::Insertion::Inserted(content) => self.files[i].content = Some(content),
            marker::Insertion::AlreadyPresent => {}
            marker::Insertion::MarkerMissing => {
                return Err(PlanError::MarkerMissing {
                    path: path.into(),
                    marker,
                });
            }
        }
        Ok(())
    }

    /// Checks the plan against the file system and returns it, without files whose content
    /// would not change.
    pub fn finish(self) -> Result<Plan, PlanError> {
        let files: Vec<PlannedFile> = self
            .files
            .into_iter()
            .filter(|f| f.previous != f.content)
            .collect();
        for file in files.iter().filter(|f| f.content.is_some()) {
            check_parents(&self.root, &file.path)?;
        }
        Ok(Plan::new(self.root, files))
    }

    fn push(&mut self, file: PlannedFile) -> usize {
        let i = self.files.len();
        self.index.insert(file.path.clone(), i);
        self.files.push(file);
        i
    }

    /// The content of `path` on disk, `None` if it does not exist.
    fn read_disk(&self, path: &str) -> Result<Option<String>, PlanError> {
        let full = self.root.join(path);
        if full.is_dir() {
            return Err(PlanError::IsADirectory { path: path.into() });
        }
        match std::fs::read_to_string(&full) {
            Ok(content) => Ok(Some(content)),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            // A parent that is a file: name it (a file to insert into would otherwise be
            // reported as missing).
            Err(err) if err.kind() == io::ErrorKind::NotADirectory => {
                check_parents(&self.root, path)?;
                Ok(None)
            }
            Err(source) => Err(PlanError::Read {
                path: path.into(),
                source,
            }),
        }
    }
}

/// Errors if an ancestor directory of `path` (below `root`) exists as a non-directory.
fn check_parents(root: &Path, path: &str) -> Result<(), PlanError> {
    let mut dir = root.to_path_buf();
    let parts: Vec<&str> = path.split('/').collect();
    for (depth, part) in parts[..parts.len().saturating_sub(1)].iter().enumerate() {
        dir.push(part);
        if dir.exists() && !dir.is_dir() {
            return Err(PlanError::NotADirectory {
                path: path.into(),
                blocker: parts[..=depth].join("/"),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
