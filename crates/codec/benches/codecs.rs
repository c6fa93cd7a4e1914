//! serde_json vs simd-json vs sonic-rs on the contract's real payloads (seeded books):
//! write `BookSummary` × 50 and × 500, the 200-item large-json body, one `BookDetail`;
//! read the checkout body.
//!
//! `cargo bench -p bookstore-codec --all-features --bench codecs`

use bookstore_codec::{Codec, SerdeJson, SimdJson, SonicRs};
use bookstore_domain::checkout::CheckoutBody;
use bookstore_domain::datetime::{Date, Timestamp};
use bookstore_domain::model::{
    Author, BookDetail, BookSummary, LargeItem, LargeJson, LargeSummary,
};
use bookstore_fixture::seed;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde::Serialize;
use std::hint::black_box;

fn summaries(count: i64) -> Vec<BookSummary> {
    (1..=count)
        .map(seed::book)
        .map(|b| BookSummary {
            id: b.id,
            title: b.title,
            author_name: seed::author(b.author_id).name,
            price_cents: b.price_cents,
            stock: b.stock,
            published_at: Date::from(b.published_at),
        })
        .collect()
}

fn large_json() -> LargeJson<'static> {
    let items: Vec<LargeItem> = (1..=200)
        .map(seed::book)
        .map(|b| LargeItem {
            id: b.id,
            title: b.title,
            author_name: seed::author(b.author_id).name,
            description: b.description,
            published_at: Date::from(b.published_at),
            price_cents: b.price_cents,
            stock: b.stock,
        })
        .collect();
    LargeJson {
        service: "bench",
        generated_at: Timestamp::now(),
        summary: LargeSummary::of(&items),
        items,
    }
}

fn detail() -> BookDetail {
    let b = seed::book(20_000);
    let a = seed::author(b.author_id);
    BookDetail {
        id: b.id,
        isbn: b.isbn,
        title: b.title,
        description: b.description,
        author: Author { id: a.id, name: a.name, bio: a.bio },
        price_cents: b.price_cents,
        stock: b.stock,
        published_at: Date::from(b.published_at),
    }
}

fn encode_group<T: Serialize + ?Sized>(c: &mut Criterion, name: &str, value: &T) {
    let bytes = SerdeJson::encode(value).unwrap().len() as u64;
    let mut group = c.benchmark_group(format!("encode {name}"));
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function(BenchmarkId::from_parameter("serde_json"), |b| {
        b.iter(|| SerdeJson::encode(black_box(value)).unwrap())
    });
    group.bench_function(BenchmarkId::from_parameter("simd-json"), |b| {
        b.iter(|| SimdJson::encode(black_box(value)).unwrap())
    });
    group.bench_function(BenchmarkId::from_parameter("sonic-rs"), |b| {
        b.iter(|| SonicRs::encode(black_box(value)).unwrap())
    });
    group.finish();
}

fn codecs(c: &mut Criterion) {
    encode_group(c, "BookSummary x50", &summaries(50));
    encode_group(c, "BookSummary x500", &summaries(500));
    encode_group(c, "large-json 200 items", &large_json());
    encode_group(c, "BookDetail", &detail());

    let body = br#"{"bookId":1234,"customerName":"Benchmark User","customerEmail":"bench@example.com","quantity":1}"#;
    let mut group = c.benchmark_group("decode CheckoutRequest");
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.bench_function(BenchmarkId::from_parameter("serde_json"), |b| {
        b.iter(|| SerdeJson::decode::<CheckoutBody>(black_box(body)).unwrap())
    });
    group.bench_function(BenchmarkId::from_parameter("simd-json"), |b| {
        b.iter(|| SimdJson::decode::<CheckoutBody>(black_box(body)).unwrap())
    });
    group.bench_function(BenchmarkId::from_parameter("sonic-rs"), |b| {
        b.iter(|| SonicRs::decode::<CheckoutBody>(black_box(body)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, codecs);
criterion_main!(benches);
