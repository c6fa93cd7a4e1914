//! Timestamps and dates exactly as the contract writes them.
//!
//! Timestamps are RFC 3339 in UTC with exactly six fractional digits and `Z`
//! (`2026-11-30T08:31:12.123456Z`); dates are `YYYY-MM-DD`. Both are formatted into a stack
//! buffer and handed to the serializer as a `&str`, so no serializer (serde_json, simd-json,
//! sonic-rs) can format them differently and no allocation happens per value.

use serde::{Serialize, Serializer};
use time::{OffsetDateTime, UtcOffset};

/// A point in time, written as `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
///
/// Precision is microseconds (PostgreSQL's `timestamptz` precision); finer input is
/// truncated. Years outside 0000..=9999 are clamped to that range when written, because the
/// format has room for four digits only; no value the database produces today is affected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp(OffsetDateTime);

/// A calendar date, written as `YYYY-MM-DD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date(time::Date);

impl Timestamp {
    /// The current time, truncated to microseconds.
    pub fn now() -> Self {
        Self::from(OffsetDateTime::now_utc())
    }

    /// The wrapped value, in UTC.
    pub fn get(self) -> OffsetDateTime {
        self.0
    }

    /// The contract's text form.
    pub fn format(self) -> FormattedTimestamp {
        let t = self.0;
        let mut buf = *b"0000-00-00T00:00:00.000000Z";
        write_date(&mut buf[0..10], t.date());
        write_digits(&mut buf[11..13], u32::from(t.hour()));
        write_digits(&mut buf[14..16], u32::from(t.minute()));
        write_digits(&mut buf[17..19], u32::from(t.second()));
        write_digits(&mut buf[20..26], t.microsecond());
        FormattedTimestamp(buf)
    }
}

impl From<OffsetDateTime> for Timestamp {
    fn from(value: OffsetDateTime) -> Self {
        let utc = value.to_offset(UtcOffset::UTC);
        let micros_only = utc
            .replace_nanosecond(utc.microsecond() * 1_000)
            .expect("a whole number of microseconds is a valid nanosecond value");
        Self(micros_only)
    }
}

impl Date {
    /// The wrapped value.
    pub fn get(self) -> time::Date {
        self.0
    }

    /// The contract's text form.
    pub fn format(self) -> FormattedDate {
        let mut buf = *b"0000-00-00";
        write_date(&mut buf, self.0);
        FormattedDate(buf)
    }
}

impl From<time::Date> for Date {
    fn from(value: time::Date) -> Self {
        Self(value)
    }
}

/// A timestamp formatted into a fixed-size buffer.
#[derive(Clone, Copy)]
pub struct FormattedTimestamp([u8; 27]);

/// A date formatted into a fixed-size buffer.
#[derive(Clone, Copy)]
pub struct FormattedDate([u8; 10]);

impl FormattedTimestamp {
    /// The text, `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("only ASCII digits and separators are written")
    }
}

impl FormattedDate {
    /// The text, `YYYY-MM-DD`.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("only ASCII digits and separators are written")
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.format().as_str())
    }
}

impl Serialize for Date {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.format().as_str())
    }
}

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.format().as_str())
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.format().as_str())
    }
}

/// Whether `text` is a timestamp as the contract writes it: RFC 3339 UTC with exactly six
/// fractional digits and `Z`. For the checks of responses (the load generator, the
/// conformance suite).
pub fn is_timestamp(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| b[range].iter().all(u8::is_ascii_digit);
    b.len() == 27
        && text.get(..10).is_some_and(is_date)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && b[19] == b'.'
        && digits(20..26)
        && b[26] == b'Z'
}

/// Whether `text` is a date as the contract writes it: `YYYY-MM-DD`.
pub fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// Writes `YYYY-MM-DD` into a 10-byte slice.
fn write_date(out: &mut [u8], date: time::Date) {
    let year = date.year().clamp(0, 9999) as u32;
    write_digits(&mut out[0..4], year);
    out[4] = b'-';
    write_digits(&mut out[5..7], u32::from(u8::from(date.month())));
    out[7] = b'-';
    write_digits(&mut out[8..10], u32::from(date.day()));
}

/// Writes `value` as zero-padded decimal filling `out` exactly (higher digits are dropped).
fn write_digits(out: &mut [u8], mut value: u32) {
    for slot in out.iter_mut().rev() {
        *slot = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn what_it_writes_is_what_the_checks_accept() {
        let now = super::Timestamp::now();
        assert!(super::is_timestamp(now.format().as_str()), "{now}");
        assert!(super::is_timestamp("2026-11-30T08:31:12.123456Z"));
        assert!(!super::is_timestamp("2026-11-30T08:31:12.123Z"));
        assert!(!super::is_timestamp("2026-11-30T08:31:12.123456+00:00"));
        assert!(super::is_date("2020-01-01") && !super::is_date("2020-1-01"));
        assert!(!super::is_date("2020-01-0x"));
    }

    use super::*;
    use time::macros::{date, datetime};

    #[test]
    fn timestamps_have_six_fractional_digits_and_z() {
        let t = Timestamp::from(datetime!(2026-11-30 08:31:12.123456 UTC));
        assert_eq!(t.to_string(), "2026-11-30T08:31:12.123456Z");
        let whole = Timestamp::from(datetime!(2026-01-02 03:04:05 UTC));
        assert_eq!(whole.to_string(), "2026-01-02T03:04:05.000000Z");
    }

    #[test]
    fn timestamps_are_converted_to_utc() {
        let t = Timestamp::from(datetime!(2026-11-30 01:00:00.5 +02:00));
        assert_eq!(t.to_string(), "2026-11-29T23:00:00.500000Z");
    }

    #[test]
    fn sub_microsecond_precision_is_truncated_not_rounded() {
        let t = Timestamp::from(datetime!(2026-11-30 08:31:12.999999999 UTC));
        assert_eq!(t.to_string(), "2026-11-30T08:31:12.999999Z");
    }

    #[test]
    fn now_matches_the_contract_format() {
        let text = Timestamp::now().to_string();
        assert_eq!(text.len(), 27, "{text}");
        assert!(text.ends_with('Z') && text.as_bytes()[10] == b'T' && text.as_bytes()[19] == b'.');
        assert!(
            time::OffsetDateTime::parse(&text, &time::format_description::well_known::Rfc3339)
                .is_ok()
        );
    }

    #[test]
    fn dates_are_zero_padded() {
        assert_eq!(Date::from(date!(2020 - 01 - 01)).to_string(), "2020-01-01");
        assert_eq!(Date::from(date!(0999 - 12 - 31)).to_string(), "0999-12-31");
    }

    #[test]
    fn serialized_as_json_strings() {
        let json = serde_json::to_string(&(
            Date::from(date!(2024 - 02 - 29)),
            Timestamp::from(datetime!(2024-02-29 23:59:59.000001 UTC)),
        ))
        .unwrap();
        assert_eq!(json, r#"["2024-02-29","2024-02-29T23:59:59.000001Z"]"#);
    }
}
