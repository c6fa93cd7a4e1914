//! `POST /api/checkouts`: the request body, how it is read, and its rules.
//!
//! Reading ([`CheckoutBody`]) is a hand-written `Deserialize` that accepts any JSON value in
//! every field and judges the shape itself, so that every message names the field it is
//! about and reads the same whichever serializer drove it (serde's derived messages say
//! "expected i32" without saying for which field, and each serializer adds its own
//! position format). Shape errors (wrong type, a number that does not fit, a missing field,
//! a field given twice, a body that is not an object) are 400 `bad_request`; rule
//! violations found afterwards by [`CheckoutRequest::validate`] are 422 `validation_failed`.
//!
//! Unknown fields are ignored; `"quantity": null` counts as absent (default 1). Names and
//! e-mails are stored as sent; the blank check looks at the trimmed text and lengths count
//! characters (as `varchar(n)` does).

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::datetime::Timestamp;
use crate::error::Error;
use crate::model::CheckoutResponse;

/// Longest accepted `customerName`, in characters.
pub const CUSTOMER_NAME_MAX_CHARS: usize = 120;
/// Longest accepted `customerEmail`, in characters.
pub const CUSTOMER_EMAIL_MAX_CHARS: usize = 255;
/// Accepted `quantity` values.
pub const QUANTITY_RANGE: std::ops::RangeInclusive<i32> = 1..=100;

/// The body as sent, before the rules are checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckoutRequest {
    /// `bookId`.
    pub book_id: i64,
    /// `customerName`.
    pub customer_name: String,
    /// `customerEmail`.
    pub customer_email: String,
    /// `quantity`, `None` when absent or null.
    pub quantity: Option<i32>,
}

/// A checkout that passed every rule: what the stores write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCheckout {
    /// The book to buy, ≥ 1.
    pub book_id: i64,
    /// Not blank, at most 120 characters.
    pub customer_name: String,
    /// Not blank, at most 255 characters, contains `@`.
    pub customer_email: String,
    /// 1..=100.
    pub quantity: i32,
}

impl NewCheckout {
    /// Why the checkout stops once its book's row is locked and its stock read (`None`: no
    /// such book): 404 for a book that does not exist, 409 `out_of_stock` for one with less
    /// stock than asked for, `None` to go on (SPEC §3's checkout, step 2) — every store's rule.
    pub fn refusal(&self, stock: Option<i32>) -> Option<crate::Error> {
        match stock {
            None => Some(crate::Error::BookNotFound(self.book_id)),
            Some(available) if available < self.quantity => Some(crate::Error::OutOfStock {
                book_id: self.book_id,
                requested: self.quantity,
                available,
            }),
            Some(_) => None,
        }
    }

    /// The answer once the database has recorded this checkout as `id` at `checked_out_at`.
    pub fn recorded(
        self,
        id: uuid::Uuid,
        checked_out_at: time::OffsetDateTime,
    ) -> CheckoutResponse {
        CheckoutResponse {
            id,
            book_id: self.book_id,
            customer_name: self.customer_name,
            customer_email: self.customer_email,
            quantity: self.quantity,
            checked_out_at: Timestamp::from(checked_out_at),
        }
    }
}

impl CheckoutRequest {
    /// Checks the rules of SPEC §3 in field order and reports the first one broken.
    pub fn validate(self) -> Result<NewCheckout, Error> {
        let fail = |field, reason: String| Err(Error::ValidationFailed { field, reason });
        if self.book_id < 1 {
            return fail("bookId", format!("must be at least 1, got {}", self.book_id));
        }
        check_text("customerName", &self.customer_name, CUSTOMER_NAME_MAX_CHARS)?;
        check_text("customerEmail", &self.customer_email, CUSTOMER_EMAIL_MAX_CHARS)?;
        if !self.customer_email.contains('@') {
            return fail("customerEmail", "must contain '@'".into());
        }
        let quantity = self.quantity.unwrap_or(1);
        if !QUANTITY_RANGE.contains(&quantity) {
            return fail(
                "quantity",
                format!(
                    "must be from {} to {}, got {quantity}",
                    QUANTITY_RANGE.start(),
                    QUANTITY_RANGE.end()
                ),
            );
        }
        Ok(NewCheckout {
            book_id: self.book_id,
            customer_name: self.customer_name,
            customer_email: self.customer_email,
            quantity,
        })
    }
}

