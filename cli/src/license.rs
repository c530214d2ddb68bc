//! License headers: Kubebuilder's boilerplate (`hack/boilerplate.go.txt`), as comments.
//!
//! `--license apache2` (the default) puts the Apache 2.0 notice, `Copyright <year> <owner>.`, at
//! the top of every generated file, in that file's comment syntax; `--license none` puts nothing.
//! The year is taken from `SOURCE_DATE_EPOCH` when set (reproducible output, as in
//! reproducible-builds.org's convention), else from the clock.

use std::time::{SystemTime, UNIX_EPOCH};

use askama::Template;

use crate::project::License;

/// The license boilerplate (`templates/license/apache2.txt`), before it becomes comments.
#[derive(Template)]
#[template(path = "license/apache2.txt", escape = "none")]
struct Boilerplate<'a> {
    /// The copyright year.
    year: i64,
    /// The copyright holder, or "".
    owner: &'a str,
}

/// The license header of one project, rendered once for each comment syntax.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Headers {
    /// `# ` comment lines and one empty line (TOML, YAML, Makefile, Dockerfile, ignore files,
    /// PROJECT), or "".
    pub hash: String,
    /// `// ` comment lines and one empty line (Rust), or "".
    pub rust: String,
    /// An HTML comment block and one empty line (Markdown), or "".
    pub html: String,
}

/// The license header could not be made.
#[derive(Debug, thiserror::Error)]
pub enum LicenseError {
    /// `SOURCE_DATE_EPOCH` is set but is not a number of seconds.
    #[error(
        "invalid SOURCE_DATE_EPOCH {0:?}: it must be a whole number of seconds since 1970-01-01 UTC; fix or unset it"
    )]
    SourceDateEpoch(String),
    /// The template failed to render (a bug).
    #[error("cannot render the license header: {0}")]
    Render(#[from] askama::Error),
}

impl Headers {
    /// The headers of `license`, copyright `year` and `owner` (omitted when empty).
    pub fn new(license: License, year: i64, owner: &str) -> Result<Self, LicenseError> {
        match license {
            License::None => Ok(Self::default()),
            License::Apache2 => {
                let text = Boilerplate { year, owner }.render()?;
                Ok(Self {
                    hash: line_comments(&text, "#"),
                    rust: line_comments(&text, "//"),
                    html: format!("<!--\n{}\n-->\n\n", text.trim_end()),
                })
            }
        }
    }
}

/// `text` with every line prefixed by `prefix` and a space (just `prefix` on empty lines), then
/// an empty line.
fn line_comments(text: &str, prefix: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for line in text.trim_end().lines() {
        out.push_str(prefix);
        if !line.is_empty() {
            out.push(' ');
            out.push_str(line);
        }
        out.push('\n');
    }
    out.push('\n');
    out
}

/// The copyright year: from `source_date_epoch` (the variable's value) when given, else from the
/// system clock; both in UTC.
pub fn copyright_year(source_date_epoch: Option<&str>) -> Result<i64, LicenseError> {
    let seconds = match source_date_epoch {
        Some(value) => value
            .trim()
            .parse::<i64>()
            .map_err(|_| LicenseError::SourceDateEpoch(value.to_owned()))?,
        None => SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX)),
    };
    Ok(year_of_unix_seconds(seconds))
}

/// The copyright year written in a generated file's license header (`# Copyright 2026 The
/// Authors.`, in any comment syntax): the first 4-digit number after `Copyright ` on one of the
/// file's first lines; `None` without a header (`--license none`).
///
/// Re-rendering a project (`kbr alpha generate`, `kbr alpha update`) keeps this year, as
/// Kubebuilder keeps `hack/boilerplate.go.txt`, so headers do not change on New Year's Day.
pub fn header_year(text: &str) -> Option<i64> {
    text.lines().take(3).find_map(|line| {
        let (_, rest) = line.split_once("Copyright ")?;
        let digits = rest.get(..4)?;
        let after = rest[4..].chars().next();
        if !digits.bytes().all(|b| b.is_ascii_digit()) || after.is_some_and(|c| c.is_ascii_digit())
        {
            return None;
        }
        digits.parse().ok()
    })
}

