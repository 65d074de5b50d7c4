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
    let separator = text.as_bytes().get(10)?;
    if !matches!(separator, b'T' | b't') {
        return None;
    }
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With a `T` between date and time, the reader answers what chrono's RFC 3339 parser
    /// answers: every field at and around its limits, leap years and a leap second included.
    #[test]
    fn rfc3339_reading_is_chronos_parser() {
        let general = |text: &str| {
            DateTime::parse_from_rfc3339(text)
                .ok()
                .map(|t| t.with_timezone(&Utc))
        };
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
                        assert_eq!(parse_rfc3339(&text), general(&text), "{text}");
                    }
                }
            }
        }
        for other in [
            "2026-06-09T14:00:00.5Z",
            "2026-06-09T14:00:00+00:00",
            "2026-06-09t14:00:00Z",
        ] {
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
