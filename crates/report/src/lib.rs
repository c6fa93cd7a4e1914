//! `loadgen report`: the HTML summary, a view of one or more results files, and the same
//! verdicts as Markdown, CSV or JSON tables (`export`).
//!
//! Every number on the page is read from the results documents (or computed from them:
//! medians over rounds, percentiles of merged HDR histograms, ratios with their intervals).
//! The page is one self-contained file — inline CSS and inline SVG, no script, nothing
//! fetched — rendered by minijinja from `templates/summary.html` (+ `charts.html`) and the
//! typed context built by one module per section.
//!
//! Several files are read as more rounds of the same suite (their rounds keep apart: round
//! 2 of one file is paired with round 2 of no other). Every comparison on the page comes
//! from `verdicts`, one method for all of them.

pub mod ab;
mod axes;
mod capacity;
pub mod capacity_question;
pub mod charts;
pub mod compare;
mod connections;
mod cpu;
pub(crate) mod dataset;
mod deployment;
mod efficiency;
mod equal_load;
pub mod export;
mod factorial;
pub mod format;
mod headline;
mod integrity;
mod method;
pub mod page;
mod postgres;
pub mod reliability;
mod scenarios;
mod summary;
pub mod terminal;
mod text;
mod verdicts;

pub use format::Format;
pub use summary::render;
