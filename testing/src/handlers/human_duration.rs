//! Ages and durations as kubectl shows them: apimachinery `pkg/util/duration/duration.go`
//! (`HumanDuration`) and the printers' `translateTimestampSince`
//! (`pkg/printers/internalversion/printers.go`).

use k8s_openapi::jiff::Timestamp;

/// The age of an RFC 3339 `timestamp` at `now` as kubectl shows it; `<invalid>` for one that
/// is not a timestamp, `<unknown>` for none.
pub(crate) fn age(timestamp: &str, now: Timestamp) -> String {
    if timestamp.is_empty() {
        return "<unknown>".into();
    }
    match timestamp.parse::<Timestamp>() {
        Ok(then) => human_duration(now.as_second() - then.as_second()),
        Err(_) => "<invalid>".into(),
    }
}

/// apimachinery `pkg/util/duration/duration.go`, `HumanDuration`, for whole `seconds`: up to
/// two units, coarser as the duration grows; up to a second in the future counts as `0s`.
pub(crate) fn human_duration(seconds: i64) -> String {
    const MINUTE: i64 = 60;
    const HOUR: i64 = 60 * MINUTE;
    const DAY: i64 = 24 * HOUR;
    const YEAR: i64 = 365 * DAY;
    let two = |big: i64, big_unit: &str, small: i64, small_unit: &str| {
        if small == 0 {
            format!("{big}{big_unit}")
        } else {
            format!("{big}{big_unit}{small}{small_unit}")
        }
    };
    match seconds {
        s if s < -1 => "<invalid>".into(),
        s if s < 0 => "0s".into(),
        s if s < 2 * MINUTE => format!("{s}s"),
        s if s < 10 * MINUTE => two(s / MINUTE, "m", s % MINUTE, "s"),
        s if s < 3 * HOUR => format!("{}m", s / MINUTE),
        s if s < 8 * HOUR => two(s / HOUR, "h", s % HOUR / MINUTE, "m"),
        s if s < 2 * DAY => format!("{}h", s / HOUR),
        s if s < 8 * DAY => two(s / DAY, "d", s % DAY / HOUR, "h"),
        s if s < 2 * YEAR => format!("{}d", s / DAY),
        s if s < 8 * YEAR => two(s / YEAR, "y", s % YEAR / DAY, "d"),
        s => format!("{}y", s / YEAR),
    }
}

#[cfg(test)]
mod tests {
    use super::human_duration;

    #[test]
    fn ages_read_like_kubectls() {
        let cases = [
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (150, "2m30s"),
            (600, "10m"),
            (3 * 3600 + 60, "3h1m"),
            (8 * 3600, "8h"),
            (2 * 86400 + 3600, "2d1h"),
            (8 * 86400, "8d"),
            (3 * 365 * 86400 + 86400, "3y1d"),
            (9 * 365 * 86400, "9y"),
        ];
        for (seconds, text) in cases {
            assert_eq!(human_duration(seconds), text, "{seconds}s");
        }
    }
}
