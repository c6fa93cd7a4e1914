//! Deterministic data: a small generator, and the rows the bulk strategies insert.

/// Deterministic keys and values: the workspace's SplitMix64.
#[derive(Debug, Clone)]
pub struct Rng(bookstore_fixture::random::SplitMix64);

impl Rng {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Self {
        Self(bookstore_fixture::random::SplitMix64::new(seed))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `1..=n`.
    pub fn one_to(&mut self, n: i64) -> i64 {
        1 + self.0.below(n.max(1) as usize) as i64
    }
}

/// One row of `items`.
#[derive(Debug, Clone, PartialEq, Eq, diesel::Insertable, diesel::Queryable)]
#[diesel(table_name = crate::schema::items)]
// Plain values (no DEFAULT for absent fields, which it has none of): what diesel's binary
// COPY needs, and what keeps its multi-row insert one statement on SQLite.
#[diesel(treat_none_as_default_value = false)]
pub struct Item {
    /// `1..=count`, given here rather than by the database.
    pub id: i64,
    /// Unique, carries [`SENTINEL`].
    pub sku: String,
    /// Carries [`SENTINEL`] and, row by row, every character that needs care.
    pub name: String,
    /// Under 100,000; like every field, a function of `id` ([`items`]).
    pub price_cents: i32,
    /// Under 97, a function of `id`.
    pub quantity: i32,
}

/// A marker in every generated text value: the no-values-in-SQL test looks for it in the
/// server's statement log, where no row value may appear.
pub const SENTINEL: &str = "zq-sentinel";

/// The characters that break hand-built SQL or COPY text when not escaped: quotes,
/// backslashes, tabs, newlines, carriage returns, an SQL injection attempt, non-ASCII.
const HARD_TEXT: [&str; 8] = [
    "plain",
    "O'Reilly's",
    "a \"quoted\" back\\slash",
    "tab\there, new\nline",
    "carriage\rreturn",
    "'); DROP TABLE items; --",
    "Grüße — 書籍 📚",
    "comma, semicolon; percent% underscore_",
];

/// Items `1..=count`.
pub fn items(count: usize) -> Vec<Item> {
    (1..=count as i64)
        .map(|id| Item {
            id,
            sku: format!("{SENTINEL}-sku-{id:08}"),
            name: format!("{SENTINEL} {} #{id}", HARD_TEXT[id as usize % HARD_TEXT.len()]),
            price_cents: (id * 7919 % 100_000) as i32,
            quantity: (id % 97) as i32,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_are_deterministic_unique_and_carry_the_hard_characters() {
        let a = items(100);
        assert_eq!(a, items(100));
        let skus: std::collections::BTreeSet<&str> = a.iter().map(|i| i.sku.as_str()).collect();
        assert_eq!(skus.len(), 100);
        for hard in ["'", "\"", "\\", "\t", "\n", "\r", "書"] {
            assert!(a.iter().any(|i| i.name.contains(hard)), "{hard:?}");
        }
        assert!(a.iter().all(|i| i.sku.contains(SENTINEL) && i.name.contains(SENTINEL)));
    }

    #[test]
    fn the_generator_stays_in_range() {
        let mut rng = Rng::new(7);
        assert!((0..10_000).map(|_| rng.one_to(10)).all(|v| (1..=10).contains(&v)));
    }
}
