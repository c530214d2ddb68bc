//! Medians, spreads and Markdown tables for the reports.

/// Median, minimum and maximum of several runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// The median (mean of the two middle values for an even count).
    pub median: f64,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
    /// How many values.
    pub runs: usize,
}

impl Stats {
    /// The statistics of `values`; `None` when empty.
    #[must_use]
    pub fn of(values: &[f64]) -> Option<Self> {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let (first, last) = (*sorted.first()?, *sorted.last()?);
        let mid = sorted.len() / 2;
        let median = if sorted.len().is_multiple_of(2) {
            f64::midpoint(sorted[mid - 1], sorted[mid])
        } else {
            sorted[mid]
        };
        Some(Self {
            median,
            min: first,
            max: last,
            runs: sorted.len(),
        })
    }

    /// `median (min–max)` with `decimals` decimals; just the median for a single run.
    #[must_use]
    pub fn show(&self, decimals: usize) -> String {
        if self.runs < 2 {
            return format!("{:.decimals$}", self.median);
        }
        format!(
            "{:.decimals$} ({:.decimals$}–{:.decimals$})",
            self.median, self.min, self.max
        )
    }
}

/// `Stats::show` of `values`, or `n/a`.
#[must_use]
pub fn show(values: &[f64], decimals: usize) -> String {
    Stats::of(values).map_or_else(|| "n/a".to_string(), |s| s.show(decimals))
}

/// The median of `values`, or NaN.
#[must_use]
pub fn median(values: &[f64]) -> f64 {
    Stats::of(values).map_or(f64::NAN, |s| s.median)
}

/// `yes` / `**no**` for a target check.
#[must_use]
pub fn met(ok: bool) -> &'static str {
    if ok { "yes" } else { "**no**" }
}

/// A Markdown table.
#[must_use]
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = format!("| {} |\n", headers.join(" | "));
    out.push_str(&format!("|{}\n", "---|".repeat(headers.len())));
    for row in rows {
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_spreads() {
        let Some(odd) = Stats::of(&[3.0, 1.0, 2.0]) else {
            panic!("three values have statistics");
        };
        assert_eq!((odd.median, odd.min, odd.max), (2.0, 1.0, 3.0));
        assert_eq!(odd.show(1), "2.0 (1.0–3.0)");
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(show(&[1.25], 1), "1.2");
        assert_eq!(show(&[], 1), "n/a");
    }
}
