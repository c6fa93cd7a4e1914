//! How large a correct answer to each scenario is, computed from the seed with the
//! contract's own response types — so the report's descriptions say what the stacks send
//! without a number typed in by hand.

use bookstore_domain::datetime::Timestamp;
use bookstore_domain::model::{
    AuthorInventory, BookDetail, BookSummary, CheckoutResponse, Health, LargeItem, LargeJson,
    LargeSummary, SmallJson,
};
use bookstore_fixture::seed;

use super::spec::{Answer, CHECKOUT_QUANTITY};

fn json(value: &impl serde::Serialize) -> usize {
    serde_json::to_vec(value).expect("the contract's types serialize").len()
}

fn summary(n: i64) -> BookSummary {
    let book = seed::book(n);
    let author = seed::author(book.author_id);
    BookSummary::from((
        book.id,
        book.title,
        author.name,
        book.price_cents,
        book.stock,
        book.published_at,
    ))
}

fn large_item(n: i64) -> LargeItem {
    let book = seed::book(n);
    let author = seed::author(book.author_id);
    LargeItem::from((
        book.id,
        book.title,
        author.name,
        book.description,
        book.published_at,
        book.price_cents,
        book.stock,
    ))
}

/// The per-author inventory of the seed: every author has the same number of books, so the
/// order is by author id.
fn inventory(rows: usize) -> Vec<AuthorInventory> {
    (1..=seed::AUTHORS)
        .take(rows)
        .map(|a| {
            let books: Vec<seed::Book> = seed::books().filter(|b| b.author_id == a).collect();
            let count = books.len() as i64;
            let stock: i64 = books.iter().map(|b| i64::from(b.stock)).sum();
            let price: i64 = books.iter().map(|b| i64::from(b.price_cents)).sum();
            AuthorInventory::from((a, seed::author(a).name, count, stock, price / count))
        })
        .collect()
}

/// The bytes of a correct answer's body (for `BookDetail`, of the book in the middle of the
/// seed; for small-json, of the longest stack name).
pub fn bytes(answer: Answer) -> usize {
    let now = Timestamp::now();
    match answer {
        Answer::Health => json(&Health::UP),
        Answer::SmallJson => json(&SmallJson {
            service: "actix-serde-diesel",
            version: 1,
            now,
            tags: ["actix-web", "serde_json", "diesel", "benchmark"],
        }),
        Answer::LargeJson { items } => {
            let items: Vec<LargeItem> = (1..=items as i64).map(large_item).collect();
            let summary = LargeSummary::of(&items);
            json(&LargeJson { service: "actix-serde-diesel", generated_at: now, summary, items })
        }
        Answer::BookDetail => {
            let book = seed::book(seed::BOOKS / 2);
            let author = seed::author(book.author_id);
            json(&BookDetail::from((
                book.id,
                book.isbn,
                book.title,
                book.description,
                author.id,
                author.name,
                author.bio,
                book.price_cents,
                book.stock,
                book.published_at,
            )))
        }
        Answer::FirstBooks { items } | Answer::Search { items, .. } => {
            json(&(1..=items as i64).map(summary).collect::<Vec<_>>())
        }
        Answer::Inventory { rows } => json(&inventory(rows)),
        Answer::Checkout => json(&CheckoutResponse {
            id: uuid::Uuid::nil(),
            book_id: seed::BOOKS,
            customer_name: "Benchmark User".into(),
            customer_email: "bench@example.com".into(),
            quantity: CHECKOUT_QUANTITY,
            checked_out_at: now,
        }),
    }
}

/// `bytes` for people: "15 B", "5.9 KB", "61 KB".
pub fn size_text(bytes: usize) -> String {
    match bytes {
        0..1000 => format!("{bytes} B"),
        1000..10_000 => format!("{:.1} KB", bytes as f64 / 1000.0),
        _ => format!("{:.0} KB", bytes as f64 / 1000.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_what_the_contract_writes() {
        assert_eq!(bytes(Answer::Health), r#"{"status":"UP"}"#.len());
        // 50 summaries: about 120 bytes each.
        let list = bytes(Answer::FirstBooks { items: 50 });
        assert!((5_000..7_000).contains(&list), "{list}");
        assert!(bytes(Answer::FirstBooks { items: 500 }) > 10 * list - 1000);
        let inventory = bytes(Answer::Inventory { rows: 50 });
        assert!((3_000..6_000).contains(&inventory), "{inventory}");
        assert_eq!(
            (size_text(15), size_text(5_930), size_text(61_400)),
            ("15 B".into(), "5.9 KB".into(), "61 KB".into())
        );
    }
}
