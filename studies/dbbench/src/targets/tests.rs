//! The JSON rows, without a server.

use super::shared::*;
use crate::data::Item;

#[test]
fn json_rows_escape_what_json_needs() {
    let item = Item {
        id: 1,
        sku: "s".into(),
        name: "a \"q\" \\ \t\n é 📚".into(),
        price_cents: 2,
        quantity: 3,
    };
    let json = json_rows(std::slice::from_ref(&item));
    let back: Vec<(i64, String, String, i32, i32)> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, vec![(1, "s".into(), item.name.clone(), 2, 3)]);
}
