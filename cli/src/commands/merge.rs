//! The 3-way merge of `kbr alpha update` and `kbr edit`, file by file: *base* is the project as
//! the old kbr (or the old settings) renders it from PROJECT, *ours* the user's files, *theirs*
//! the project as the new kbr (or the new settings) renders it; `--force` of `kbr create
//! webhook` merges one file with [`merge_text`]. Only files of base or theirs are looked at: the user's own files, build output (`target/`)
//! and anything else the scaffold never wrote stay untouched.
//!
//! | base | ours | theirs | result |
//! |---|---|---|---|
//! | – | – | T | T is added |
//! | – | O | T ≠ O | both added it: conflict markers over an empty base |
//! | B | B | – | removed (the scaffold dropped it, the user never changed it) |
//! | B | O ≠ B | – | kept as it is, reported: the user decides |
//! | B | – | T ≠ B | stays deleted, reported: the user deleted it, the scaffold changed it |
//! | B | B | T | T (only the scaffold changed it) |
//! | B | O | B | O (only the user changed it) |
//! | B | O | T | line-based 3-way merge; overlapping changes get conflict markers |
//!
//! The line merge is the `diffy` crate's (Myers diff, git's `diff3` conflict style: `<<<<<<<
//! ours`, `||||||| original`, `=======`, `>>>>>>> theirs`): pure Rust, so an update works the same
//! with or without git, in a git work tree or a plain directory.

use std::collections::{BTreeMap, BTreeSet};

use diffy::{ConflictStyle, IncompleteHunkStyle, MergeOptions};

use crate::plan::{PlanBuilder, PlanError};

/// A rendered project: file path (relative, `/`-separated) -> content.
pub type Tree = BTreeMap<String, String>;

/// What the update does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// New in the scaffold: added.
    Added,
    /// Changed by the scaffold, not by the user: replaced by the new scaffold's version.
    Updated,
    /// Changed by both, on different lines: merged.
    Merged,
    /// Dropped by the new scaffold and never changed by the user: removed.
    Removed,
    /// Changed by both on the same lines, or added by both with different content: written with
    /// conflict markers.
    Conflict,
    /// Dropped by the new scaffold but changed by the user: kept as it is.
    KeptChanged,
    /// Deleted by the user but changed by the new scaffold: left deleted.
    StaysDeleted,
}

impl Outcome {
    /// Whether the user must look at the file before the update is done (git reports these three
    /// as conflicts too).
    pub fn needs_attention(self) -> bool {
        matches!(
            self,
            Outcome::Conflict | Outcome::KeptChanged | Outcome::StaysDeleted
        )
    }

    /// One word for what happened, printed before the path.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Added => "added",
            Outcome::Updated => "updated",
            Outcome::Merged => "merged",
            Outcome::Removed => "removed",
            Outcome::Conflict => "conflict",
            Outcome::KeptChanged => "kept",
            Outcome::StaysDeleted => "deleted",
        }
    }

    /// What the user should do, for the outcomes that [need attention](Self::needs_attention).
    pub fn advice(self) -> Option<&'static str> {
        match self {
            Outcome::Conflict => Some("resolve the conflict markers"),
            Outcome::KeptChanged => {
                Some("the new scaffold dropped it but you changed it: delete it or keep it")
            }
            Outcome::StaysDeleted => {
                Some("you deleted it but the new scaffold changed it: restore it if you need it")
            }
            _ => None,
        }
    }
}

/// One file the update changes or reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The path relative to the project root.
    pub path: String,
    /// What happens to it.
    pub outcome: Outcome,
}

/// Prints one line per change to `out` (`  <label> <path>[: <advice>]`, as `git status` lists
/// a merge); returns the paths that [need the user](Outcome::needs_attention).
///
/// # Errors
///
/// Writing to `out` failed.
pub fn print_changes(
    changes: &[Change],
    out: &mut dyn std::io::Write,
) -> std::io::Result<Vec<String>> {
    for change in changes {
        let advice = change
            .outcome
            .advice()
            .map(|advice| format!(": {advice}"))
            .unwrap_or_default();
        writeln!(
            out,
            "  {:<8} {}{advice}",
            change.outcome.label(),
            change.path
        )?;
    }
    Ok(changes
        .iter()
        .filter(|change| change.outcome.needs_attention())
        .map(|change| change.path.clone())
        .collect())
}

