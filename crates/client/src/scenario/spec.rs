//! The vocabulary of the scenario table: what a scenario sends, which books it is about,
//! what a correct answer is, and the same work straight on the store.

use bookstore_fixture::audit::Writes;

/// What a scenario sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// `GET path?query`, the same request every time.
    Get {
        /// The route (from `bookstore_registry::routes`).
        path: &'static str,
        /// Its query string, without `?` (empty: none).
        query: &'static str,
    },
    /// `GET /api/books/{id}` for the scenario's books.
    BookById,
    /// `POST /api/checkouts` of one copy of the scenario's books (the body of SPEC §4).
    Checkout,
}

/// Which books the requests are about, and in which order each user asks for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Books {
    /// None: the request names no book.
    None,
    /// Uniformly random over `first..=last` (a seeded generator, the same for every stack).
    Random {
        /// The lowest book id asked for.
        first: i64,
        /// The highest, included.
        last: i64,
    },
    /// `first..=last` in order, the users spread over it.
    Cycle {
        /// The book id the cycle starts from.
        first: i64,
        /// The last before it starts again, included.
        last: i64,
    },
    /// Always this book.
    One(i64),
}

/// What a correct answer is (checked cheaply on every response, in full on a sample).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// 200 `{"status":"UP"}`.
    Health,
    /// 200, the small-json document.
    SmallJson,
    /// 200, the large-json document.
    LargeJson {
        /// Books in it: the request's `limit`.
        items: usize,
    },
    /// 200, the `BookDetail` of the book asked for.
    BookDetail,
    /// 200, the first books by id.
    FirstBooks {
        /// Books in the page: the request's `limit`.
        items: usize,
    },
    /// 200, search results.
    Search {
        /// The request's `q`: every result's title or author name contains it, ignoring case.
        q: &'static str,
        /// Results expected: the request's `limit`, which the seed has enough matches for.
        items: usize,
    },
    /// 200, the per-author inventory.
    Inventory {
        /// Authors in the report: the request's `limit`.
        rows: usize,
    },
    /// 201 with the checkout, or an honest 409 `out_of_stock`.
    Checkout,
}

/// The same work without HTTP, for the database ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreCall {
    /// No database work (the scenario has an HTTP ceiling instead).
    None,
    /// `large_items(limit)`.
    LargeItems(i64),
    /// `book(id)` of the scenario's books.
    Book,
    /// `books(limit)`.
    Books(i64),
    /// `search_books(contains(q), limit)`.
    Search(&'static str, i64),
    /// `author_inventory(limit)`.
    Inventory(i64),
    /// `checkout` of one copy of the scenario's books.
    Checkout,
}

/// Everything about one scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScenarioSpec {
    /// Its name in SPEC §4.
    pub name: &'static str,
    /// What it sends.
    pub request: Request,
    /// Which books its requests name, in which order.
    pub books: Books,
    /// What a correct answer is.
    pub answer: Answer,
    /// What its write audit checks beyond the common rules; `None`: it reads only.
    pub writes: Option<Writes>,
    /// The same work straight on the store.
    pub store_call: StoreCall,
    /// What it stresses, for people.
    pub stresses: &'static str,
}

/// The quantity every checkout of the scenarios asks for.
pub const CHECKOUT_QUANTITY: i32 = 1;
