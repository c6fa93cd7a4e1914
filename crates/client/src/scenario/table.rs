//! The twelve scenarios of SPEC §4, declared once in the `scenarios!` table: what each
//! sends, which books it is about, what a correct answer is, whether it writes, what it
//! stresses, and the same work straight on the store for the database ceiling. Everything
//! else — requests, checks, the report's descriptions — is derived from the entry.

use std::fmt;

use super::body;
use super::spec::*;

use bookstore_domain::checkout::NewCheckout;
use bookstore_domain::params::contains_pattern;
use bookstore_domain::store::Store;
use bookstore_fixture::audit::Writes;
use bookstore_fixture::seed;
use bookstore_registry::routes;

use crate::engine::{ErrorKind, Outcome, Picker};

/// Declares the scenarios: the enum, its list, and each one's [`ScenarioSpec`]. The one
/// place a scenario is written; a new one is a new line here (and, for a new kind of
/// database work, a [`StoreCall`] variant).
macro_rules! scenarios {
    ($($(#[$doc:meta])* $variant:ident => $spec:expr,)+) => {
        /// A benchmark scenario (SPEC §4); its facts are in [`Scenario::spec`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Scenario {
            $($(#[$doc])* $variant,)+
        }

        impl Scenario {
            /// Every scenario, in SPEC order (reads first, then writes).
            pub const ALL: &[Scenario] = &[$(Scenario::$variant,)+];

            /// Its entry in the table.
            pub const fn spec(self) -> ScenarioSpec {
                match self {
                    $(Scenario::$variant => $spec,)+
                }
            }
        }
    };
}

/// The first book the checkout scenarios that spread over books use (1 and 2 are special).
const FIRST_ORDINARY_BOOK: i64 = 3;

scenarios! {
    /// `GET /health`.
    Health => ScenarioSpec {
        name: "health",
        request: Request::Get { path: routes::HEALTH, query: "" },
        books: Books::None,
        answer: Answer::Health,
        writes: None,
        store_call: StoreCall::None,
        stresses: "no database: framework and HTTP only",
    },
    /// `GET /api/books/bench/small-json`.
    SmallJson => ScenarioSpec {
        name: "smallJson",
        request: Request::Get { path: routes::SMALL_JSON, query: "" },
        books: Books::None,
        answer: Answer::SmallJson,
        writes: None,
        store_call: StoreCall::None,
        stresses: "a small body built per request, no database",
    },
    /// `GET /api/books/bench/large-json?limit=200`.
    LargeJson => ScenarioSpec {
        name: "largeJson",
        request: Request::Get { path: routes::LARGE_JSON, query: "limit=200" },
        books: Books::None,
        answer: Answer::LargeJson { items: 200 },
        writes: None,
        store_call: StoreCall::LargeItems(200),
        stresses: "books read and written as a large JSON body",
    },
    /// `GET /api/books/{id}`, id uniform random over every book.
    BookById => ScenarioSpec {
        name: "bookById",
        request: Request::BookById,
        books: Books::Random { first: 1, last: seed::BOOKS },
        answer: Answer::BookDetail,
        writes: None,
        store_call: StoreCall::Book,
        stresses: "one indexed lookup with a join",
    },
    /// `GET /api/books?limit=50`.
    BookList => ScenarioSpec {
        name: "bookList",
        request: Request::Get { path: routes::BOOKS, query: "limit=50" },
        books: Books::None,
        answer: Answer::FirstBooks { items: 50 },
        writes: None,
        store_call: StoreCall::Books(50),
        stresses: "rows decoded and written as JSON",
    },
    /// `GET /api/books?limit=500`.
    BookList500 => ScenarioSpec {
        name: "bookList500",
        request: Request::Get { path: routes::BOOKS, query: "limit=500" },
        books: Books::None,
        answer: Answer::FirstBooks { items: 500 },
        writes: None,
        store_call: StoreCall::Books(500),
        stresses: "many rows decoded and written as JSON",
    },
    /// `GET /api/books/search?q=Book&limit=20`.
    BookSearch => ScenarioSpec {
        name: "bookSearch",
        request: Request::Get { path: routes::BOOK_SEARCH, query: "q=Book&limit=20" },
        books: Books::None,
        answer: Answer::Search { q: "Book", items: 20 },
        writes: None,
        store_call: StoreCall::Search("Book", 20),
        stresses: "ILIKE over titles and author names",
    },
    /// `GET /api/books/bench/aggregate-report?limit=50`.
    AggregateReport => ScenarioSpec {
        name: "aggregateReport",
        request: Request::Get { path: routes::AGGREGATE_REPORT, query: "limit=50" },
        books: Books::None,
        answer: Answer::Inventory { rows: 50 },
        writes: None,
        store_call: StoreCall::Inventory(50),
        stresses: "a GROUP BY over all books: PostgreSQL's work",
    },
    /// `POST /api/checkouts`, bookId cycling through the ordinary books in order.
    CheckoutCreate => ScenarioSpec {
        name: "checkoutCreate",
        request: Request::Checkout,
        books: Books::Cycle { first: FIRST_ORDINARY_BOOK, last: seed::BOOKS },
        answer: Answer::Checkout,
        writes: Some(Writes::Spread),
        store_call: StoreCall::Checkout,
        stresses: "a five-statement transaction per request",
    },
    /// `POST /api/checkouts`, always the hotspot book: pure row-lock contention.
    CheckoutHotspot => ScenarioSpec {
        name: "checkoutHotspot",
        request: Request::Checkout,
        books: Books::One(seed::HOTSPOT_BOOK_ID),
        answer: Answer::Checkout,
        writes: Some(Writes::Hotspot),
        store_call: StoreCall::Checkout,
        stresses: "every transaction waits for the same row lock",
    },
    /// `POST /api/checkouts`, bookId uniform random over the ordinary books.
    CheckoutDistributed => ScenarioSpec {
        name: "checkoutDistributed",
        request: Request::Checkout,
        books: Books::Random { first: FIRST_ORDINARY_BOOK, last: seed::BOOKS },
        answer: Answer::Checkout,
        writes: Some(Writes::Spread),
        store_call: StoreCall::Checkout,
        stresses: "write throughput with little contention",
    },
    /// `POST /api/checkouts`, the book that sells out: its stock of sales, then 409s.
    CheckoutSoldOut => ScenarioSpec {
        name: "checkoutSoldOut",
        request: Request::Checkout,
        books: Books::One(seed::SOLD_OUT_BOOK_ID),
        answer: Answer::Checkout,
        writes: Some(Writes::SoldOut),
        store_call: StoreCall::Checkout,
        stresses: "sales until the stock is gone, then every answer a 409 refusal",
    },
}

pub use crate::engine::picker::PICK_SEED;

impl Scenario {
    /// Its name in SPEC §4.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// One line for people: the request, what it stresses, and the size of a correct answer
    /// (computed from the seed).
    pub fn describe(self) -> String {
        let spec = self.spec();
        let size = body::size_text(body::bytes(spec.answer));
        let books = match spec.books {
            Books::None => String::new(),
            Books::Random { first, last } => format!(", book ids random in {first}..={last}"),
            Books::Cycle { first, last } => format!(", book ids {first}..={last} in turn"),
            Books::One(id) => format!(", always book {id}"),
        };
        format!("{} {}{books} — {}; answers of {size}", self.method(), self.target(), spec.stresses)
    }

    /// The scenario called `name`, or an error listing the valid names.
    pub fn parse(name: &str) -> Result<Self, String> {
        Scenario::ALL.iter().copied().find(|s| s.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Scenario::ALL.iter().map(|s| s.name()).collect();
            format!("unknown scenario {name:?}; valid: {}", names.join(", "))
        })
    }

    /// It writes (restore before, audit after).
    pub fn writes(self) -> bool {
        self.spec().writes.is_some()
    }

    /// What the audit of a write scenario checks beyond the common rules.
    pub fn audited_as(self) -> Writes {
        self.spec().writes.unwrap_or(Writes::Spread)
    }

    /// It reads or writes the database (has a database ceiling).
    pub fn uses_database(self) -> bool {
        self.spec().store_call != StoreCall::None
    }

    /// The request line's target, e.g. `/api/books?limit=50` (`{id}` for a book by id).
    pub fn target(self) -> String {
        match self.spec().request {
            Request::Get { path, query: "" } => path.to_owned(),
            Request::Get { path, query } => format!("{path}?{query}"),
            Request::BookById => format!("{}{{id}}", routes::BOOK_BY_ID_PREFIX),
            Request::Checkout => routes::CHECKOUTS.to_owned(),
        }
    }

    /// The request's HTTP method: `POST` for checkouts, `GET` for the rest.
    pub fn method(self) -> &'static str {
        match self.spec().request {
            Request::Get { .. } | Request::BookById => "GET",
            Request::Checkout => "POST",
        }
    }

    /// Book ids of the requests, when they vary.
    pub(crate) fn book_ids(self) -> Vec<i64> {
        match self.spec().books {
            Books::None => Vec::new(),
            Books::Random { first, last } | Books::Cycle { first, last } => {
                (first..=last).collect()
            }
            Books::One(id) => vec![id],
        }
    }

    /// The picker of user `index` of `users`.
    pub fn picker(self, index: usize, users: usize, requests: usize) -> Picker {
        match self.spec().books {
            Books::Random { .. } => Picker::random(PICK_SEED, index, requests),
            Books::Cycle { .. } => Picker::cycle(index, users, requests),
            Books::None | Books::One(_) => Picker::Fixed(0),
        }
    }

    /// The same work on the store, no HTTP (the database ceiling).
    pub async fn call_store<S: Store>(self, store: &S, book_id: Option<i64>) -> Outcome {
        let result = match self.spec().store_call {
            StoreCall::None => return Outcome::Ok,
            StoreCall::LargeItems(limit) => store.large_items(limit).await.map(drop),
            StoreCall::Book => store.book(book_id.unwrap_or(1)).await.map(drop),
            StoreCall::Books(limit) => store.books(limit).await.map(drop),
            StoreCall::Search(q, limit) => {
                store.search_books(&contains_pattern(q), limit).await.map(drop)
            }
            StoreCall::Inventory(limit) => store.author_inventory(limit).await.map(drop),
            StoreCall::Checkout => {
                let order = NewCheckout {
                    book_id: book_id.unwrap_or(FIRST_ORDINARY_BOOK),
                    customer_name: "Benchmark User".into(),
                    customer_email: "bench@example.com".into(),
                    quantity: CHECKOUT_QUANTITY,
                };
                match store.checkout(order).await {
                    Err(bookstore_domain::Error::OutOfStock { .. }) => return Outcome::Rejected,
                    other => other.map(drop),
                }
            }
        };
        match result {
            Ok(()) => Outcome::Ok,
            Err(_) => Outcome::Error(ErrorKind::Io),
        }
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_valid_ones() {
        for &scenario in Scenario::ALL {
            assert_eq!(Scenario::parse(scenario.name()), Ok(scenario));
        }
        let error = Scenario::parse("bookByID").unwrap_err();
        assert!(error.contains("bookById") && error.contains("checkoutSoldOut"), "{error}");
    }

    #[test]
    fn the_table_is_consistent_with_itself() {
        for &scenario in Scenario::ALL {
            let spec = scenario.spec();
            // Writes and only writes are checkouts, with their store call and answer.
            let checkout = spec.request == Request::Checkout;
            assert_eq!(checkout, spec.writes.is_some(), "{}", spec.name);
            assert_eq!(checkout, spec.store_call == StoreCall::Checkout, "{}", spec.name);
            assert_eq!(checkout, spec.answer == Answer::Checkout, "{}", spec.name);
            // A request about books has books to ask for, and only then.
            let about_books = matches!(spec.request, Request::BookById | Request::Checkout);
            assert_eq!(about_books, spec.books != Books::None, "{}", spec.name);
            assert!(!spec.stresses.is_empty());
        }
        let names: std::collections::BTreeSet<&str> =
            Scenario::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(names.len(), Scenario::ALL.len(), "names are unique");
    }
}
