//! What `loadgen report --format` can write, each a back end of the same analysis: the page,
//! the verdicts as Markdown tables, the axis effects alone, one row per cell as CSV or JSON,
//! or the suite's closing summary as text. A new format is a variant here and its
//! rendering; the command line lists [`Format::ALL`] by name.

use bookstore_record::results::RunResults;

use crate::export;

/// One way to write what a set of runs says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The HTML summary page.
    Html,
    /// The verdicts as Markdown tables (for READMEs and pull requests).
    Md,
    /// Only the effects of a grid of composed stacks' axes, as a Markdown table.
    MdAxes,
    /// One row per cell, units in the column names (crates/record/RESULTS.md, "Exports").
    Csv,
    /// The same rows as JSON.
    Json,
    /// The suite's closing summary, as the terminal shows it.
    Text,
    /// The rate each stack would reach with its server and PostgreSQL on CPUs of their own,
    /// projected from the first run's CPU per request, against what the other runs (each
    /// with `--cpus` placements) measured: a Markdown table (docs/method.md, "CPU per
    /// request").
    Projection,
}

impl Format {
    /// Every format, in the order `--help` lists them.
    pub const ALL: [Format; 7] = [
        Format::Html,
        Format::Md,
        Format::MdAxes,
        Format::Csv,
        Format::Json,
        Format::Text,
        Format::Projection,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Html => "html",
            Format::Md => "md",
            Format::MdAxes => "md-axes",
            Format::Csv => "csv",
            Format::Json => "json",
            Format::Text => "text",
            Format::Projection => "projection",
        }
    }

    /// The format called `name`.
    pub fn parse(name: &str) -> Result<Self, String> {
        Self::ALL.into_iter().find(|f| f.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|f| f.name()).collect();
            format!("unknown format {name:?}; the formats: {}", names.join(", "))
        })
    }

    /// Whether it is a page, written to a file by default (the others go to standard output).
    pub fn is_page(self) -> bool {
        self == Format::Html
    }

    /// `runs` (rounds of one suite) in this format.
    pub fn render(self, runs: &[RunResults]) -> anyhow::Result<String> {
        Ok(match self {
            Format::Html => crate::render(runs)?,
            Format::Md => export::markdown(runs),
            Format::MdAxes => export::markdown_axes(&export::rows(runs)),
            Format::Csv => export::csv(&export::rows(runs))?,
            Format::Json => export::json(&export::rows(runs))?,
            Format::Text => crate::terminal::summary(runs),
            Format::Projection => match runs {
                [base, placed @ ..] if !placed.is_empty() => crate::cpu::projection(base, placed)?,
                _ => anyhow::bail!(
                    "--format projection: give the run the costs come from, then one or more runs to set against it (with --cpus placements, or without: every process on every CPU)"
                ),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_is_found_by_its_name_and_only_the_page_is_a_page() {
        for format in Format::ALL {
            assert_eq!(Format::parse(format.name()), Ok(format));
        }
        assert_eq!(Format::ALL.iter().filter(|f| f.is_page()).count(), 1);
        assert!(Format::parse("pdf").unwrap_err().contains("md-axes"));
    }
}
