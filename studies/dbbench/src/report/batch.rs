//! The batch job section: per database, every size × parallelism × pool, the three styles
//! compared round by round ([`Keyed`]) for the job and for the seed insert apart; [`Batch`]
//! is what `templates/batch.html` writes.

use bookstore_stats::Summary;
use std::collections::BTreeMap;

use serde::Serialize;

use super::format::{Keyed, Leaders, Rounds, access_label, count, databases_of};
use crate::dimensions::Database;
use crate::measure::Access;
use crate::results::{BatchCell, DbBenchResults};

/// The batch section's context.
#[derive(Debug, Serialize)]
pub(super) struct Batch {
    /// The styles' names, in the order of the tables' columns ([`Access::ALL`]).
    styles: Vec<&'static str>,
    databases: Vec<BatchDatabase>,
}

#[derive(Debug, Serialize)]
struct BatchDatabase {
    database: &'static str,
    /// SQLite has one writer, which its note explains.
    sqlite: bool,
    rows: Vec<BatchRow>,
    /// Combinations of size × parallelism × pool measured.
    combinations: usize,
    /// Who had the fastest job (read, transform, write), and the fastest seed insert.
    job: Tally,
    seed: Tally,
    all_verified: bool,
}

#[derive(Debug, Serialize)]
struct BatchRow {
    rows: String,
    parallelism: usize,
    pool: u32,
    /// By style, as [`Batch::styles`]; absent where not measured.
    cells: Vec<Option<StyleCell>>,
    job: Leaders,
    seed: Leaders,
}

#[derive(Debug, Serialize)]
struct StyleCell {
    /// A round's output was wrong: what, and the cell shows it alone.
    wrong_output: Option<String>,
    /// Median seconds of the job and of the seed; in bold the style with the fastest job.
    text: String,
    best: bool,
}

/// In how many combinations each style was fastest, and in how many none was.
#[derive(Debug, Serialize)]
struct Tally {
    /// By style, as [`Batch::styles`].
    styles: Vec<(&'static str, usize)>,
    undecided: usize,
}

/// A [`Tally`] being counted.
#[derive(Default)]
struct Wins {
    fastest: BTreeMap<Access, usize>,
    undecided: usize,
}

impl Wins {
    fn add(&mut self, best: Option<Access>) {
        match best {
            Some(access) => *self.fastest.entry(access).or_default() += 1,
            None => self.undecided += 1,
        }
    }

    fn tally(&self) -> Tally {
        let styles = Access::ALL
            .iter()
            .map(|a| (access_label(*a), self.fastest.get(a).copied().unwrap_or(0)));
        Tally { styles: styles.collect(), undecided: self.undecided }
    }
}

/// The section's context.
pub(super) fn context(results: &DbBenchResults) -> Batch {
    Batch {
        styles: Access::ALL.map(access_label).to_vec(),
        databases: databases_of(results.batch.iter().map(|c| &c.database))
            .into_iter()
            .map(|database| database_context(results, database))
            .collect(),
    }
}

/// The styles whose every round of `config` was verified, compared on the rate of one part
/// of the job (rows per second of it), round by round.
fn rates(config: &[&BatchCell], rows: usize, seconds: fn(&BatchCell) -> f64) -> Keyed<Access> {
    Keyed::paired(
        Access::ALL
            .iter()
            .filter_map(|&access| {
                let mine: Vec<&&BatchCell> = config.iter().filter(|c| c.access == access).collect();
                (!mine.is_empty() && mine.iter().all(|c| c.verified)).then(|| {
                    let rounds: Rounds = mine
                        .iter()
                        .map(|c| (c.round, rows as f64 / seconds(c).max(1e-9)))
                        .collect();
                    (access, access_label(access).to_owned(), rounds)
                })
            })
            .collect(),
    )
}

fn database_context(results: &DbBenchResults, database: Database) -> BatchDatabase {
    let s = &results.settings;
    let here: Vec<&BatchCell> = results.batch.iter().filter(|c| c.database == database).collect();
    // The job (read, transform, write) and the seed insert are ranked apart, as the JVM
    // study ranked the job: the seed is a bulk insert, measured as such in its own section.
    let (mut job_wins, mut seed_wins) = (Wins::default(), Wins::default());
    let mut rows = Vec::new();
    for &n in &s.batch_rows {
        for &p in &s.batch_parallelism {
            for &pool in &s.pool_sizes {
                let config: Vec<&BatchCell> = here
                    .iter()
                    .copied()
                    .filter(|c| c.rows == n && c.parallelism == p && c.pool == pool)
                    .collect();
                if config.is_empty() {
                    continue;
                }
                let (job, seed) =
                    (rates(&config, n, |c| c.job_seconds), rates(&config, n, |c| c.seed_seconds));
                let job_best = job.best();
                job_wins.add(job_best);
                seed_wins.add(seed.best());
                let cells = Access::ALL.iter().map(|&a| style_cell(&config, a, job_best)).collect();
                rows.push(BatchRow {
                    rows: count(n),
                    parallelism: p,
                    pool,
                    cells,
                    job: job.leaders(),
                    seed: seed.leaders(),
                });
            }
        }
    }
    BatchDatabase {
        database: database.label(),
        sqlite: database == Database::Sqlite,
        combinations: rows.len(),
        rows,
        job: job_wins.tally(),
        seed: seed_wins.tally(),
        all_verified: here.iter().all(|c| c.verified),
    }
}

/// `access` in one combination: its median times, or its first wrong output.
fn style_cell(
    config: &[&BatchCell],
    access: Access,
    job_best: Option<Access>,
) -> Option<StyleCell> {
    let mine: Vec<&&BatchCell> = config.iter().filter(|c| c.access == access).collect();
    if mine.is_empty() {
        return None;
    }
    let time = |seconds: fn(&BatchCell) -> f64| {
        let rounds: Rounds = mine.iter().map(|c| (c.round, seconds(c))).collect();
        Summary::median_of(rounds.values().copied()).unwrap_or(0.0)
    };
    Some(StyleCell {
        wrong_output: mine
            .iter()
            .find(|c| !c.verified)
            .map(|c| c.failure.clone().unwrap_or_default()),
        text: format!("{:.3} ({:.3})", time(|c| c.job_seconds), time(|c| c.seed_seconds)),
        best: job_best == Some(access),
    })
}
