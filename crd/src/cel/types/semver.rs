//! `kubernetes.Semver`: `github.com/blang/semver/v4`'s `Version` as a CEL value.
//!
//! Ports blang/semver v4 `semver.go` (`Parse`, `NewPRVersion`, `Compare`, `PRVersion.Compare`)
//! with its error texts, which kube-apiserver's `semver()` reports as they are
//! (`k8s.io/apiserver/pkg/cel/library/semverlib.go`, with its `normalizeAndParse` for
//! `semver(s, true)`); the CEL type is `k8s.io/apiserver/pkg/cel/semver.go` (equal when
//! `Compare` is 0, so build metadata is ignored). The `semver` crate is stricter in other
//! places and has other error texts, so it cannot stand in.

use std::cmp::Ordering;

use cel::common::types::Type;
use cel::common::value::{StaticVal, Val};

use super::golang::quote;

/// The CEL type of a version (`apiservercel.SemverType`).
pub(crate) static SEMVER_TYPE: Type = Type::new_unspecified_type("kubernetes.Semver");

/// A semantic version: `major.minor.patch[-pre][+build]`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Semver {
    pub(crate) major: u64,
    pub(crate) minor: u64,
    pub(crate) patch: u64,
    pre: Vec<Prerelease>,
    build: Vec<String>,
}

/// One dot-separated prerelease identifier.
#[derive(Clone, Debug, PartialEq)]
enum Prerelease {
    Num(u64),
    Alpha(String),
}

/// blang's `alphanum`: ASCII letters, digits and `-`.
fn alphanum(s: &str) -> bool {
    s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

fn numeric(s: &str) -> bool {
    s.chars().all(|c| c.is_ascii_digit())
}

fn has_leading_zeroes(s: &str) -> bool {
    s.len() > 1 && s.starts_with('0')
}

/// `strconv.ParseUint(s, 10, 64)` on digits only.
fn parse_uint(s: &str) -> Result<u64, String> {
    if s.is_empty() {
        return Err(format!(
            "strconv.ParseUint: parsing {}: invalid syntax",
            quote(s)
        ));
    }
    s.parse().map_err(|_| {
        format!(
            "strconv.ParseUint: parsing {}: value out of range",
            quote(s)
        )
    })
}

/// A numeric part: only digits, no leading zero.
fn number(s: &str, what: &str) -> Result<u64, String> {
    if !numeric(s) {
        return Err(format!(
            "Invalid character(s) found in {what} number {}",
            quote(s)
        ));
    }
    if has_leading_zeroes(s) {
        let what = what[..1].to_uppercase() + &what[1..];
        return Err(format!(
            "{what} number must not contain leading zeroes {}",
            quote(s)
        ));
    }
    parse_uint(s)
}

impl Semver {
    /// `semver.Parse`.
    pub(crate) fn parse(s: &str) -> Result<Semver, String> {
        if s.is_empty() {
            return Err("Version string empty".into());
        }
        let parts: Vec<&str> = s.splitn(3, '.').collect();
        let [major, minor, rest] = parts[..] else {
            return Err("No Major.Minor.Patch elements found".into());
        };
        let major = number(major, "major")?;
        let minor = number(minor, "minor")?;
        let mut patch = rest;
        let mut build: Vec<&str> = Vec::new();
        let mut pre: Vec<&str> = Vec::new();
        if let Some((before, after)) = patch.split_once('+') {
            build = after.split('.').collect();
            patch = before;
        }
        if let Some((before, after)) = patch.split_once('-') {
            pre = after.split('.').collect();
            patch = before;
        }
        let patch = number(patch, "patch")?;
        let pre = pre
            .into_iter()
            .map(Prerelease::parse)
            .collect::<Result<Vec<_>, _>>()?;
        for part in &build {
            if part.is_empty() {
                return Err("Build meta data is empty".into());
            }
            if !alphanum(part) {
                return Err(format!(
                    "Invalid character(s) found in build meta data {}",
                    quote(part)
                ));
            }
        }
        let build = build.into_iter().map(str::to_owned).collect();
        Ok(Semver {
            major,
            minor,
            patch,
            pre,
            build,
        })
    }

    /// `normalizeAndParse` (`semver(s, true)`): drops a leading `v` and leading zeros, and
    /// completes `1` and `1.2` to `1.0.0` and `1.2.0`.
    pub(crate) fn parse_normalized(s: &str) -> Result<Semver, String> {
        let s = s.strip_prefix('v').unwrap_or(s);
        let mut parts: Vec<String> = s.splitn(3, '.').map(str::to_owned).collect();
        for part in &mut parts {
            if part.len() > 1 {
                let trimmed = part.trim_start_matches('0');
                *part = if trimmed.starts_with(|c: char| c.is_ascii_digit()) {
                    trimmed.to_owned()
                } else {
                    format!("0{trimmed}")
                };
            }
        }
        if parts.len() < 3 {
            if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
                return Err("short version cannot contain PreRelease/Build meta data".into());
            }
            parts.resize(3, "0".into());
        }
        Semver::parse(&parts.join("."))
    }

    /// `Version.Compare`: by major, minor, patch, then prerelease (none is greater); build
    /// metadata does not count.
    pub(crate) fn compare(&self, other: &Semver) -> Ordering {
        let by_numbers =
            (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch));
        if by_numbers != Ordering::Equal {
            return by_numbers;
        }
        match (self.pre.is_empty(), other.pre.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => {
                for (a, b) in self.pre.iter().zip(&other.pre) {
                    let by_part = a.compare(b);
                    if by_part != Ordering::Equal {
                        return by_part;
                    }
                }
                self.pre.len().cmp(&other.pre.len())
            }
        }
    }
}

