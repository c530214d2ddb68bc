//! [`PlanError`]: why a plan could not be made or applied.

use std::io;

use super::marker::Marker;

/// A plan could not be made or applied. Paths are relative to the project root.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// A file to create exists and may not be overwritten.
    #[error("file {path} already exists; {fix}")]
    FileExists {
        /// The file.
        path: String,
        /// What to do about it.
        fix: &'static str,
    },
    /// A file to insert into does not exist.
    #[error(
        "cannot add to {path}: the file does not exist (kbr expects it to hold the marker `{marker}`); restore it from version control"
    )]
    MissingFile {
        /// The file.
        path: String,
        /// The marker kbr looked for.
        marker: Marker,
    },
    /// A file to insert into has no such marker.
    #[error(
        "cannot add to {path}: marker `{marker}` not found; restore the marker line where kbr should add code"
    )]
    MarkerMissing {
        /// The file.
        path: String,
        /// The missing marker.
        marker: Marker,
    },
    /// A directory the plan needs is a regular file.
    #[error("cannot write {path}: {blocker} is a file, not a directory; move it out of the way")]
    NotADirectory {
        /// The file to write.
        path: String,
        /// The ancestor that is a file.
        blocker: String,
    },
    /// A file the plan writes is a directory.
    #[error("cannot write {path}: it is a directory; move it out of the way")]
    IsADirectory {
        /// The path.
        path: String,
    },
    /// Reading an existing file failed.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: io::Error,
    },
    /// Writing failed; everything written before was restored.
    #[error("cannot write {path}: {source}; nothing was changed")]
    Write {
        /// The file.
        path: String,
        /// The I/O error.
        source: io::Error,
    },
    /// Writing failed and so did restoring some files.
    #[error(
        "cannot write {path}: {source}; restoring the previous state also failed for {unrestored}, check them by hand"
    )]
    RollbackFailed {
        /// The file whose write failed.
        path: String,
        /// The I/O error.
        source: io::Error,
        /// The paths that could not be restored, comma-separated.
        unrestored: String,
    },
    /// The same file was planned twice (a bug in kbr).
    #[error("internal error: {path} is planned twice")]
    Duplicate {
        /// The file.
        path: String,
    },
}
