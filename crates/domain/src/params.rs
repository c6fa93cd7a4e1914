//! Query and path parameters: decoding, ranges and defaults of SPEC §3.
//!
//! Servers hand over the raw query string and the raw path segment; decoding happens here so
//! that all five stacks accept and reject exactly the same input with the same message,
//! whatever their framework's own extractors would do.
//!
//! Decisions where the contract is silent (documented in docs/reliability.md too):
//! - the query string is `application/x-www-form-urlencoded`: `+` is a space, `%XX` a byte;
//!   in the path segment `+` is literal;
//! - a parameter given twice: the first occurrence wins;
//! - a parameter present but empty (`limit=`) is invalid, not absent;
//! - integers are decimal `i64` with an optional sign (`+5`, `007` are accepted);
//! - unknown parameters are ignored, even when they are not valid UTF-8.

use std::borrow::Cow;

use percent_encoding::percent_decode;

use crate::error::{Error, echo};

/// An integer query parameter: its name, inclusive range and default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntParam {
    /// The parameter's name in the query string.
    pub name: &'static str,
    /// Smallest accepted value.
    pub min: i64,
    /// Largest accepted value.
    pub max: i64,
    /// Value used when the parameter is absent.
    pub default: i64,
}

/// `limit` of `GET /api/books/bench/large-json`.
pub const LARGE_JSON_LIMIT: IntParam = IntParam { name: "limit", min: 50, max: 500, default: 200 };
/// `limit` of `GET /api/books`.
pub const BOOK_LIST_LIMIT: IntParam = IntParam { name: "limit", min: 1, max: 500, default: 50 };
/// `limit` of `GET /api/books/search`.
pub const SEARCH_LIMIT: IntParam = IntParam { name: "limit", min: 1, max: 200, default: 20 };
/// `limit` of `GET /api/books/bench/aggregate-report`.
pub const REPORT_LIMIT: IntParam = IntParam { name: "limit", min: 10, max: 200, default: 50 };
/// Longest accepted search text `q`, in characters after trimming.
pub const SEARCH_TEXT_MAX_CHARS: usize = 100;

/// A raw query string (the part after `?`, not decoded).
#[derive(Debug, Clone, Copy, Default)]
pub struct QueryString<'a>(&'a str);

impl<'a> QueryString<'a> {
    /// Wraps the raw query; `None` when the URI has no `?`.
    pub fn new(raw: Option<&'a str>) -> Self {
        Self(raw.unwrap_or(""))
    }

    /// The decoded value of the first parameter called `name`, if any.
    pub fn get(&self, name: &str) -> Result<Option<Cow<'a, str>>, Error> {
        for pair in self.0.split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            if decode(key, true).as_ref() != name.as_bytes() {
                continue;
            }
            return match decode(value, true) {
                Cow::Borrowed(bytes) => std::str::from_utf8(bytes).map(Cow::Borrowed).ok(),
                Cow::Owned(bytes) => String::from_utf8(bytes).map(Cow::Owned).ok(),
            }
            .map(Some)
            .ok_or_else(|| {
                Error::BadRequest(format!(
                    "query parameter `{name}` is not valid UTF-8 after percent-decoding"
                ))
            });
        }
        Ok(None)
    }
}

impl IntParam {
    /// The parameter's value from `query`, or the default when absent.
    pub fn parse(&self, query: QueryString<'_>) -> Result<i64, Error> {
        match query.get(self.name)? {
            None => Ok(self.default),
            Some(text) => match text.parse::<i64>() {
                Ok(value) if (self.min..=self.max).contains(&value) => Ok(value),
                _ => Err(Error::BadRequest(format!(
                    "query parameter `{}` must be an integer from {} to {}, got \"{}\"",
                    self.name,
                    self.min,
                    self.max,
                    echo(&text)
                ))),
            },
        }
    }
}

/// Parameters of `GET /api/books/search`, ready for the query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchParams {
    /// `%q%` with `%`, `_` and `\` in `q` escaped (escape character `\`), for
    /// `ILIKE $1 ESCAPE '\'`.
    pub pattern: String,
    /// Maximum number of books.
    pub limit: i64,
}