fn check_text(field: &'static str, value: &str, max_chars: usize) -> Result<(), Error> {
    if value.trim().is_empty() {
        return Err(Error::ValidationFailed { field, reason: "must not be blank".into() });
    }
    // PostgreSQL text cannot hold NUL: a rule of the data, not a database failure.
    if value.contains('\0') {
        return Err(Error::ValidationFailed {
            field,
            reason: "must not contain NUL characters".into(),
        });
    }
    let chars = value.chars().count();
    if chars > max_chars {
        return Err(Error::ValidationFailed {
            field,
            reason: format!("must be at most {max_chars} characters, got {chars}"),
        });
    }
    Ok(())
}

/// The body as read: the request, or what is wrong with its shape.
///
/// Reading never fails on shape, only on syntax: every field value is taken whatever its
/// JSON type and judged here, so the 400 messages are this crate's words and identical
/// whichever serializer read the bytes (serializers word and locate errors differently).
/// A syntax error is the serializer's; the handlers answer it with one fixed message.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckoutBody(Result<CheckoutRequest, String>);

impl CheckoutBody {
    /// The request, or 400 `bad_request` naming the field that has the wrong shape.
    pub fn into_request(self) -> Result<CheckoutRequest, Error> {
        self.0.map_err(|problem| Error::BadRequest(format!("invalid JSON body: {problem}")))
    }
}

/// A JSON value, reduced to what the rules need.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Signed(i64),
    Unsigned(u64),
    Float(f64),
    String(String),
    Bool,
    Null,
    Array,
    Object,
}

impl Value {
    fn kind(&self) -> &'static str {
        match self {
            Value::Signed(_) | Value::Unsigned(_) => "an integer",
            Value::Float(_) => "a number with a fraction or exponent",
            Value::String(_) => "a string",
            Value::Bool => "a boolean",
            Value::Null => "null",
            Value::Array => "an array",
            Value::Object => "an object",
        }
    }

    /// The value as an integer of type `T` (`bits` names it in the message).
    fn integer<T: TryFrom<i64> + TryFrom<u64>>(self, field: &str, bits: u32) -> Result<T, String> {
        let fits = match &self {
            Value::Signed(v) => T::try_from(*v).ok(),
            Value::Unsigned(v) => T::try_from(*v).ok(),
            _ => return Err(format!("`{field}` must be an integer, got {}", self.kind())),
        };
        fits.ok_or_else(|| {
            let number = match self {
                Value::Signed(v) => v.to_string(),
                Value::Unsigned(v) => v.to_string(),
                _ => unreachable!("only integers get here"),
            };
            format!("`{field}` must be an integer that fits in {bits} bits, got {number}")
        })
    }

    fn string(self, field: &str) -> Result<String, String> {
        match self {
            Value::String(text) => Ok(text),
            other => Err(format!("`{field}` must be a string, got {}", other.kind())),
        }
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Value, E> {
        Ok(Value::Bool)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Signed(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Unsigned(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Value::Array)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Value::Object)
    }
}

enum Field {
    BookId,
    CustomerName,
    CustomerEmail,
    Quantity,
    Other,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Field, E> {
                Ok(match name {
                    "bookId" => Field::BookId,
                    "customerName" => Field::CustomerName,
                    "customerEmail" => Field::CustomerEmail,
                    "quantity" => Field::Quantity,
                    _ => Field::Other,
                })
            }
        }
        deserializer.deserialize_identifier(FieldVisitor)
    }
}

