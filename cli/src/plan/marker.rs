//! Scaffold markers: `// +kbr:scaffold:<name>` (Rust) and `# +kbr:scaffold:<name>` (YAML).
//!
//! Kubebuilder's machinery (`pkg/machinery/scaffold.go`, `insertStrings`): a fragment is inserted
//! immediately before the marker line, unless the file already holds it. Markers are matched
//! after trimming, so indentation is free; everything outside the inserted lines is untouched.

use std::fmt;

/// The comment syntax of a marker, chosen by file type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommentStyle {
    /// `//`, for Rust.
    Rust,
    /// `#`, for YAML, TOML and Makefiles.
    Hash,
}

/// A marker line, e.g. `// +kbr:scaffold:scheme`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    /// The comment syntax.
    pub style: CommentStyle,
    /// The marker name after `+kbr:scaffold:`.
    pub name: &'static str,
}

impl Marker {
    /// A Rust marker `// +kbr:scaffold:<name>`.
    pub const fn rust(name: &'static str) -> Self {
        Self {
            style: CommentStyle::Rust,
            name,
        }
    }

    /// A YAML marker `# +kbr:scaffold:<name>`.
    pub const fn hash(name: &'static str) -> Self {
        Self {
            style: CommentStyle::Hash,
            name,
        }
    }

    /// Whether `line` is this marker (ignoring surrounding whitespace).
    fn matches(&self, line: &str) -> bool {
        let prefix = match self.style {
            CommentStyle::Rust => "//",
            CommentStyle::Hash => "#",
        };
        line.trim()
            .strip_prefix(prefix)
            .map(str::trim_start)
            .and_then(|rest| rest.strip_prefix("+kbr:scaffold:"))
            .is_some_and(|name| name.trim_end() == self.name)
    }
}

impl fmt::Display for Marker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.style {
            CommentStyle::Rust => write!(f, "// +kbr:scaffold:{}", self.name),
            CommentStyle::Hash => write!(f, "# +kbr:scaffold:{}", self.name),
        }
    }
}

/// The outcome of [`insert`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Insertion {
    /// The fragment was inserted; the new content.
    Inserted(String),
    /// The file already holds the fragment; nothing to do.
    AlreadyPresent,
    /// The file has no such marker.
    MarkerMissing,
}

/// Inserts `fragment` (whole lines, ending with `\n`) before the first line of `content` that is
/// `marker`, unless `content` already holds the fragment: for YAML its lines consecutively, for
/// Rust each of its lines anywhere (rustfmt and users reorder `mod` and `use` items).
pub fn insert(content: &str, marker: Marker, fragment: &str) -> Insertion {
    if contains_lines(content, fragment, marker.style) {
        return Insertion::AlreadyPresent;
    }
    let mut offset = 0;
    for line in content.split_inclusive('\n') {
        if marker.matches(line) {
            let mut out = String::with_capacity(content.len() + fragment.len() + 1);
            out.push_str(&content[..offset]);
            out.push_str(fragment);
            if !fragment.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&content[offset..]);
            return Insertion::Inserted(out);
        }
        offset += line.len();
    }
    Insertion::MarkerMissing
}

/// Like [`insert`], but keeps the item declarations directly above the marker sorted (the way
/// rustfmt's `reorder_modules` orders `mod` lines): the fragment goes before the first of them
/// that sorts after it. Attribute lines (`#[...]`) stay with the item below them; `r#` is
/// ignored when comparing.
pub fn insert_sorted(content: &str, marker: Marker, fragment: &str) -> Insertion {
    if contains_lines(content, fragment, marker.style) {
        return Insertion::AlreadyPresent;
    }
    let lines: Vec<&str> = content.split_inclusive('\n').collect();
    let Some(marker_at) = lines.iter().position(|line| marker.matches(line)) else {
        return Insertion::MarkerMissing;
    };
    let is_item = |line: &str| {
        let line = line.trim();
        !line.is_empty() && !line.starts_with("//")
    };
    let mut start = marker_at;
    while start > 0 && is_item(lines[start - 1]) {
        start -= 1;
    }
    let new_key = sort_key(fragment.lines());
    let mut at = marker_at;
    let mut entry_start = start;
    for i in start..marker_at {
        if lines[i].trim_start().starts_with("#[") {
            continue;
        }
        if sort_key(lines[entry_start..=i].iter().copied()) > new_key {
            at = entry_start;
            break;
        }
        entry_start = i + 1;
    }
    let mut out = String::with_capacity(content.len() + fragment.len() + 1);
    out.extend(lines[..at].iter().copied());
    out.push_str(fragment);
    if !fragment.ends_with('\n') {
        out.push('\n');
    }
    out.extend(lines[at..].iter().copied());
    Insertion::Inserted(out)
}

/// The sort key of an item: its last line, trimmed, without `r#`.
fn sort_key<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    lines
        .last()
        .map(|line| line.trim().replace("r#", ""))
        .unwrap_or_default()
}

