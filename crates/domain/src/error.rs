//! The one error type of the contract and its mapping to HTTP status, code and message.
//!
//! Every failure a server can answer with is a variant here; stores map their own errors
//! into it and each server wraps it once for its framework. The mapping to the wire
//! (`status`, `code`, `public_message`) lives here so that the five servers cannot drift.

use std::borrow::Cow;

/// Longest piece of client input echoed back in an error message, in characters.
///
/// Messages name the offending value so a person can act on it, but a 8 KiB path should not
/// come back as an 8 KiB error body.
const ECHO_MAX_CHARS: usize = 64;

/// Everything a request can fail with, each variant documented with its status and code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// 400 Bad Request, code `bad_request`: malformed JSON, wrong JSON types, a missing
    /// required field, or a query/path parameter that is missing, not an integer, out of
    /// range or not UTF-8. The message names the parameter or field.
    #[error("{0}")]
    BadRequest(String),

    /// 404 Not Found, code `not_found`: the book id is well-formed but does not exist.
    #[error("book {0} does not exist")]
    BookNotFound(i64),

    /// 404 Not Found, code `not_found`: no route matches the path.
    #[error("no route for {method} {}", echo(path))]
    RouteNotFound {
        /// Request method, as sent.
        method: String,
        /// Request path, as sent (shortened when echoed).
        path: String,
    },

    /// 405 Method Not Allowed, code `method_not_allowed`: the path is known, the method is not.
    #[error("method {method} is not allowed on {}", echo(path))]
    MethodNotAllowed {
        /// Request method, as sent.
        method: String,
        /// Request path, as sent (shortened when echoed).
        path: String,
    },

    /// 409 Conflict, code `out_of_stock`: the checkout asks for more than the book's stock.
    /// A business refusal, not a failure of the service.
    #[error("book {book_id} has {available} in stock, {requested} requested")]
    OutOfStock {
        /// The book that was asked for.
        book_id: i64,
        /// The quantity the checkout asked for.
        requested: i32,
        /// The stock at the time of the checkout (read under the row lock).
        available: i32,
    },

    /// 413 Payload Too Large, code `payload_too_large`: the body exceeds the limit.
    #[error("request body exceeds the limit of {limit_bytes} bytes")]
    PayloadTooLarge {
        /// The limit that was exceeded.
        limit_bytes: usize,
    },

    /// 415 Unsupported Media Type, code `unsupported_media_type`: a POST body without
    /// `Content-Type: application/json`.
    #[error("request body must be sent with Content-Type: application/json")]
    UnsupportedMediaType,

    /// 422 Unprocessable Entity, code `validation_failed`: well-formed JSON that breaks a
    /// rule. The message starts with the field name.
    #[error("{field} {reason}")]
    ValidationFailed {
        /// The JSON field (camelCase, as the client sent it).
        field: &'static str,
        /// What is wrong with it, phrased to follow the field name.
        reason: String,
    },

    /// 503 Service Unavailable, code `db_unavailable`: no database connection could be had
    /// (pool acquire timed out, connection refused or broken). The detail is logged only.
    #[error("database unavailable: {0}")]
    DbUnavailable(String),

    /// 500 Internal Server Error, code `internal`: anything else. The detail is logged only.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// The HTTP status code.
    pub fn status(&self) -> u16 {
        match self {
            Error::BadRequest(_) => 400,
            Error::BookNotFound(_) | Error::RouteNotFound { .. } => 404,
            Error::MethodNotAllowed { .. } => 405,
            Error::OutOfStock { .. } => 409,
            Error::PayloadTooLarge { .. } => 413,
            Error::UnsupportedMediaType => 415,
            Error::ValidationFailed { .. } => 422,
            Error::DbUnavailable(_) => 503,
            Error::Internal(_) => 500,
        }
    }

    /// The machine-readable code sent as `"error"`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::BadRequest(_) => "bad_request",
            Error::BookNotFound(_) | Error::RouteNotFound { .. } => "not_found",
            Error::MethodNotAllowed { .. } => "method_not_allowed",
            Error::OutOfStock { .. } => "out_of_stock",
            Error::PayloadTooLarge { .. } => "payload_too_large",
            Error::UnsupportedMediaType => "unsupported_media_type",
            Error::ValidationFailed { .. } => "validation_failed",
            Error::DbUnavailable(_) => "db_unavailable",
            Error::Internal(_) => "internal",
        }
    }

    /// The message sent as `"message"`. Internal details (database errors, driver messages)
    /// never leave the process: those variants answer with a fixed text.
    pub fn public_message(&self) -> Cow<'static, str> {
        match self {
            Error::DbUnavailable(_) => Cow::Borrowed("the database is unavailable; retry shortly"),
            Error::Internal(_) => Cow::Borrowed("internal server error"),
            Error::UnsupportedMediaType => {
                Cow::Borrowed("request body must be sent with Content-Type: application/json")
            }
            other => Cow::Owned(other.to_string()),
        }
    }

    /// Whether the detail of this error is worth logging (it is not shown to the client).
    pub fn is_server_fault(&self) -> bool {
        matches!(self, Error::DbUnavailable(_) | Error::Internal(_))
    }
}

