//! How the workspace compares two measured things, one method for every page and tool: the
//! suite's summary and `loadgen compare`, and dbbench's page.
//!
//! The question is always "is B faster than A, and by how much?", asked of rates measured
//! on a machine whose speed drifts by tens of percent within minutes. So:
//!
//! - **Ratios, on the log scale.** A difference between stacks is a factor (1.23×), and
//!   noise on a shared machine is multiplicative; `ln(b / a)` turns both into sums.
//! - **Paired by round.** The suite measures the things it compares side by side in rounds,
//!   the order rotating; within a round they share the machine's state of that minute, so
//!   the per-round log ratio cancels the drift that a comparison of two averages keeps
//!   ([`Samples::Paired`]). Where no pairing exists (two separate runs, `loadgen compare`)
//!   the same interval is Welch's, on the logs of each side ([`Samples::Unpaired`]).
//! - **A t-interval, not a bootstrap.** The default run has five rounds; a bootstrap of five
//!   values can only resample those five and gives intervals too narrow to keep their
//!   promise, where Student's t accounts for the few samples exactly when the log ratios are
//!   near normal (they are: sums of many small effects, checked on the kept runs).
//! - **Corrected for the number of comparisons.** A table of five stacks holds ten pairs; at
//!   95% each, about one in two such tables would show a "difference" that is noise. Within
//!   one family (one scenario × concurrency table) the p-values go through the
//!   Benjamini–Hochberg procedure at `q` = 5%, and every interval of the family is shown at
//!   the matching level `1 − R·q/m` (Benjamini & Yekutieli 2005: with `R` of `m` pairs
//!   called different, these intervals cover the truth for the selected pairs at rate
//!   `1 − q`). At that level an interval excludes 1 exactly when the procedure called the
//!   pair different ([`judge`], the one entry point), so a page can never show an interval that says one thing
//!   next to a verdict that says another. When nothing in a family differs, the procedure
//!   holds the chance of any false call to `q` (its family-wise rate under the complete
//!   null); the tests check that on simulated data.
//!
//! - **Two processes differ by more than their rounds show.** A stack is one process per
//!   run, and two processes of one binary keep a lead or lag of their own for as long as
//!   they run (the twins of the kept runs: [`PROCESS_SD`]). Rounds average the machine's
//!   noise, not that; a comparison of two stacks' processes ([`Samples::Processes`],
//!   [`Group::between_processes_at`]) adds it to the rounds' variance, so that a twin is
//!   called different from its stack no more often than the level promises.
//!
//! - **Rounds where they are needed.** A family may be looked at after pre-set round counts
//!   and stop when none of its pairs is open ([`Looks`]): interim looks judge at a strict
//!   share of `q`, the family's last at the rest, so that stopping calls no more false
//!   differences.
//!
//! - **A shared spread where a pair's own is too thin.** A short window's p99 moves
//!   several-fold with one stall, alike for every stack; three rounds give a pair's own
//!   t-interval two degrees of freedom. [`Samples::Pooled`] (and [`Group::pooled_at`]) keep
//!   the pair's ratio and take the spread from the whole family ([`Residual::additive`]),
//!   with (members − 1) × (rounds − 1) degrees of freedom, assuming the members equally
//!   noisy — which a twin in the run checks.
//!
//! - **Effects of a factor across a grid.** Where every framework × serializer × access
//!   combination is measured in the same rounds, a factor's effect is the ratio of the
//!   geometric means of its levels' cells, round by round ([`factorial`]), judged as any
//!   pair.
//!
//! [`min_detectable_ratio`] answers the other question a reader has: how large a difference could this run
//! have seen?

pub mod capacity;
pub mod factorial;
mod family;
mod group;
mod judge;
mod looks;
mod order;
mod power;
pub mod question;
mod ratio;
mod regression;
mod student;
mod summary;
mod tails;

pub(crate) use family::family;
pub use family::{Comparison, FALSE_DISCOVERY_RATE, Verdict, digits};
pub use group::{Better, Group, Ranking, every_pair, flipped, shared_rounds};
pub use judge::{Samples, judge, judge_one};
pub use looks::{INTERIM_SHARE, Looks, Standing, TAIL_LAST_LOOK, judge_at};
pub use order::rotated_by;
pub use power::{min_detectable_ratio, min_detectable_ratio_pooled, power_of, rounds_for_width};
pub(crate) use ratio::LogRatio;
pub use ratio::{PROCESS_SD, Residual};
pub use regression::{Estimate, Line};
pub use student::{chance_of_at_least, t_critical};
pub use summary::Summary;
pub use tails::{tail_comparisons, widest_interval};