/// Whether `content` already holds `fragment`.
///
/// YAML (`#` markers): the fragment's lines appear as consecutive whole lines (trailing
/// whitespace ignored) — list entries and blocks repeat the same lines for different kinds.
/// Rust (`//` markers): every line of the fragment is a whole line of `content` somewhere
/// (surrounding whitespace ignored), because rustfmt reorders `mod` and `use` items and the
/// user may add their own between them; each scaffolded Rust line (`mod x;`,
/// `scheme.add::<X>();`, …) names its kind, so it is never present by accident.
fn contains_lines(content: &str, fragment: &str, style: CommentStyle) -> bool {
    match style {
        CommentStyle::Hash => {
            let needle: Vec<&str> = fragment.lines().map(str::trim_end).collect();
            if needle.is_empty() {
                return true;
            }
            let haystack: Vec<&str> = content.lines().map(str::trim_end).collect();
            haystack
                .windows(needle.len())
                .any(|window| window == needle)
        }
        CommentStyle::Rust => {
            let haystack: std::collections::HashSet<&str> =
                content.lines().map(str::trim).collect();
            fragment
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .all(|line| haystack.contains(line))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIB: &str = "const A: &[fn()] = &[\n    a::f,\n    // +kbr:scaffold:scheme\n];\n";

    #[test]
    fn inserts_before_marker() {
        let out = insert(LIB, Marker::rust("scheme"), "    b::f,\n");
        assert_eq!(
            out,
            Insertion::Inserted(
                "const A: &[fn()] = &[\n    a::f,\n    b::f,\n    // +kbr:scaffold:scheme\n];\n"
                    .into()
            )
        );
    }

    #[test]
    fn idempotent() {
        assert_eq!(
            insert(LIB, Marker::rust("scheme"), "    a::f,\n"),
            Insertion::AlreadyPresent
        );
        // A longer line that merely contains the fragment is not a match.
        assert!(matches!(
            insert(LIB, Marker::rust("scheme"), "    a::f\n"),
            Insertion::Inserted(_)
        ));
    }

    #[test]
    fn missing_marker() {
        assert_eq!(
            insert(LIB, Marker::rust("builder"), "x\n"),
            Insertion::MarkerMissing
        );
        // A YAML marker does not match a Rust comment.
        assert_eq!(
            insert(LIB, Marker::hash("scheme"), "x\n"),
            Insertion::MarkerMissing
        );
    }

    #[test]
    fn sorted_insertion() {
        let m = Marker::rust("groups");
        let base = "//! Docs.\n\n// +kbr:scaffold:groups\n";
        let Insertion::Inserted(one) = insert_sorted(base, m, "pub mod serving;\n") else {
            panic!("not inserted")
        };
        assert_eq!(
            one,
            "//! Docs.\n\npub mod serving;\n// +kbr:scaffold:groups\n"
        );
        let Insertion::Inserted(two) = insert_sorted(&one, m, "pub mod eventing;\n") else {
            panic!("not inserted")
        };
        let fragment = "#[allow(clippy::module_inception)]\npub mod api;\n";
        let Insertion::Inserted(three) = insert_sorted(&two, m, fragment) else {
            panic!("not inserted")
        };
        let Insertion::Inserted(four) = insert_sorted(&three, m, "pub mod r#match;\n") else {
            panic!("not inserted")
        };
        let Insertion::Inserted(five) = insert_sorted(&four, m, "pub mod zeta;\n") else {
            panic!("not inserted")
        };
        assert_eq!(
            five,
            "//! Docs.\n\n#[allow(clippy::module_inception)]\npub mod api;\npub mod eventing;\npub mod r#match;\npub mod serving;\npub mod zeta;\n// +kbr:scaffold:groups\n"
        );
        assert_eq!(
            insert_sorted(&five, m, "pub mod eventing;\n"),
            Insertion::AlreadyPresent
        );
    }

    #[test]
    fn rust_fragments_split_by_user_lines_are_still_present() {
        // `mod x; pub use x::X;` after the user added a module that rustfmt sorted between.
        let m = Marker::rust("kinds");
        let lib = "mod alpha;\nmod helpers;\npub use alpha::Alpha;\n// +kbr:scaffold:kinds\n";
        assert_eq!(
            insert(lib, m, "mod alpha;\npub use alpha::Alpha;\n"),
            Insertion::AlreadyPresent
        );
        assert_eq!(
            insert_sorted(lib, m, "    mod alpha;\n"),
            Insertion::AlreadyPresent,
            "indentation is ignored"
        );
        // YAML blocks must still be consecutive: the same lines repeat for other kinds.
        let yaml = "- a\n- x\n- b\n# +kbr:scaffold:k\n";
        assert!(matches!(
            insert(yaml, Marker::hash("k"), "- a\n- b\n"),
            Insertion::Inserted(_)
        ));
    }

    #[test]
    fn yaml_marker() {
        let yaml = "resources:\n# +kbr:scaffold:crdkustomizeresource\n";
        assert_eq!(
            insert(
                yaml,
                Marker::hash("crdkustomizeresource"),
                "- bases/a.yaml\n"
            ),
            Insertion::Inserted(
                "resources:\n- bases/a.yaml\n# +kbr:scaffold:crdkustomizeresource\n".into()
            )
        );
        assert_eq!(
            Marker::hash("x").to_string(),
            "# +kbr:scaffold:x",
            "display"
        );
    }
}