/// Shortens client input for echoing in a message: at most [`ECHO_MAX_CHARS`] characters,
/// with an ellipsis when cut. The JSON serializer escapes whatever is left.
pub(crate) fn echo(input: &str) -> Cow<'_, str> {
    match input.char_indices().nth(ECHO_MAX_CHARS) {
        None => Cow::Borrowed(input),
        Some((cut, _)) => Cow::Owned(format!("{}…", &input[..cut])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_maps_to_the_status_and_code_of_the_contract() {
        let cases: [(Error, u16, &str); 10] = [
            (Error::BadRequest("x".into()), 400, "bad_request"),
            (Error::BookNotFound(7), 404, "not_found"),
            (Error::RouteNotFound { method: "GET".into(), path: "/x".into() }, 404, "not_found"),
            (
                Error::MethodNotAllowed { method: "PUT".into(), path: "/health".into() },
                405,
                "method_not_allowed",
            ),
            (Error::OutOfStock { book_id: 2, requested: 3, available: 1 }, 409, "out_of_stock"),
            (Error::PayloadTooLarge { limit_bytes: 16384 }, 413, "payload_too_large"),
            (Error::UnsupportedMediaType, 415, "unsupported_media_type"),
            (
                Error::ValidationFailed { field: "quantity", reason: "is bad".into() },
                422,
                "validation_failed",
            ),
            (Error::DbUnavailable("refused".into()), 503, "db_unavailable"),
            (Error::Internal("boom".into()), 500, "internal"),
        ];
        for (error, status, code) in cases {
            assert_eq!((error.status(), error.code()), (status, code), "{error:?}");
        }
    }

    #[test]
    fn internal_details_are_never_in_the_public_message() {
        let internal = Error::Internal("relation \"books\" does not exist".into());
        let unavailable = Error::DbUnavailable("connection refused 10.0.0.3:5432".into());
        assert_eq!(internal.public_message(), "internal server error");
        assert!(!unavailable.public_message().contains("10.0.0.3"));
    }

    #[test]
    fn messages_name_what_the_client_got_wrong() {
        assert_eq!(Error::BookNotFound(20001).public_message(), "book 20001 does not exist");
        let stock = Error::OutOfStock { book_id: 2, requested: 5, available: 0 };
        assert_eq!(stock.public_message(), "book 2 has 0 in stock, 5 requested");
        let field =
            Error::ValidationFailed { field: "customerEmail", reason: "must contain '@'".into() };
        assert_eq!(field.public_message(), "customerEmail must contain '@'");
    }

    #[test]
    fn echoed_paths_are_shortened() {
        let long_path = format!("/{}", "a".repeat(5000));
        let error = Error::RouteNotFound { method: "GET".into(), path: long_path };
        let message = error.public_message();
        assert!(message.chars().count() < 100, "{message}");
        assert!(message.ends_with('…'));
        assert_eq!(echo("/short"), "/short");
    }
}
