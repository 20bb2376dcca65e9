//! Durations as charly spells them: `30s`, `500ms`, `2m`, `1h`, `1m30s`, or a bare number of
//! seconds.

use std::time::Duration;

/// Parses a duration: one or more `<number><unit>` parts (units `ms`, `s`, `m`, `h`; the
/// number may have a fraction), or a bare number meaning seconds.
///
/// # Errors
///
/// A message naming the text and the accepted forms.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad =
        || format!("invalid duration {text:?} (expected e.g. 30s, 500ms, 2m, 1h30m or a number of seconds)");
    let t = text.trim();
    if t.is_empty() {
        return Err(bad());
    }
    if let Ok(seconds) = t.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).map_err(|_| bad());
    }
    let mut total = Duration::ZERO;
    let mut rest = t;
    while !rest.is_empty() {
        let number_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(bad)?;
        if number_len == 0 {
            return Err(bad());
        }
        let number: f64 = rest[..number_len].parse().map_err(|_| bad())?;
        rest = &rest[number_len..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let factor = match &rest[..unit_len] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        rest = &rest[unit_len..];
        total += Duration::try_from_secs_f64(number * factor).map_err(|_| bad())?;
    }
    Ok(total)
}

/// Formats a duration the way [`parse_duration`] reads it: `30s`, `1.5s`, `250ms`, `2m`.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 && !d.is_zero() {
        return format!("{}µs", d.as_micros());
    }
    if ms < 1000 {
        return format!("{ms}ms");
    }
    if ms.is_multiple_of(60_000) {
        return format!("{}m", ms / 60_000);
    }
    if ms.is_multiple_of(1000) {
        return format!("{}s", ms / 1000);
    }
    format!("{}s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_usual_forms() {
        let cases = [
            ("30s", 30_000),
            ("500ms", 500),
            ("2m", 120_000),
            ("1h", 3_600_000),
            ("1m30s", 90_000),
            ("1.5s", 1500),
            ("10", 10_000),
            ("0.25", 250),
        ];
        for (text, ms) in cases {
            assert_eq!(parse_duration(text).unwrap(), Duration::from_millis(ms), "{text}");
        }
        for bad in ["", "s", "10x", "-1s", "1s2", "abc"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn formats_round_trip() {
        for ms in [250u64, 1000, 1500, 30_000, 120_000] {
            let d = Duration::from_millis(ms);
            assert_eq!(parse_duration(&format_duration(d)).unwrap(), d);
        }
    }
}
