//! The one clock every timestamp dwp writes comes from.
//!
//! Tests fix it with `DWP_TEST_NOW=2026-06-09T16:42:10Z` so receipts, checkpoints and snapshots
//! are reproducible. The variable is read only when set; an unparsable value is ignored with the
//! real clock in its place rather than stamping a wrong time on real plans.

use chrono::{DateTime, SecondsFormat, Utc};
use std::sync::OnceLock;

/// Environment variable that fixes the clock (RFC 3339).
pub const TEST_NOW_ENV: &str = "DWP_TEST_NOW";

/// The current time, or the fixed test time when `DWP_TEST_NOW` is set.
pub fn now() -> DateTime<Utc> {
    static FIXED: OnceLock<Option<DateTime<Utc>>> = OnceLock::new();
    FIXED
        .get_or_init(|| {
            std::env::var(TEST_NOW_ENV)
                .ok()
                .and_then(|text| DateTime::parse_from_rfc3339(&text).ok())
                .map(|t| t.with_timezone(&Utc))
        })
        .unwrap_or_else(Utc::now)
}

/// `now()` as RFC 3339 UTC with second precision, the form every dwp timestamp takes.
pub fn now_rfc3339() -> String {
    rfc3339(now())
}

pub fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Parse an RFC 3339 date-time as JSON Schema's `date-time` format means it: a `T` (or `t`)
/// between date and time, which chrono alone would also let a space stand for.
pub fn parse_rfc3339(text: &str) -> Option<DateTime<Utc>> {
    if let Some(time) = parse_whole_seconds_utc(text) {
        return Some(time);
    }
    let separator = text.as_bytes().get(10)?;
    if !matches!(separator, b'T' | b't') {
        return None;
    }
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// The form dwp writes, `YYYY-MM-DDTHH:MM:SSZ`, read without chrono's general parser: a large
/// state holds tens of thousands, and every writer and verify reads each. `None` for anything
/// else, a leap second or an impossible date included, which [`parse_rfc3339`] then gives to
/// the general parser: this path only ever answers what that parser would.
fn parse_whole_seconds_utc(text: &str) -> Option<DateTime<Utc>> {
    let b = text.as_bytes();
    let shape = b.len() == 20
        && [
            (4, b'-'),
            (7, b'-'),
            (10, b'T'),
            (13, b':'),
            (16, b':'),
            (19, b'Z'),
        ]
        .iter()
        .all(|&(at, byte)| b[at] == byte);
    if !shape {
        return None;
    }
    let number = |from: usize, to: usize| {
        b[from..to].iter().try_fold(0u32, |n, &digit| {
            digit
                .is_ascii_digit()
                .then(|| n * 10 + u32::from(digit - b'0'))
        })
    };
    let second = number(17, 19).filter(|&s| s < 60)?;
    let year = i32::try_from(number(0, 4)?).ok()?;
    let date = chrono::NaiveDate::from_ymd_opt(year, number(5, 7)?, number(8, 10)?)?;
    let time = date.and_hms_opt(number(11, 13)?, number(14, 16)?, second)?;
    Some(time.and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path answers exactly what chrono's RFC 3339 parser answers, wherever it answers:
    /// every field at and around its limits, leap years and a leap second included.
    #[test]
    fn the_whole_seconds_reader_agrees_with_the_general_parser() {
        let general = |text: &str| {
            DateTime::parse_from_rfc3339(text)
                .ok()
                .map(|t| t.with_timezone(&Utc))
        };
        let mut answered = 0;
        for year in [
            "0000", "0001", "1900", "1970", "2000", "2024", "2026", "9999",
        ] {
            for month in ["00", "01", "02", "04", "12", "13"] {
                for day in ["00", "01", "28", "29", "30", "31", "32"] {
                    for (hour, minute, second) in [
                        ("00", "00", "00"),
                        ("23", "59", "59"),
                        ("24", "00", "00"),
                        ("12", "60", "00"),
                        ("23", "59", "60"),
                        ("1a", "00", "00"),
                    ] {
                        let text = format!("{year}-{month}-{day}T{hour}:{minute}:{second}Z");
                        if let Some(fast) = parse_whole_seconds_utc(&text) {
                            answered += 1;
                            assert_eq!(Some(fast), general(&text), "{text}");
                        }
                        assert_eq!(parse_rfc3339(&text), general(&text), "{text}");
                    }
                }
            }
        }
        assert!(answered > 100, "the fast path answered only {answered}");
        for other in [
            "2026-06-09T14:00:00.5Z",
            "2026-06-09T14:00:00+00:00",
            "2026-06-09t14:00:00Z",
        ] {
            assert!(parse_whole_seconds_utc(other).is_none(), "{other}");
            assert_eq!(parse_rfc3339(other), general(other), "{other}");
        }
    }

    #[test]
    fn rfc3339_parsing_requires_the_t_separator() {
        assert!(parse_rfc3339("2026-06-09T14:00:00Z").is_some());
        assert!(parse_rfc3339("2026-06-09t14:00:00+02:00").is_some());
        assert!(parse_rfc3339("2026-06-09 14:00:00Z").is_none());
        assert!(parse_rfc3339("2026-06-09").is_none());
        assert!(parse_rfc3339("2026-13-09T14:00:00Z").is_none());
        assert!(parse_rfc3339("yesterday").is_none());
    }
}
