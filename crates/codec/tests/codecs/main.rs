//! The three serializers write the same bytes for every contract type and read the
//! checkout body the same way.

use bookstore_codec::{Codec, SerdeJson, SimdJson, SonicRs};
use bookstore_domain::checkout::{CheckoutBody, CheckoutRequest};
use bookstore_domain::datetime::{Date, Timestamp};
use bookstore_domain::model::{
    Author, AuthorInventory, BookDetail, BookSummary, CheckoutResponse, ErrorBody, Health,
    LargeItem, LargeJson, LargeSummary, SmallJson,
};
use bookstore_fixture::seed;
use serde::Serialize;

fn date(d: time::Date) -> Date {
    Date::from(d)
}

/// Strings that stress escaping: quotes, backslashes, every control character, non-ASCII,
/// characters some encoders escape (`/`, `<`, U+2028), and surrogate-pair emoji.
fn awkward_strings() -> Vec<String> {
    let controls: String = (0u8..0x20).map(char::from).collect();
    vec![
        String::new(),
        "plain".into(),
        "quote \" backslash \\ slash / </script>".into(),
        controls,
        "\u{7f} del, \u{2028} line sep, \u{2029} para sep".into(),
        "Ünïcödé — 書 — 🚀📚".into(),
        "tab\tnewline\nreturn\r".into(),
    ]
}

fn all_three<T: Serialize + ?Sized + std::fmt::Debug>(value: &T) -> String {
    let reference = SerdeJson::encode(value).unwrap();
    assert_eq!(SimdJson::encode(value).unwrap(), reference, "simd-json differs for {value:?}");
    assert_eq!(SonicRs::encode(value).unwrap(), reference, "sonic-rs differs for {value:?}");
    String::from_utf8(reference).unwrap()
}

fn summary(n: i64) -> BookSummary {
    let b = seed::book(n);
    BookSummary {
        id: b.id,
        title: b.title,
        author_name: seed::author(b.author_id).name,
        price_cents: b.price_cents,
        stock: b.stock,
        published_at: date(b.published_at),
    }
}

#[test]
fn every_contract_type_is_written_byte_for_byte_the_same() {
    let now = Timestamp::now();
    all_three(&Health::UP);
    all_three(&SmallJson { service: "s", version: 1, now, tags: ["a", "b", "c", "benchmark"] });
    all_three(&(1..=500).map(summary).collect::<Vec<_>>());
    for text in awkward_strings() {
        let detail = BookDetail {
            id: i64::MAX,
            isbn: text.clone(),
            title: text.clone(),
            description: text.clone(),
            author: Author { id: i64::MIN, name: text.clone(), bio: text.clone() },
            price_cents: i32::MIN,
            stock: i32::MAX,
            published_at: date(
                time::Date::from_calendar_date(2024, time::Month::February, 29).unwrap(),
            ),
        };
        all_three(&detail);
        let item = LargeItem {
            id: 1,
            title: text.clone(),
            author_name: text.clone(),
            description: text.clone(),
            published_at: date(
                time::Date::from_calendar_date(2020, time::Month::January, 1).unwrap(),
            ),
            price_cents: 0,
            stock: -1,
        };
        let items = vec![item.clone(), item];
        all_three(&LargeJson {
            service: &text,
            generated_at: now,
            summary: LargeSummary::of(&items),
            items,
        });
        all_three(&AuthorInventory {
            author_id: 0,
            author_name: text.clone(),
            book_count: 40,
            total_stock: i64::MAX,
            average_price_cents: -1,
        });
        all_three(&CheckoutResponse {
            id: uuid::Uuid::from_u128(u128::MAX),
            book_id: 3,
            customer_name: text.clone(),
            customer_email: text.clone(),
            quantity: 100,
            checked_out_at: now,
        });
        all_three(&ErrorBody { error: "bad_request", message: &text });
    }
}

#[test]
fn empty_lists_are_the_same() {
    assert_eq!(all_three(&Vec::<BookSummary>::new()), "[]");
}

fn decode_all(body: &str) -> [Result<Result<CheckoutRequest, String>, ()>; 3] {
    fn one<C: Codec>(body: &str) -> Result<Result<CheckoutRequest, String>, ()> {
        C::decode::<CheckoutBody>(body.as_bytes())
            .map(|b| b.into_request().map_err(|e| e.to_string()))
            .map_err(|_| ())
    }
    [one::<SerdeJson>(body), one::<SimdJson>(body), one::<SonicRs>(body)]
}

#[test]
fn checkout_bodies_are_read_the_same_way_by_all_three() {
    let long = "x".repeat(10_000);
    let bodies = [
        r#"{"bookId":3,"customerName":"Benchmark User","customerEmail":"bench@example.com","quantity":1}"#.to_owned(),
        r#"{"bookId":3,"customerName":"a","customerEmail":"a@b"}"#.to_owned(),
        r#"{"bookId":3,"customerName":"a","customerEmail":"a@b","quantity":null,"x":[1,{"y":2}]}"#.to_owned(),
        r#"{"bookId":"3","customerName":"a","customerEmail":"a@b"}"#.to_owned(),
        r#"{"bookId":3.0,"customerName":"a","customerEmail":"a@b"}"#.to_owned(),
        r#"{"bookId":9223372036854775808,"customerName":"a","customerEmail":"a@b"}"#.to_owned(),
        r#"{"bookId":-3,"customerName":"a","customerEmail":"a@b","quantity":2147483648}"#.to_owned(),
        r#"{"bookId":3,"bookId":3,"customerName":"a","customerEmail":"a@b"}"#.to_owned(),
        r#"{"customerName":"\u00fc\ud83d\ude80\n","customerEmail":"a@b","bookId":1}"#.to_owned(),
        format!(r#"{{"bookId":1,"customerName":"{long}","customerEmail":"a@b"}}"#),
        "[1,2]".to_owned(),
        "null".to_owned(),
        "  {\"bookId\":1,\"customerName\":\"a\",\"customerEmail\":\"a@b\"}  ".to_owned(),
    ];
    for body in &bodies {
        let [serde, simd, sonic] = decode_all(body);
        assert!(serde.is_ok(), "serde_json found a syntax error in {body}");
        assert_eq!(simd, serde, "simd-json reads {body} differently");
        assert_eq!(sonic, serde, "sonic-rs reads {body} differently");
    }
}

#[test]
fn malformed_bodies_are_syntax_errors_for_all_three() {
    for body in [
        "",
        "{",
        "{\"bookId\":3,",
        "nul",
        "{\"bookId\":3}}",
        "[1,",
        "{\"a\" 1}",
        "\"unterminated",
        "{'a':1}",
    ] {
        for (name, outcome) in ["serde_json", "simd-json", "sonic-rs"].iter().zip(decode_all(body))
        {
            assert_eq!(outcome, Err(()), "{name} accepted {body:?}");
        }
    }
}
