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

pub mod checkout;
pub mod datetime;
pub mod error;
pub mod model;
pub mod params;
pub mod sql;
pub mod store;

pub use error::Error;

/// Largest accepted request body (SPEC §3: over 16 KiB is 413).
pub const BODY_LIMIT_BYTES: usize = 16 * 1024;

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