impl Prerelease {
    /// `NewPRVersion`.
    fn parse(s: &str) -> Result<Prerelease, String> {
        if s.is_empty() {
            return Err("Prerelease is empty".into());
        }
        if numeric(s) {
            if has_leading_zeroes(s) {
                return Err(format!(
                    "Numeric PreRelease version must not contain leading zeroes {}",
                    quote(s)
                ));
            }
            return parse_uint(s).map(Prerelease::Num);
        }
        if alphanum(s) {
            return Ok(Prerelease::Alpha(s.to_owned()));
        }
        Err(format!(
            "Invalid character(s) found in prerelease {}",
            quote(s)
        ))
    }

    /// `PRVersion.Compare`: numbers below identifiers, identifiers by bytes.
    fn compare(&self, other: &Prerelease) -> Ordering {
        match (self, other) {
            (Prerelease::Num(a), Prerelease::Num(b)) => a.cmp(b),
            (Prerelease::Num(_), Prerelease::Alpha(_)) => Ordering::Less,
            (Prerelease::Alpha(_), Prerelease::Num(_)) => Ordering::Greater,
            (Prerelease::Alpha(a), Prerelease::Alpha(b)) => a.as_bytes().cmp(b.as_bytes()),
        }
    }
}

impl Val for Semver {
    fn get_type(&self) -> &Type {
        &SEMVER_TYPE
    }

    fn cel_type() -> &'static Type {
        &SEMVER_TYPE
    }

    fn equals(&self, other: &dyn Val) -> bool {
        other
            .downcast_ref::<Semver>()
            .is_some_and(|o| self.compare(o) == Ordering::Equal)
    }

    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

impl StaticVal for Semver {}

#[cfg(test)]
mod tests {
    use super::Semver;
    use std::cmp::Ordering;

    fn v(s: &str) -> Semver {
        Semver::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn parse_errors_are_blangs() {
        let cases = [
            ("", "Version string empty"),
            ("1.0", "No Major.Minor.Patch elements found"),
            (
                "v1.0.0",
                r#"Invalid character(s) found in major number "v1""#,
            ),
            (
                "01.0.0",
                r#"Major number must not contain leading zeroes "01""#,
            ),
            (
                "1.00.0",
                r#"Minor number must not contain leading zeroes "00""#,
            ),
            ("1.0.x", r#"Invalid character(s) found in patch number "x""#),
            (
                "1.0.0-01",
                r#"Numeric PreRelease version must not contain leading zeroes "01""#,
            ),
            ("1.0.0-", "Prerelease is empty"),
            (
                "1.0.0-a_b",
                r#"Invalid character(s) found in prerelease "a_b""#,
            ),
            ("1.0.0+", "Build meta data is empty"),
            (
                "1.0.0.0",
                r#"Invalid character(s) found in patch number "0.0""#,
            ),
            ("1..0", r#"strconv.ParseUint: parsing "": invalid syntax"#),
        ];
        for (input, error) in cases {
            assert_eq!(Semver::parse(input), Err(error.to_owned()), "{input}");
        }
    }

    #[test]
    fn precedence_follows_semver_and_ignores_build() {
        let ordered = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
            "1.0.1",
            "1.1.0",
            "2.0.0",
        ];
        for pair in ordered.windows(2) {
            assert_eq!(v(pair[0]).compare(&v(pair[1])), Ordering::Less, "{pair:?}");
        }
        assert_eq!(v("1.0.0+a").compare(&v("1.0.0+b")), Ordering::Equal);
    }

    #[test]
    fn normalized_parsing_completes_short_versions() {
        assert_eq!(
            Semver::parse_normalized("v1").map(|v| (v.major, v.minor, v.patch)),
            Ok((1, 0, 0))
        );
        assert_eq!(
            Semver::parse_normalized("v01.02.003").map(|v| (v.major, v.minor, v.patch)),
            Ok((1, 2, 3))
        );
        assert_eq!(
            Semver::parse_normalized("1.0-beta"),
            Err("short version cannot contain PreRelease/Build meta data".into())
        );
    }
}
