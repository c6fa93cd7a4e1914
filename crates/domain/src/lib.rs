//! `bookstore-domain`: the contract of the bookstore benchmark (SPEC §3), written once.
//!
//! Everything the five servers would otherwise each write lives here: the response types
//! with their exact JSON field names and order ([`model`]), query and path parameters with
//! their ranges ([`params`]), the checkout body and its rules ([`checkout`]), timestamp and
//! date formatting ([`datetime`]), the one error enum with its status/code mapping
//! ([`Error`]), and the interface the sqlx and diesel stores implement ([`store::Store`]).
//!
//! Nothing here knows about HTTP frameworks, JSON serializers or database drivers.
//! Run its unit tests with `cargo test -p bookstore-domain`.

pub mod audit;
pub mod checkout;
pub mod datetime;
pub mod error;
pub mod model;
pub mod offload;
pub mod params;
pub mod sql;
pub mod store;

pub use error::Error;

/// Spends `duration` of CPU on this thread, waiting on the monotonic clock (not a
/// millisecond timer): a known cost per request for the servers made to test what compares
/// two servers (the responder's `--work-us`, a stack's `--extra-work-us`).
pub fn spend(duration: std::time::Duration) {
    if duration.is_zero() {
        return;
    }
    let until = std::time::Instant::now() + duration;
    while std::time::Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// Largest accepted request body (SPEC §3: over 16 KiB is 413).
pub const BODY_LIMIT_BYTES: usize = 16 * 1024;

/// Deepest JSON nesting a request body may have. The contract's bodies nest one level;
/// parsers differ in how deep they go (serde_json and sonic-rs accept thousands of levels,
/// simd-json refuses far fewer), so one limit, checked before any parser runs, keeps the
/// five stacks' answers identical and bounds the work a hostile body can cause.
pub const MAX_JSON_DEPTH: usize = 32;

/// Whether `body` nests arrays and objects deeper than `max_depth` (brackets inside strings
/// do not count). A linear scan that stops at the first excess; malformed input is left to
/// the parser.
pub fn json_too_deep(body: &[u8], max_depth: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &byte in body {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max_depth {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Checks a POST's `Content-Type` header: `application/json`, optionally with parameters
/// such as `; charset=utf-8`, compared case-insensitively. Anything else (including a
/// missing header or `application/json-seq`) is 415.
pub fn require_json_content_type(header: Option<&[u8]>) -> Result<(), Error> {
    let Some(value) = header else {
        return Err(Error::UnsupportedMediaType);
    };
    let essence = value.split(|&b| b == b';').next().unwrap_or_default();
    if essence.trim_ascii().eq_ignore_ascii_case(b"application/json") {
        Ok(())
    } else {
        Err(Error::UnsupportedMediaType)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_counted_outside_strings_only() {
        let deep = format!("{}{}", "[".repeat(33), "]".repeat(33));
        assert!(json_too_deep(deep.as_bytes(), 32));
        let at_limit = format!("{}{}", "[".repeat(32), "]".repeat(32));
        assert!(!json_too_deep(at_limit.as_bytes(), 32));
        let in_string = format!(r#"{{"a":"{}"}}"#, "[".repeat(100));
        assert!(!json_too_deep(in_string.as_bytes(), 32), "brackets in strings are text");
        let escaped_quote = format!(r#"{{"a":"\"{}"}}"#, "{".repeat(100));
        assert!(
            !json_too_deep(escaped_quote.as_bytes(), 32),
            "an escaped quote does not end the string"
        );
        let mixed = format!(r#"{{"x":{}1{}}}"#, r#"{"a":"#.repeat(40), "}".repeat(40));
        assert!(json_too_deep(mixed.as_bytes(), 32));
    }

    #[test]
    fn json_content_type_with_or_without_parameters_is_accepted() {
        for ok in [
            &b"application/json"[..],
            b"Application/JSON",
            b"application/json; charset=utf-8",
            b" application/json ;x=y",
        ] {
            assert!(require_json_content_type(Some(ok)).is_ok(), "{}", String::from_utf8_lossy(ok));
        }
    }

    #[test]
    fn other_or_missing_content_types_are_415() {
        for bad in [
            &b"text/plain"[..],
            b"application/jsonx",
            b"application/json-seq",
            b"",
            b"application/x-www-form-urlencoded",
            b"\xff",
        ] {
            let error = require_json_content_type(Some(bad)).unwrap_err();
            assert_eq!(error.status(), 415);
        }
        assert_eq!(require_json_content_type(None).unwrap_err().code(), "unsupported_media_type");
    }
}
