//! `POST /api/checkouts`: the request body, how it is read, and its rules.
//!
//! Reading is a hand-written `Deserialize` so that every error names the field it is about,
//! whichever serializer drives it: serde's derived messages say "expected i32" without
//! saying for which field. Shape errors (wrong type, a number that does not fit, a missing
//! field, a field given twice) are 400 `bad_request`; rule violations found afterwards by
//! [`CheckoutRequest::validate`] are 422 `validation_failed`.
//!
//! Unknown fields are ignored; `"quantity": null` counts as absent (default 1). Names and
//! e-mails are stored as sent; the blank check looks at the trimmed text and lengths count
//! characters (as `varchar(n)` does).

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Unexpected, Visitor};

use crate::error::Error;

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
    let chars = value.chars().count();
    if chars > max_chars {
        return Err(Error::ValidationFailed {
            field,
            reason: format!("must be at most {max_chars} characters, got {chars}"),
        });
    }
    Ok(())
}

const FIELDS: &[&str] = &["bookId", "customerName", "customerEmail", "quantity"];

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

/// Reads one integer field, naming the field in every error and rejecting values that do
/// not fit `T` (400 rather than a silent wrap or a database error later).
struct IntField<T> {
    name: &'static str,
    kind: &'static str,
    _t: std::marker::PhantomData<T>,
}

impl<T> IntField<T> {
    fn new(name: &'static str, kind: &'static str) -> Self {
        Self { name, kind, _t: std::marker::PhantomData }
    }
}

impl<'de, T: TryFrom<i64> + TryFrom<u64>> Visitor<'de> for IntField<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` as {}", self.name, self.kind)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        T::try_from(v).map_err(|_| E::invalid_value(Unexpected::Signed(v), &self))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        T::try_from(v).map_err(|_| E::invalid_value(Unexpected::Unsigned(v), &self))
    }
}

impl<'de, T: TryFrom<i64> + TryFrom<u64>> de::DeserializeSeed<'de> for IntField<T> {
    type Value = T;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        deserializer.deserialize_i64(self)
    }
}

/// Reads an optional integer field: absent handled by the caller, `null` is `None`.
struct OptionalIntField<T>(IntField<T>);

impl<'de, T: TryFrom<i64> + TryFrom<u64>> Visitor<'de> for OptionalIntField<T> {
    type Value = Option<T>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)?;
        f.write_str(" or null")
    }
    fn visit_none<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<T>, D::Error> {
        deserializer.deserialize_i64(self.0).map(Some)
    }
}

impl<'de, T: TryFrom<i64> + TryFrom<u64>> de::DeserializeSeed<'de> for OptionalIntField<T> {
    type Value = Option<T>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<T>, D::Error> {
        deserializer.deserialize_option(self)
    }
}

/// Reads one string field, naming the field when the type is wrong.
struct StringField(&'static str);

impl Visitor<'_> for StringField {
    type Value = String;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` as a string", self.0)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
        Ok(v)
    }
}

impl<'de> de::DeserializeSeed<'de> for StringField {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_string(self)
    }
}

impl<'de> Deserialize<'de> for CheckoutRequest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RequestVisitor;
        impl<'de> Visitor<'de> for RequestVisitor {
            type Value = CheckoutRequest;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a JSON object with bookId, customerName, customerEmail and optional quantity",
                )
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CheckoutRequest, A::Error> {
                let mut book_id = None;
                let mut customer_name = None;
                let mut customer_email = None;
                let mut quantity = None;
                while let Some(field) = map.next_key::<Field>()? {
                    match field {
                        Field::BookId => set_once(
                            &mut book_id,
                            "bookId",
                            map.next_value_seed(IntField::<i64>::new(
                                "bookId",
                                "a 64-bit integer",
                            ))?,
                        )?,
                        Field::CustomerName => set_once(
                            &mut customer_name,
                            "customerName",
                            map.next_value_seed(StringField("customerName"))?,
                        )?,
                        Field::CustomerEmail => set_once(
                            &mut customer_email,
                            "customerEmail",
                            map.next_value_seed(StringField("customerEmail"))?,
                        )?,
                        Field::Quantity => set_once(
                            &mut quantity,
                            "quantity",
                            map.next_value_seed(OptionalIntField(IntField::<i32>::new(
                                "quantity",
                                "a 32-bit integer",
                            )))?,
                        )?,
                        Field::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(CheckoutRequest {
                    book_id: book_id.ok_or_else(|| de::Error::missing_field("bookId"))?,
                    customer_name: customer_name
                        .ok_or_else(|| de::Error::missing_field("customerName"))?,
                    customer_email: customer_email
                        .ok_or_else(|| de::Error::missing_field("customerEmail"))?,
                    quantity: quantity.flatten(),
                })
            }
        }
        deserializer.deserialize_struct("CheckoutRequest", FIELDS, RequestVisitor)
    }
}

fn set_once<T, E: de::Error>(slot: &mut Option<T>, name: &'static str, value: T) -> Result<(), E> {
    if slot.is_some() {
        return Err(E::duplicate_field(name));
    }
    *slot = Some(value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<CheckoutRequest, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
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
        assert!(error.contains("missing field `customerName`"), "{error}");
        let error = parse(r#"{"customerName":"a","customerEmail":"a@b"}"#).unwrap_err();
        assert!(error.contains("missing field `bookId`"), "{error}");
    }

    #[test]
    fn wrong_types_name_the_field() {
        for (body, field) in [
            (r#"{"bookId":"3","customerName":"a","customerEmail":"a@b"}"#, "`bookId`"),
            (r#"{"bookId":3.0,"customerName":"a","customerEmail":"a@b"}"#, "`bookId`"),
            (r#"{"bookId":3,"customerName":5,"customerEmail":"a@b"}"#, "`customerName`"),
            (r#"{"bookId":3,"customerName":"a","customerEmail":null}"#, "`customerEmail`"),
            (
                r#"{"bookId":3,"customerName":"a","customerEmail":"a@b","quantity":"2"}"#,
                "`quantity`",
            ),
            (
                r#"{"bookId":3,"customerName":"a","customerEmail":"a@b","quantity":true}"#,
                "`quantity`",
            ),
        ] {
            let error = parse(body).unwrap_err();
            assert!(error.contains(field), "{body}: {error}");
        }
    }

    #[test]
    fn numbers_that_do_not_fit_the_column_type_are_shape_errors() {
        let too_big_quantity =
            parse(r#"{"bookId":3,"customerName":"a","customerEmail":"a@b","quantity":2147483648}"#)
                .unwrap_err();
        assert!(too_big_quantity.contains("`quantity` as a 32-bit integer"), "{too_big_quantity}");
        let too_big_id =
            parse(r#"{"bookId":9223372036854775808,"customerName":"a","customerEmail":"a@b"}"#)
                .unwrap_err();
        assert!(too_big_id.contains("`bookId`"), "{too_big_id}");
        let huge =
            parse(r#"{"bookId":1e400,"customerName":"a","customerEmail":"a@b"}"#).unwrap_err();
        assert!(!huge.is_empty());
    }

    #[test]
    fn duplicate_fields_and_non_objects_are_rejected() {
        let error = parse(r#"{"bookId":3,"bookId":4,"customerName":"a","customerEmail":"a@b"}"#)
            .unwrap_err();
        assert!(error.contains("duplicate field `bookId`"), "{error}");
        for body in ["[]", "null", "3", "\"x\"", ""] {
            assert!(parse(body).is_err(), "{body}");
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
