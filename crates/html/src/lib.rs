//! `bookstore-html`: the look of every page of this workspace (the suite's summary, its
//! comparison, dbbench's): one shell and style sheet ([`page`]) and the inline SVG charts
//! ([`charts`]), so that the pages read alike and none of them imports another tool.

pub mod charts;
pub mod page;

pub use page::page_environment;
