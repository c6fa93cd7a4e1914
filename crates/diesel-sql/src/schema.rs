//! diesel's view of `crates/fixture/sql/schema.sql`. Written by hand to match it; the
//! `schema_matches_the_sql_schema` test compares the two column by column.

diesel::table! {
    /// `authors`.
    authors (id) {
        /// `bigserial`.
        id -> Int8,
        /// `varchar(200)`.
        name -> Varchar,
        /// `text`.
        bio -> Text,
    }
}

diesel::table! {
    /// `books`.
    books (id) {
        /// `bigserial`.
        id -> Int8,
        /// `bigint`, references `authors`.
        author_id -> Int8,
        /// `varchar(20)`, unique.
        isbn -> Varchar,
        /// `varchar(255)`.
        title -> Varchar,
        /// `text`.
        description -> Text,
        /// `integer`.
        price_cents -> Int4,
        /// `integer`, `CHECK (stock >= 0)`.
        stock -> Int4,
        /// `date`.
        published_at -> Date,
    }
}

diesel::table! {
    /// `checkouts`.
    checkouts (id) {
        /// `uuid`.
        id -> Uuid,
        /// `bigint`, references `books`.
        book_id -> Int8,
        /// `varchar(120)`.
        customer_name -> Varchar,
        /// `varchar(255)`.
        customer_email -> Varchar,
        /// `integer`, `CHECK (quantity > 0)`.
        quantity -> Int4,
        /// `timestamptz`, defaults to `now()`.
        checked_out_at -> Timestamptz,
    }
}

diesel::joinable!(books -> authors (author_id));
diesel::joinable!(checkouts -> books (book_id));
diesel::allow_tables_to_appear_in_same_query!(authors, books, checkouts);
