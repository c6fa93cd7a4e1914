//! The words and colours every section and export share: a rate, a share, a stack's
//! colour, a comparison as the page prints it.

use serde::Serialize;

use crate::charts;
use crate::dataset::Dataset;

/// A rate as text: median, and the range over the rounds (when there is one).
pub(crate) fn rate_text(summary: &bookstore_stats::Summary) -> String {
    if summary.n > 1 && summary.min < summary.max {
        format!("{:.0} ({:.0}–{:.0})", summary.median, summary.min, summary.max)
    } else {
        format!("{:.0}", summary.median)
    }
}

/// A share as a percentage, without needless digits: 0.05 → "5", 0.9 → "90", 0.015 → "1.5".
pub(crate) fn percent(share: f64) -> String {
    // + 0.0: a share rounded from just below zero prints "0", not "-0".
    let value = (share * 1000.0).round() / 10.0 + 0.0;
    if value.fract() == 0.0 { format!("{value:.0}") } else { format!("{value}") }
}

/// A whole number with thousands separators: 156535.2 → "156,535".
pub(crate) fn thousands(value: f64) -> String {
    let digits = format!("{:.0}", value.abs());
    let mut grouped = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    if value < -0.5 { format!("-{grouped}") } else { grouped }
}

/// The colour of `stack` (by its place in the list of stacks and variants).
pub(crate) fn colour(dataset: &Dataset<'_>, stack: &str) -> String {
    charts::series_colour(dataset.stacks.iter().position(|s| s == stack).unwrap_or(0))
}

/// A stack's name with its colour.
#[derive(Debug, Serialize)]
pub(crate) struct Chip {
    pub(crate) stack: String,
    pub(crate) colour: String,
}

impl Chip {
    pub(crate) fn of(dataset: &Dataset<'_>, stack: &str) -> Self {
        Self { stack: stack.to_owned(), colour: colour(dataset, stack) }
    }
}

/// A comparison as the page shows it.
#[derive(Debug, Serialize)]
pub(crate) struct ComparisonText {
    /// "1.23× [1.10–1.37]", or "≈ 1.04× [0.91–1.19]" where not distinguishable: short, so a
    /// table keeps to the page's width (the pages' notes say what ≈ means).
    pub(crate) text: String,
    /// `higher`, `lower` or `not_distinguishable`.
    pub(crate) verdict: bookstore_stats::Verdict,
}

impl From<bookstore_stats::Comparison> for ComparisonText {
    fn from(c: bookstore_stats::Comparison) -> Self {
        Self { text: c.compact(), verdict: c.verdict }
    }
}

/// The widest interval (upper ÷ lower) a tail comparison that is not called is shown as a
/// ratio with: wider, its two p99s "cannot compare at this length" — a ratio such as
/// "≈ 0.871× [0.033–23.3]" would claim more than the data holds. The tail question's
/// default precision (`loadgen ab --rate … --percentile 99`), which can reach it.
pub(crate) const TAIL_PRECISION: f64 = 2.0;

/// What a p99 comparison at equal load may say, as [`TAIL_PRECISION`] allows.
pub(crate) const CANNOT_COMPARE: &str = "cannot compare at this length";

/// Whether a tail comparison is too wide to show as a ratio: not called, and its interval
/// wider than [`TAIL_PRECISION`].
pub(crate) fn tail_too_wide(differs: bool, low: f64, high: f64) -> bool {
    !differs && high / low > TAIL_PRECISION
}

impl ComparisonText {
    /// A p99 comparison at equal load: as [`From`] gives it, or [`CANNOT_COMPARE`] where
    /// [`tail_too_wide`].
    pub(crate) fn tail(c: bookstore_stats::Comparison) -> Self {
        if tail_too_wide(c.differs(), c.low, c.high) {
            Self { text: CANNOT_COMPARE.to_owned(), verdict: c.verdict }
        } else {
            c.into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped_by_three() {
        assert_eq!(thousands(156_535.2), "156,535");
        assert_eq!(thousands(999.6), "1,000");
        assert_eq!(thousands(12.0), "12");
        assert_eq!(thousands(-1234.0), "-1,234");
    }
}