impl<'de> Deserialize<'de> for CheckoutBody {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct BodyVisitor;
        impl<'de> Visitor<'de> for BodyVisitor {
            type Value = CheckoutBody;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CheckoutBody, A::Error> {
                let mut fields: [Option<Value>; 4] = [None, None, None, None];
                let mut duplicate = None;
                while let Some(field) = map.next_key::<Field>()? {
                    let (slot, name) = match field {
                        Field::BookId => (0, "bookId"),
                        Field::CustomerName => (1, "customerName"),
                        Field::CustomerEmail => (2, "customerEmail"),
                        Field::Quantity => (3, "quantity"),
                        Field::Other => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    let value = map.next_value::<Value>()?;
                    if fields[slot].replace(value).is_some() {
                        duplicate.get_or_insert(name);
                    }
                }
                if let Some(name) = duplicate {
                    return Ok(CheckoutBody(Err(format!(
                        "field `{name}` is given more than once"
                    ))));
                }
                Ok(CheckoutBody(request_from(fields)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<CheckoutBody, A::Error> {
                let kind = ValueVisitor.visit_seq(seq)?.kind();
                Ok(CheckoutBody(Err(format!("the body must be a JSON object, got {kind}"))))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<CheckoutBody, E> {
                not_an_object(ValueVisitor.visit_bool(v)?)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<CheckoutBody, E> {
                not_an_object(ValueVisitor.visit_i64(v)?)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<CheckoutBody, E> {
                not_an_object(ValueVisitor.visit_u64(v)?)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<CheckoutBody, E> {
                not_an_object(ValueVisitor.visit_f64(v)?)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<CheckoutBody, E> {
                not_an_object(Value::String(String::new()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<CheckoutBody, E> {
                not_an_object(Value::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<CheckoutBody, E> {
                not_an_object(Value::Null)
            }
        }
        deserializer.deserialize_any(BodyVisitor)
    }
}

fn not_an_object<E>(value: Value) -> Result<CheckoutBody, E> {
    Ok(CheckoutBody(Err(format!("the body must be a JSON object, got {}", value.kind()))))
}

fn request_from(
    [book_id, name, email, quantity]: [Option<Value>; 4],
) -> Result<CheckoutRequest, String> {
    let required =
        |value: Option<Value>, name: &str| value.ok_or_else(|| format!("missing field `{name}`"));
    Ok(CheckoutRequest {
        book_id: required(book_id, "bookId")?.integer("bookId", 64)?,
        customer_name: required(name, "customerName")?.string("customerName")?,
        customer_email: required(email, "customerEmail")?.string("customerEmail")?,
        quantity: match quantity {
            None | Some(Value::Null) => None,
            Some(value) => Some(value.integer("quantity", 32)?),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<CheckoutRequest, String> {
        let body: CheckoutBody = serde_json::from_str(json).map_err(|e| format!("syntax: {e}"))?;
        body.into_request().map_err(|e| e.to_string())
    }

    fn request() -> CheckoutRequest {
        CheckoutRequest {
            book_id: 3,
            customer_name: "Benchmark User".into(),
            customer_email: "bench@example.com".into(),
            quantity: Some(1),
        }
    }

    fn rejected_field(request: CheckoutRequest) -> (&'static str, String) {
        match request.validate() {
            Err(Error::ValidationFailed { field, reason }) => (field, reason),
            other => panic!("expected ValidationFailed, got {other:?}"),
        }
    }

    #[test]
    fn the_benchmark_body_parses_and_validates() {
        let body = r#"{"bookId":3,"customerName":"Benchmark User","customerEmail":"bench@example.com","quantity":1}"#;
        let parsed = parse(body).unwrap();
        assert_eq!(parsed, request());
        let valid = parsed.validate().unwrap();
        assert_eq!(valid.quantity, 1);
        assert_eq!(valid.customer_name, "Benchmark User");
    }

    #[test]
    fn quantity_is_optional_and_null_means_absent() {
        let absent = parse(r#"{"bookId":3,"customerName":"a","customerEmail":"a@b"}"#).unwrap();
        assert_eq!(absent.quantity, None);
        assert_eq!(absent.validate().unwrap().quantity, 1);
        let null =
            parse(r#"{"bookId":3,"customerName":"a","customerEmail":"a@b","quantity":null}"#)
                .unwrap();
        assert_eq!(null.quantity, None);
    }

    #[test]
    fn unknown_fields_are_ignored_whatever_their_shape() {
        let body = r#"{"extra":{"deep":[1,2,{"x":null}]},"bookId":3,"customerName":"a","customerEmail":"a@b","note":"hi"}"#;
        assert_eq!(parse(body).unwrap().book_id, 3);
    }

    #[test]
    fn missing_fields_are_named() {
        let error = parse(r#"{"bookId":3,"customerEmail":"a@b"}"#).unwrap_err();
        assert_eq!(error, "invalid JSON body: missing field `customerName`");
        let error = parse(r#"{"customerName":"a","customerEmail":"a@b"}"#).unwrap_err();
        assert_eq!(error, "invalid JSON body: missing field `bookId`");
    }

    #[test]
    fn wrong_types_name_the_field_and_what_was_sent() {
        for (body, message) in [
            (
                r#"{"bookId":"3","customerName":"a","customerEmail":"a@b"}"#,
                "`bookId` must be an integer, got a string",
            ),
            (
                r#"{"bookId":3.0,"customerName":"a","customerEmail":"a@b"}"#,
                "`bookId` must be an integer, got a number with a fraction or exponent",
            ),
            (
                r#"{"bookId":3,"customerName":5,"customerEmail":"a@b"}"#,
                "`customerName` must be a string, got an integer",
            ),
            (
                r#"{"bookId":3,"customerName":"a","customerEmail":null}"#,
                "`customerEmail` must be a string, got null",
            ),
            (
                r#"{"bookId":3,"customerName":"a","customerEmail":"a@b","quantity":"2"}"#,
                "`quantity` must be an integer, got a string",
            ),
            (
                r#"{"bookId":3,"customerName":"a","customerEmail":"a@b","quantity":true}"#,
                "`quantity` must be an integer, got a boolean",
            ),
            (
                r#"{"bookId":[3],"customerName":"a","customerEmail":"a@b"}"#,
                "`bookId` must be an integer, got an array",
            ),
            (
                r#"{"bookId":3,"customerName":{"x":1},"customerEmail":"a@b"}"#,
                "`customerName` must be a string, got an object",
            ),
        ] {
            assert_eq!(parse(body).unwrap_err(), format!("invalid JSON body: {message}"), "{body}");
        }
    }

    #[test]
    fn numbers_that_do_not_fit_the_column_type_are_shape_errors() {
        let too_big_quantity =
            parse(r#"{"bookId":3,"customerName":"a","customerEmail":"a@b","quantity":2147483648}"#)
                .unwrap_err();
        assert_eq!(
            too_big_quantity,
            "invalid JSON body: `quantity` must be an integer that fits in 32 bits, got 2147483648"
        );
        let too_small = parse(
            r#"{"bookId":3,"customerName":"a","customerEmail":"a@b","quantity":-2147483649}"#,
        )
        .unwrap_err();
        assert!(too_small.ends_with("fits in 32 bits, got -2147483649"), "{too_small}");
        let too_big_id =
            parse(r#"{"bookId":9223372036854775808,"customerName":"a","customerEmail":"a@b"}"#)
                .unwrap_err();
        assert_eq!(
            too_big_id,
            "invalid JSON body: `bookId` must be an integer that fits in 64 bits, got 9223372036854775808"
        );
        assert_eq!(
            parse(r#"{"bookId":-9223372036854775808,"customerName":"a","customerEmail":"a@b"}"#)
                .unwrap()
                .book_id,
            i64::MIN,
            "fits, and is then refused by the rules (422), not here"
        );
    }

    #[test]
    fn duplicate_fields_and_non_objects_are_rejected() {
        let error = parse(r#"{"bookId":3,"bookId":4,"customerName":"a","customerEmail":"a@b"}"#)
            .unwrap_err();
        assert_eq!(error, "invalid JSON body: field `bookId` is given more than once");
        for (body, kind) in [
            ("[]", "an array"),
            ("[1,{\"a\":[]}]", "an array"),
            ("null", "null"),
            ("3", "an integer"),
            ("\"x\"", "a string"),
            ("true", "a boolean"),
            ("-1.5", "a number with a fraction or exponent"),
        ] {
            assert_eq!(
                parse(body).unwrap_err(),
                format!("invalid JSON body: the body must be a JSON object, got {kind}")
            );
        }
    }

    #[test]
    fn syntax_errors_are_left_to_the_serializer() {
        for body in ["", "{", "{\"bookId\":3,", "nul", "{\"bookId\":3}}", "[1,"] {
            assert!(parse(body).unwrap_err().starts_with("syntax: "), "{body}");
        }
    }

    #[test]
    fn book_id_must_be_at_least_one() {
        assert_eq!(rejected_field(CheckoutRequest { book_id: 0, ..request() }).0, "bookId");
        assert_eq!(rejected_field(CheckoutRequest { book_id: -5, ..request() }).0, "bookId");
        assert!(CheckoutRequest { book_id: 1, ..request() }.validate().is_ok());
    }

    #[test]
    fn customer_name_must_not_be_blank_and_at_most_120_characters() {
        let blank = CheckoutRequest { customer_name: " \t\n".into(), ..request() };
        assert_eq!(rejected_field(blank), ("customerName", "must not be blank".into()));
        let empty = CheckoutRequest { customer_name: String::new(), ..request() };
        assert_eq!(rejected_field(empty).0, "customerName");
        let at_limit = CheckoutRequest { customer_name: "ü".repeat(120), ..request() };
        assert!(at_limit.validate().is_ok(), "120 multi-byte characters are allowed");
        let over = CheckoutRequest { customer_name: "n".repeat(121), ..request() };
        assert_eq!(
            rejected_field(over),
            ("customerName", "must be at most 120 characters, got 121".into())
        );
    }

    #[test]
    fn customer_email_must_not_be_blank_at_most_255_characters_and_contain_at() {
        let blank = CheckoutRequest { customer_email: "  ".into(), ..request() };
        assert_eq!(rejected_field(blank), ("customerEmail", "must not be blank".into()));
        let no_at = CheckoutRequest { customer_email: "bench.example.com".into(), ..request() };
        assert_eq!(rejected_field(no_at), ("customerEmail", "must contain '@'".into()));
        let at_limit =
            CheckoutRequest { customer_email: format!("{}@x", "e".repeat(253)), ..request() };
        assert!(at_limit.validate().is_ok());
        let over =
            CheckoutRequest { customer_email: format!("{}@x", "e".repeat(254)), ..request() };
        assert_eq!(rejected_field(over).0, "customerEmail");
    }

    #[test]
    fn nul_characters_in_names_and_emails_are_refused() {
        let name = CheckoutRequest { customer_name: "a\0b".into(), ..request() };
        assert_eq!(
            rejected_field(name),
            ("customerName", "must not contain NUL characters".into())
        );
        let email = CheckoutRequest { customer_email: "a@b\0".into(), ..request() };
        assert_eq!(rejected_field(email).0, "customerEmail");
    }

    #[test]
    fn quantity_must_be_from_1_to_100() {
        for ok in [1, 100] {
            assert!(CheckoutRequest { quantity: Some(ok), ..request() }.validate().is_ok());
        }
        for bad in [0, -1, 101, i32::MAX] {
            let (field, reason) =
                rejected_field(CheckoutRequest { quantity: Some(bad), ..request() });
            assert_eq!(field, "quantity");
            assert_eq!(reason, format!("must be from 1 to 100, got {bad}"));
        }
    }

    #[test]
    fn the_first_broken_rule_in_field_order_is_reported() {
        let everything_wrong = CheckoutRequest {
            book_id: 0,
            customer_name: String::new(),
            customer_email: String::new(),
            quantity: Some(0),
        };
        assert_eq!(rejected_field(everything_wrong).0, "bookId");
    }
}