impl SearchParams {
    /// Reads and checks `q` and `limit`.
    pub fn parse(query: QueryString<'_>) -> Result<Self, Error> {
        let text = query.get("q")?.ok_or_else(|| {
            Error::BadRequest(format!(
                "query parameter `q` is required (1 to {SEARCH_TEXT_MAX_CHARS} characters)"
            ))
        })?;
        let text = text.trim();
        // PostgreSQL text cannot hold NUL: refuse it here rather than fail in the database.
        if text.contains('\0') {
            return Err(Error::BadRequest(
                "query parameter `q` must not contain NUL characters".into(),
            ));
        }
        let chars = text.chars().count();
        if !(1..=SEARCH_TEXT_MAX_CHARS).contains(&chars) {
            return Err(Error::BadRequest(format!(
                "query parameter `q` must be 1 to {SEARCH_TEXT_MAX_CHARS} characters after trimming, got {chars}"
            )));
        }
        let limit = SEARCH_LIMIT.parse(query)?;
        Ok(Self { pattern: contains_pattern(text), limit })
    }
}

/// A LIKE pattern matching any text that contains `text` literally.
pub fn contains_pattern(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// The `{id}` of `/api/books/{id}`, from the raw (still percent-encoded) path segment.
pub fn book_id(raw_segment: &str) -> Result<i64, Error> {
    let decoded = decode(raw_segment, false);
    let text = std::str::from_utf8(&decoded).map_err(|_| {
        Error::BadRequest("path parameter `id` is not valid UTF-8 after percent-decoding".into())
    })?;
    match text.parse::<i64>() {
        Ok(id) if id >= 1 => Ok(id),
        _ => Err(Error::BadRequest(format!(
            "path parameter `id` must be an integer from 1 to {}, got \"{}\"",
            i64::MAX,
            echo(text)
        ))),
    }
}

/// Percent-decodes `input`; in query strings `+` also stands for a space.
/// Borrows when there is nothing to decode, which is the common case.
fn decode(input: &str, plus_is_space: bool) -> Cow<'_, [u8]> {
    let bytes = input.as_bytes();
    if plus_is_space && bytes.contains(&b'+') {
        let spaced: Vec<u8> = bytes.iter().map(|&b| if b == b'+' { b' ' } else { b }).collect();
        Cow::Owned(percent_decode(&spaced).collect())
    } else {
        percent_decode(bytes).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(raw: &str) -> QueryString<'_> {
        QueryString::new(Some(raw))
    }

    fn bad_request(result: Result<impl std::fmt::Debug, Error>) -> String {
        match result {
            Err(Error::BadRequest(message)) => message,
            other => panic!("expected BadRequest, got {other:?}"),
        }
    }

    #[test]
    fn limits_take_their_default_when_absent() {
        for (param, default) in
            [(LARGE_JSON_LIMIT, 200), (BOOK_LIST_LIMIT, 50), (SEARCH_LIMIT, 20), (REPORT_LIMIT, 50)]
        {
            assert_eq!(param.parse(QueryString::new(None)).unwrap(), default);
            assert_eq!(param.parse(query("other=1")).unwrap(), default);
        }
    }

    #[test]
    fn limits_accept_their_bounds_and_reject_one_beyond() {
        for (param, min, max) in [
            (LARGE_JSON_LIMIT, 50, 500),
            (BOOK_LIST_LIMIT, 1, 500),
            (SEARCH_LIMIT, 1, 200),
            (REPORT_LIMIT, 10, 200),
        ] {
            assert_eq!(param.parse(query(&format!("limit={min}"))).unwrap(), min);
            assert_eq!(param.parse(query(&format!("limit={max}"))).unwrap(), max);
            for outside in [min - 1, max + 1] {
                let message = bad_request(param.parse(query(&format!("limit={outside}"))));
                assert_eq!(
                    message,
                    format!(
                        "query parameter `limit` must be an integer from {min} to {max}, got \"{outside}\""
                    )
                );
            }
        }
    }

    #[test]
    fn large_json_limit_boundaries_49_50_500_501() {
        assert!(LARGE_JSON_LIMIT.parse(query("limit=49")).is_err());
        assert_eq!(LARGE_JSON_LIMIT.parse(query("limit=50")).unwrap(), 50);
        assert_eq!(LARGE_JSON_LIMIT.parse(query("limit=500")).unwrap(), 500);
        assert!(LARGE_JSON_LIMIT.parse(query("limit=501")).is_err());
    }

    #[test]
    fn non_integer_overflowing_and_empty_limits_are_bad_requests_naming_the_parameter() {
        for raw in [
            "limit=abc",
            "limit=1.5",
            "limit=99999999999999999999",
            "limit=",
            "limit",
            "limit=%205",
        ] {
            let message = bad_request(BOOK_LIST_LIMIT.parse(query(raw)));
            assert!(
                message.starts_with("query parameter `limit` must be an integer from 1 to 500"),
                "{raw}: {message}"
            );
        }
    }

    #[test]
    fn signs_and_leading_zeros_are_plain_integers() {
        assert_eq!(BOOK_LIST_LIMIT.parse(query("limit=%2B7")).unwrap(), 7);
        assert_eq!(BOOK_LIST_LIMIT.parse(query("limit=007")).unwrap(), 7);
        assert!(BOOK_LIST_LIMIT.parse(query("limit=-0")).is_err());
    }

    #[test]
    fn the_first_of_duplicated_parameters_wins() {
        assert_eq!(BOOK_LIST_LIMIT.parse(query("limit=3&limit=4")).unwrap(), 3);
        assert!(BOOK_LIST_LIMIT.parse(query("limit=x&limit=4")).is_err());
    }

    #[test]
    fn parameter_names_and_values_are_percent_decoded() {
        assert_eq!(BOOK_LIST_LIMIT.parse(query("%6Cimit=%31%32")).unwrap(), 12);
        let q = query("q=a+b%20c%2Bd");
        assert_eq!(q.get("q").unwrap().as_deref(), Some("a b c+d"));
    }

    #[test]
    fn invalid_utf8_after_decoding_is_a_bad_request_only_for_parameters_we_read() {
        let message = bad_request(query("q=%FF%FE").get("q"));
        assert_eq!(message, "query parameter `q` is not valid UTF-8 after percent-decoding");
        assert_eq!(BOOK_LIST_LIMIT.parse(query("junk=%FF&limit=5")).unwrap(), 5);
    }

    #[test]
    fn search_requires_q_and_trims_it() {
        let message = bad_request(SearchParams::parse(query("limit=5")));
        assert_eq!(message, "query parameter `q` is required (1 to 100 characters)");
        let params = SearchParams::parse(query("q=++Book++")).unwrap();
        assert_eq!(params, SearchParams { pattern: "%Book%".into(), limit: 20 });
    }

    #[test]
    fn search_text_must_be_1_to_100_characters_after_trimming() {
        let blank = bad_request(SearchParams::parse(query("q=+%20+")));
        assert_eq!(blank, "query parameter `q` must be 1 to 100 characters after trimming, got 0");
        let hundred = "é".repeat(100);
        assert!(
            SearchParams::parse(query(&format!("q={hundred}"))).is_ok(),
            "counts characters, not bytes"
        );
        let too_long = "b".repeat(101);
        let message = bad_request(SearchParams::parse(query(&format!("q={too_long}"))));
        assert!(message.ends_with("got 101"), "{message}");
    }

    #[test]
    fn nul_characters_in_q_are_refused_before_reaching_the_database() {
        let message = bad_request(SearchParams::parse(query("q=a%00b")));
        assert_eq!(message, "query parameter `q` must not contain NUL characters");
    }

    #[test]
    fn search_limit_is_checked_after_q() {
        assert_eq!(SearchParams::parse(query("q=x&limit=200")).unwrap().limit, 200);
        let message = bad_request(SearchParams::parse(query("q=x&limit=201")));
        assert!(message.contains("from 1 to 200"), "{message}");
    }

    #[test]
    fn like_metacharacters_in_q_match_literally() {
        assert_eq!(contains_pattern("50%_off\\"), r"%50\%\_off\\%");
        assert_eq!(contains_pattern("O'Brien; DROP TABLE books"), "%O'Brien; DROP TABLE books%");
    }

    #[test]
    fn book_ids_are_positive_integers() {
        assert_eq!(book_id("20000").unwrap(), 20000);
        assert_eq!(book_id("%31").unwrap(), 1);
        assert_eq!(book_id("9223372036854775807").unwrap(), i64::MAX);
        for raw in ["0", "-1", "abc", "9223372036854775808", "1.0", "", "1+1", "%2F"] {
            let message = bad_request(book_id(raw));
            assert!(
                message.starts_with("path parameter `id` must be an integer from 1 to"),
                "{raw}: {message}"
            );
        }
        assert_eq!(
            bad_request(book_id("%C3%28")),
            "path parameter `id` is not valid UTF-8 after percent-decoding"
        );
    }
}
