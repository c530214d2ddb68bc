//! String formats as kube-openapi's `strfmt` registry checks them.
//!
//! Ports `k8s.io/kube-openapi/pkg/validation/strfmt` (`default.go` `IsUUID` and the `byte`
//! format's `govalidator.IsBase64` from `pkg/internal/third_party/govalidator/patterns.go`;
//! `date.go` `IsDate`, which is Go's `time.Parse("2006-01-02", s)`; `time.go` `IsDateTime`).
//! kube-apiserver's CEL `format` library (`k8s.io/apiserver/pkg/cel/library/format.go`)
//! validates `uuid`, `byte`, `date` and `datetime` with these.

use std::sync::LazyLock;

use regex::Regex;

/// `UUIDPattern`.
static UUID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
        .expect("a valid regular expression")
});

/// govalidator's `Base64`.
static BASE64: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$")
        .expect("a valid regular expression")
});

/// `DateTimePattern`, matched against the part after the date (`.` is any character, as in
/// the original).
static TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
        .expect("a valid regular expression")
});

/// `IsUUID`: 32 hex digits, the four dashes optional, any case.
pub(crate) fn is_uuid(text: &str) -> bool {
    UUID.is_match(text)
}

/// `IsBase64`: standard alphabet, padded, at least one group.
pub(crate) fn is_base64(text: &str) -> bool {
    BASE64.is_match(text)
}

/// `IsDate`: `YYYY-MM-DD` with two-digit month and day, a real day of that month.
pub(crate) fn is_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return false;
    }
    let digits = |range: std::ops::Range<usize>| {
        text.get(range)
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|s| s.parse::<u32>().ok())
    };
    let (Some(year), Some(month), Some(day)) = (digits(0..4), digits(5..7), digits(8..10)) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// `IsDateTime`: at least 4 characters; lower-cased and split on `t`, a date, then a time
/// with hours up to 23 and minutes and seconds up to 59, a fraction, and `z` or an offset.
pub(crate) fn is_date_time(text: &str) -> bool {
    if text.len() < 4 {
        return false;
    }
    let lower = text.to_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    TIME.captures(time)
        .is_some_and(|m| &m[1] <= "23" && &m[2] <= "59" && &m[3] <= "59")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_real_days() {
        assert!(is_date("2024-02-29"));
        assert!(!is_date("2023-02-29"));
        assert!(!is_date("2024-02-30"));
        assert!(!is_date("2024-1-01"));
        assert!(!is_date("2024-13-01"));
        assert!(!is_date("2024-01-01T00:00:00Z"));
    }

    #[test]
    fn date_times_need_a_zone() {
        assert!(is_date_time("2024-01-01T00:00:00Z"));
        assert!(is_date_time("2024-01-01t23:59:59.5+01:00"));
        assert!(!is_date_time("2024-01-01T24:00:00Z"));
        assert!(!is_date_time("2024-01-01 00:00:00Z"));
        assert!(!is_date_time("2024-01-01T00:00:00"));
    }

    #[test]
    fn uuids_and_base64() {
        assert!(is_uuid("123E4567-e89b-12d3-a456-426614174000"));
        assert!(is_uuid("123e4567e89b12d3a456426614174000"));
        assert!(!is_uuid("123e4567-e89b-12d3-a456-42661417400"));
        assert!(is_base64("YWJj"));
        assert!(is_base64("YQ=="));
        assert!(!is_base64(""));
        assert!(!is_base64("YQ="));
        assert!(!is_base64("YW-j"));
    }
}
