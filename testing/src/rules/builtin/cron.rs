//! A CronJob's `spec.schedule` as kube-apiserver parses it (`pkg/apis/batch/validation`,
//! `validateScheduleFormat`, with robfig/cron v3's standard parser): five fields (minute, hour,
//! day of month, month, day of week) or a descriptor (`@yearly`, `@annually`, `@monthly`,
//! `@weekly`, `@daily`, `@midnight`, `@hourly`, `@every <duration>`), each field a list of
//! `*`, `?`, numbers or names, ranges and steps; no `TZ=`/`CRON_TZ=` prefix. The errors are
//! the parser's texts.

/// Why `schedule` does not parse, in the parser's words; `None` when it does.
pub(crate) fn schedule_error(schedule: &str) -> Option<String> {
    if schedule.starts_with("TZ=") || schedule.starts_with("CRON_TZ=") {
        return Some("cannot use TZ or CRON_TZ in schedule, use timeZone field instead".into());
    }
    let fields: Vec<&str> = schedule.split_whitespace().collect();
    if let Some(descriptor) = schedule.trim().strip_prefix('@') {
        return match descriptor {
            "yearly" | "annually" | "monthly" | "weekly" | "daily" | "midnight" | "hourly" => None,
            d if d.starts_with("every ") => None,
            _ => Some(format!("unrecognized descriptor: {}", schedule.trim())),
        };
    }
    if fields.len() != 5 {
        return Some(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    const MONTHS: &[&str] = &[
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    const DAYS: &[&str] = &["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
    let bounds: [(i64, i64, &[&str], i64); 5] = [
        (0, 59, &[], 0),
        (0, 23, &[], 0),
        (1, 31, &[], 0),
        (1, 12, MONTHS, 1),
        (0, 6, DAYS, 0),
    ];
    for (field, (min, max, names, first)) in fields.iter().zip(bounds) {
        for part in field.split(',') {
            if let Some(error) = range_error(part, min, max, names, first) {
                return Some(error);
            }
        }
    }
    None
}

/// One comma-separated part of a field (`getRange`).
fn range_error(expr: &str, min: i64, max: i64, names: &[&str], first: i64) -> Option<String> {
    let steps: Vec<&str> = expr.split('/').collect();
    let range: Vec<&str> = steps[0].split('-').collect();
    let number = |text: &str| -> Result<i64, String> {
        if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(text)) {
            return Ok(i as i64 + first);
        }
        match text.parse::<i64>() {
            Ok(n) if n < 0 => Err(format!("negative number ({n}) not allowed: {text}")),
            Ok(n) => Ok(n),
            Err(_) => Err(format!(
                "failed to parse int from {text}: strconv.Atoi: parsing {text:?}: invalid syntax"
            )),
        }
    };
    let (start, end) = if range[0] == "*" || range[0] == "?" {
        (min, max)
    } else {
        let start = match number(range[0]) {
            Ok(n) => n,
            Err(e) => return Some(e),
        };
        let end = match range.len() {
            1 => start,
            2 => match number(range[1]) {
                Ok(n) => n,
                Err(e) => return Some(e),
            },
            _ => return Some(format!("too many hyphens: {expr}")),
        };
        (start, end)
    };
    match steps.len() {
        1 => {}
        2 => match number(steps[1]) {
            Ok(0) => return Some(format!("step of range should be a positive number: {expr}")),
            Ok(_) => {}
            Err(e) => return Some(e),
        },
        _ => return Some(format!("too many slashes: {expr}")),
    }
    if start < min {
        return Some(format!(
            "beginning of range ({start}) below minimum ({min}): {expr}"
        ));
    }
    if end > max {
        return Some(format!(
            "end of range ({end}) above maximum ({max}): {expr}"
        ));
    }
    if start > end {
        return Some(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::schedule_error;

    #[test]
    fn schedules_as_robfig_cron_parses_them() {
        assert_eq!(schedule_error("*/5 * * * *"), None);
        assert_eq!(schedule_error("0 9 * JAN-MAR mon-fri"), None);
        assert_eq!(schedule_error("@hourly"), None);
        assert_eq!(
            schedule_error("not a schedule").as_deref(),
            Some("expected exactly 5 fields, found 3: [not a schedule]")
        );
        assert_eq!(
            schedule_error("61 * * * *").as_deref(),
            Some("end of range (61) above maximum (59): 61")
        );
        assert_eq!(
            schedule_error("@often").as_deref(),
            Some("unrecognized descriptor: @often")
        );
    }
}