/// Merges the changes from `base` to `theirs` into the project at `dir` and writes them,
/// every file or none ([`plan_merge`], then the plan applied); returns the files changed or
/// reported.
///
/// # Errors
///
/// A file of the project cannot be read, or writing fails (nothing is then changed).
pub fn merge_into(
    dir: &std::path::Path,
    base: &Tree,
    theirs: &Tree,
) -> Result<Vec<Change>, PlanError> {
    let mut plan = PlanBuilder::new(dir);
    let changes = plan_merge(&mut plan, base, theirs)?;
    plan.finish()?.apply()?;
    Ok(changes)
}

/// Plans, into `plan` (rooted at the user's project: ours), the merge of every file of `base`
/// and `theirs`; returns the files changed or reported, by path. Files that stay as they are
/// are not listed.
///
/// # Errors
///
/// A file of the project cannot be read ([`PlanError::Read`], e.g. not UTF-8).
pub fn plan_merge(
    plan: &mut PlanBuilder,
    base: &Tree,
    theirs: &Tree,
) -> Result<Vec<Change>, PlanError> {
    let paths: BTreeSet<&String> = base.keys().chain(theirs.keys()).collect();
    let mut changes = Vec::new();
    for path in paths {
        let ours = plan.content(path)?;
        let base = base.get(path).map(String::as_str);
        let theirs = theirs.get(path).map(String::as_str);
        let outcome = match (base, ours.as_deref(), theirs) {
            (_, Some(o), Some(t)) if o == t => None,
            (None, None, Some(t)) => {
                plan.put(path, t.to_owned())?;
                Some(Outcome::Added)
            }
            (Some(b), None, Some(t)) => (b != t).then_some(Outcome::StaysDeleted),
            (Some(b), Some(o), None) if o == b => {
                plan.remove(path)?;
                Some(Outcome::Removed)
            }
            (Some(_), Some(_), None) => Some(Outcome::KeptChanged),
            (Some(b), Some(o), Some(t)) if o == b => {
                plan.put(path, t.to_owned())?;
                Some(Outcome::Updated)
            }
            (Some(b), Some(_), Some(t)) if t == b => None,
            (b, Some(o), Some(t)) => {
                let (merged, outcome) = match merge_text(b.unwrap_or_default(), o, t) {
                    Ok(merged) => (merged, Outcome::Merged),
                    Err(with_markers) => (with_markers, Outcome::Conflict),
                };
                plan.put(path, merged)?;
                Some(outcome)
            }
            (_, None, None) | (None, Some(_), None) => None,
        };
        if let Some(outcome) = outcome {
            changes.push(Change {
                path: path.clone(),
                outcome,
            });
        }
    }
    Ok(changes)
}