/// `SOURCE_DATE_EPOCH` for January 1st of `year`, 00:00:00 UTC, so that [`copyright_year`]
/// gives `year` back (Howard Hinnant's `days_from_civil`).
pub fn start_of_year(year: i64) -> i64 {
    // March-based years: January 1st belongs to the previous one.
    let y = year - 1;
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    // January is month 10 of the March-based year: day 306 of it.
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + 306;
    (era * 146_097 + doe - 719_468) * 86_400
}

/// The proleptic Gregorian year of a Unix timestamp (Howard Hinnant's `civil_from_days`).
fn year_of_unix_seconds(seconds: i64) -> i64 {
    let days = seconds.div_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    yoe + era * 400 + i64::from(month <= 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn years() {
        assert_eq!(year_of_unix_seconds(0), 1970);
        assert_eq!(year_of_unix_seconds(951_782_400), 2000); // 2000-02-29
        assert_eq!(year_of_unix_seconds(1_767_225_599), 2025); // 2025-12-31T23:59:59Z
        assert_eq!(year_of_unix_seconds(1_767_225_600), 2026); // 2026-01-01T00:00:00Z
        assert_eq!(year_of_unix_seconds(-1), 1969);
        assert_eq!(copyright_year(Some("1767225600")).unwrap(), 2026);
        assert!(matches!(
            copyright_year(Some("yesterday")),
            Err(LicenseError::SourceDateEpoch(_))
        ));
        assert!(copyright_year(None).unwrap() >= 2025);
    }

    #[test]
    fn year_round_trips() {
        for year in [1970, 1999, 2000, 2024, 2026, 2100] {
            assert_eq!(year_of_unix_seconds(start_of_year(year)), year);
            assert_eq!(year_of_unix_seconds(start_of_year(year) - 1), year - 1);
        }
        assert_eq!(start_of_year(1970), 0);
        assert_eq!(start_of_year(2026), 1_767_225_600);
    }

    #[test]
    fn header_years() {
        let headers = Headers::new(License::Apache2, 2031, "The Knative Authors").unwrap();
        assert_eq!(header_year(&headers.hash), Some(2031));
        assert_eq!(header_year(&headers.html), Some(2031));
        assert_eq!(header_year("# Copyright 2026.\n"), Some(2026));
        assert_eq!(
            header_year("# Code generated by kbr.\ncliVersion: 0.1.0\n"),
            None
        );
        assert_eq!(header_year("# Copyright 20265.\n"), None);
        assert_eq!(header_year("# Copyright the authors\n"), None);
    }

    #[test]
    fn apache_headers() {
        let headers = Headers::new(License::Apache2, 2026, "The Knative Authors").unwrap();
        assert!(
            headers
                .rust
                .starts_with("// Copyright 2026 The Knative Authors.\n//\n// Licensed under")
        );
        assert!(
            headers
                .rust
                .ends_with("// limitations under the License.\n\n")
        );
        assert!(
            headers
                .hash
                .contains("#     http://www.apache.org/licenses/LICENSE-2.0\n")
        );
        assert!(
            headers
                .html
                .starts_with("<!--\nCopyright 2026 The Knative Authors.\n")
        );
        assert!(
            headers
                .html
                .ends_with("limitations under the License.\n-->\n\n")
        );
        let anonymous = Headers::new(License::Apache2, 2026, "").unwrap();
        assert!(anonymous.hash.starts_with("# Copyright 2026.\n"));
    }

    #[test]
    fn no_license() {
        assert_eq!(
            Headers::new(License::None, 2026, "x").unwrap(),
            Headers::default()
        );
    }
}
