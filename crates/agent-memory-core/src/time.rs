//! Time as agent-memory stores it: Unix milliseconds, plus parsing of the `--since`/`--until`
//! forms a person types (`2026-12-01`, `2026-12-01T10:00`, `3d`, `12h`, `90m`, `now`) and
//! display in the local time zone.

use jiff::{Timestamp, ZonedDateTime, civil, tz::TimeZone};

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    Timestamp::now().as_millisecond()
}

/// An input that is not a time agent-memory understands.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot read `{input}` as a time; use a date (2026-12-01), a date and time (2026-12-01T10:00) or an age (30m, 12h, 7d, 2w)"
)]
pub struct TimeParseError {
    input: String,
}

/// Parses a point in time relative to `now_ms`. Dates are local midnight.
pub fn parse_when(input: &str, now_ms: i64) -> Result<i64, TimeParseError> {
    let err = || TimeParseError { input: input.to_owned() };
    let s = input.trim();
    if s.eq_ignore_ascii_case("now") {
        return Ok(now_ms);
    }
    if let Some(ms) = parse_age(s) {
        return Ok(now_ms - ms);
    }
    if let Ok(ts) = s.parse::<Timestamp>() {
        return Ok(ts.as_millisecond());
    }
    let tz = TimeZone::system();
    if let Ok(dt) = s.parse::<civil::DateTime>() {
        return dt.to_zoned_datetime(tz).map(|z| z.timestamp().as_millisecond()).map_err(|_| err());
    }
    if let Ok(date) = s.parse::<civil::Date>() {
        return date
            .to_zoned_datetime(tz)
            .map(|z| z.timestamp().as_millisecond())
            .map_err(|_| err());
    }
    Err(err())
}

/// `30s`, `90m`, `12h`, `7d`, `2w` → milliseconds.
fn parse_age(s: &str) -> Option<i64> {
    let unit = s.chars().last()?;
    let digits = &s[..s.len() - unit.len_utf8()];
    let n: i64 = digits.parse().ok()?;
    let per = match unit {
        's' => 1_000,
        'm' => 60_000,
        'h' => 3_600_000,
        'd' => 86_400_000,
        'w' => 7 * 86_400_000,
        _ => return None,
    };
    n.checked_mul(per)
}

/// The local time zone, found cheaply and once per process. jiff's `TimeZone::system()` names
/// the zone from the `/etc/localtime` link and then walks the whole zoneinfo tree to find that
/// name, a few milliseconds a hook cannot spare; the file itself is the zone's data.
pub fn local_zone() -> TimeZone {
    static LOCAL: std::sync::OnceLock<TimeZone> = std::sync::OnceLock::new();
    LOCAL
        .get_or_init(|| match std::env::var("TZ") {
            Ok(tz) if matches!(tz.trim_start_matches(':'), "UTC" | "UTC0" | "Etc/UTC") => {
                TimeZone::UTC
            }
            Ok(_) => TimeZone::system(),
            Err(_) => std::fs::read("/etc/localtime")
                .ok()
                .and_then(|data| TimeZone::tzif("Local", &data).ok())
                .unwrap_or_else(TimeZone::system),
        })
        .clone()
}

/// `2026-12-02 14:33` in the local time zone.
pub fn format_local(ms: i64) -> String {
    match Timestamp::from_millisecond(ms) {
        Ok(ts) => {
            let z: ZonedDateTime = ts.to_zoned_datetime(local_zone());
            z.strftime("%Y-%m-%d %H:%M").to_string()
        }
        Err(_) => ms.to_string(),
    }
}

/// The local day of `ms` as `YYYY-MM-DD`.
pub fn local_day(ms: i64) -> String {
    format_local(ms).get(..10).unwrap_or("1970-01-01").to_owned()
}

/// The UTC day of `ms` as `YYYY-MM-DD`, the key of daily budgets.
pub fn utc_day(ms: i64) -> String {
    match Timestamp::from_millisecond(ms) {
        Ok(ts) => ts.strftime("%Y-%m-%d").to_string(),
        Err(_) => "1970-01-01".into(),
    }
}

/// RFC 3339 in UTC, for machine-readable output.
pub fn format_rfc3339(ms: i64) -> String {
    Timestamp::from_millisecond(ms).map(|t| t.to_string()).unwrap_or_else(|_| ms.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_and_instants() {
        let now = 1_000_000_000_000;
        assert_eq!(parse_when("90m", now).expect("age"), now - 90 * 60_000);
        assert_eq!(parse_when("2d", now).expect("age"), now - 2 * 86_400_000);
        assert_eq!(parse_when("now", now).expect("now"), now);
        assert_eq!(
            parse_when("2026-12-02T14:33:59.561Z", now).expect("instant"),
            1_796_222_039_561
        );
        assert!(parse_when("2026-12-01", now).is_ok());
        assert!(parse_when("2026-12-01T10:00", now).is_ok());
        assert_eq!(utc_day(1_796_222_039_561), "2026-12-02");
    }

    #[test]
    fn rejects_garbage_with_a_remedy() {
        let err = parse_when("yesterdayish", 0).expect_err("garbage");
        assert!(err.to_string().contains("use a date"));
        assert!(parse_when("5x", 0).is_err());
        assert!(parse_when("", 0).is_err());
    }
}
