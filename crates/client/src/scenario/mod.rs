//! The twelve scenarios of SPEC §4, declared once in the `scenarios!` table (`table.rs`):
//! what each sends, which books it is about, what a correct answer is, whether it writes,
//! what it stresses, and the same work straight on the store for the database ceiling.
//! Everything else — requests, checks, the report's descriptions — is derived from the
//! entry.

pub mod body;
mod load;
mod mix;
mod spec;
mod table;

pub use load::{ScenarioLoad, validate_response};
pub use mix::Mix;
pub use spec::{Answer, Books, CHECKOUT_QUANTITY, Request, ScenarioSpec, StoreCall};
pub use table::{PICK_SEED, Scenario};