/// The line-based 3-way merge of `ours` and `theirs` against `base`: `Ok` when no change
/// overlaps, else `Err` with the overlapping regions between conflict markers (git's `diff3`
/// style, every marker on its own line).
pub fn merge_text(base: &str, ours: &str, theirs: &str) -> Result<String, String> {
    MergeOptions::new()
        .set_conflict_style(ConflictStyle::Diff3)
        .set_incomplete_hunk_style(IncompleteHunkStyle::Git)
        .merge(base, ours, theirs)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn tree(files: &[(&str, &str)]) -> Tree {
        files
            .iter()
            .map(|(path, content)| ((*path).to_owned(), (*content).to_owned()))
            .collect()
    }

    #[test]
    fn every_case_of_the_table() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, content: &str| {
            let full = dir.path().join(path);
            fs::create_dir_all(full.parent().unwrap()).unwrap();
            fs::write(full, content).unwrap();
        };
        let base = tree(&[
            ("same", "a\n"),
            ("user-only", "a\nb\n"),
            ("scaffold-only", "a\nb\n"),
            ("both", "a\nb\nc\nd\n"),
            ("clash", "a\nb\nc\n"),
            ("dropped", "old\n"),
            ("dropped-edited", "old\n"),
            ("deleted-by-user", "a\n"),
            ("deleted-unchanged", "a\n"),
        ]);
        let theirs = tree(&[
            ("same", "a\n"),
            ("user-only", "a\nb\n"),
            ("scaffold-only", "a\nB\n"),
            ("both", "a\nb\nc\nD\n"),
            ("clash", "a\nTHEIRS\nc\n"),
            ("deleted-by-user", "A\n"),
            ("deleted-unchanged", "a\n"),
            ("new", "new\n"),
            ("new-both", "theirs\n"),
            ("src/new/deep.rs", "deep\n"),
        ]);
        write("same", "a\n");
        write("user-only", "a\nb\nmine\n");
        write("scaffold-only", "a\nb\n");
        write("both", "A\nb\nc\nd\n");
        write("clash", "a\nOURS\nc\n");
        write("dropped", "old\n");
        write("dropped-edited", "old\nmine\n");
        write("new-both", "ours\n");
        write("user-file", "untouched\n");

        let mut plan = PlanBuilder::new(dir.path());
        let changes = plan_merge(&mut plan, &base, &theirs).unwrap();
        let outcomes: Vec<(&str, Outcome)> = changes
            .iter()
            .map(|c| (c.path.as_str(), c.outcome))
            .collect();
        assert_eq!(
            outcomes,
            [
                ("both", Outcome::Merged),
                ("clash", Outcome::Conflict),
                ("deleted-by-user", Outcome::StaysDeleted),
                ("dropped", Outcome::Removed),
                ("dropped-edited", Outcome::KeptChanged),
                ("new", Outcome::Added),
                ("new-both", Outcome::Conflict),
                ("scaffold-only", Outcome::Updated),
                ("src/new/deep.rs", Outcome::Added),
            ]
        );
        plan.finish().unwrap().apply().unwrap();
        let read = |path: &str| fs::read_to_string(dir.path().join(path)).ok();
        assert_eq!(read("both").as_deref(), Some("A\nb\nc\nD\n"));
        assert_eq!(
            read("clash").as_deref(),
            Some(
                "a\n<<<<<<< ours\nOURS\n||||||| original\nb\n=======\nTHEIRS\n>>>>>>> theirs\nc\n"
            )
        );
        assert_eq!(read("user-only").as_deref(), Some("a\nb\nmine\n"));
        assert_eq!(read("scaffold-only").as_deref(), Some("a\nB\n"));
        assert_eq!(read("dropped"), None);
        assert_eq!(read("dropped-edited").as_deref(), Some("old\nmine\n"));
        assert_eq!(read("deleted-by-user"), None);
        assert_eq!(read("deleted-unchanged"), None);
        assert_eq!(read("src/new/deep.rs").as_deref(), Some("deep\n"));
        assert!(read("new-both").unwrap().contains("<<<<<<< ours\nours\n"));
        assert_eq!(read("user-file").as_deref(), Some("untouched\n"));
        assert!(
            changes
                .iter()
                .filter(|c| c.outcome.needs_attention())
                .count()
                == 4
        );
    }

    #[test]
    fn adjacent_but_separate_edits_merge() {
        let base = "fn main() {\n    a();\n\n    b();\n}\n";
        let ours = "fn main() {\n    a();\n    mine();\n\n    b();\n}\n";
        let theirs = "fn main() {\n    a();\n\n    b();\n    theirs();\n}\n";
        assert_eq!(
            merge_text(base, ours, theirs).unwrap(),
            "fn main() {\n    a();\n    mine();\n\n    b();\n    theirs();\n}\n"
        );
    }
}
