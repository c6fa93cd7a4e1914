//! Every verdict the pages show, drawn one way (`bookstore-stats`): the stacks of one
//! scenario × concurrency table are one family ([`bookstore_stats::Group`]), their pairs
//! compared on the ratio of their rates round by round, Benjamini–Hochberg within the
//! family, intervals at the matching level. The headline, the tables, the axis analysis and
//! `loadgen compare` all read their verdicts from here, so they cannot disagree.

use std::collections::BTreeMap;

use bookstore_stats::{
    Better, Comparison, Group, Ranking, Samples, Summary, every_pair, judge_at, shared_rounds,
};
use serde::Serialize;

use super::dataset::{CellWindows, Dataset, Metric, RoundKey, Target};
use bookstore_record::results::Cell;

/// The power the page states: the chance of seeing a difference of the stated size.
pub(crate) const STATED_POWER: f64 = 0.8;

/// Where a family's pair intervals take their spread from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Spread {
    /// Each pair's own rounds: for a latency at saturation, whose noise differs between
    /// stacks.
    Own,
    /// Each pair's own rounds, and the spread between two processes of one binary
    /// ([`bookstore_stats::PROCESS_SD`]) that rounds do not average: the twins calibrate it
    /// on rates.
    Processes,
    /// Each pair's own rounds, and the spread of a capacity between two processes
    /// ([`bookstore_stats::capacity::PROCESS_SD`]): for capacities read from one process per
    /// party, which one stall near the knee moves for as long as the process runs.
    Capacities,
    /// The members' shared spread where their noise is alike, else each pair's own, and in
    /// both the spread between processes: for rates, whose families' members the kept runs
    /// show about equally noisy, and whose pairs' own rounds are few
    /// ([`bookstore_stats::Group::pooled_between_processes_at`]).
    PooledProcesses,
    /// The members' shared spread ([`bookstore_stats::Residual`]): for the equal-load p99,
    /// whose per-round noise is a short window's tail, alike for every stack (the twins
    /// check it), and whose pairs' own few rounds give intervals tens of times wide.
    Pooled,
}

/// One stack of a family.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub(crate) name: String,
    /// Why its cell is disqualified: it is then in no comparison.
    pub(crate) disqualified: Option<String>,
    /// Why its figures, though valid, are not ranked (a latency at a rate it could not
    /// carry): it is then in no comparison either.
    pub(crate) not_ranked: Option<String>,
    /// Median and range over the rounds.
    pub(crate) summary: Option<Summary>,
    /// The stack it is a twin of: then it is compared with that stack alone, never ranked.
    pub(crate) twin_of: Option<String>,
    samples: BTreeMap<RoundKey, f64>,
}

impl Member {
    /// `name` with a value per round, not ranked where `not_ranked` says why.
    pub(crate) fn new(
        dataset: &Dataset<'_>,
        name: &str,
        samples: BTreeMap<RoundKey, f64>,
        not_ranked: Option<String>,
    ) -> Self {
        let summary = Summary::of(&samples.values().copied().collect::<Vec<_>>());
        Self {
            name: name.to_owned(),
            disqualified: None,
            not_ranked,
            twin_of: dataset.twin_of(name),
            samples,
            summary,
        }
    }

    /// Whether it is ranked and compared with the family.
    pub(crate) fn qualified(&self) -> bool {
        self.comparable() && self.twin_of.is_none()
    }

    /// Whether its figures can be compared at all.
    fn comparable(&self) -> bool {
        self.disqualified.is_none() && self.not_ranked.is_none() && !self.samples.is_empty()
    }
}

/// The stacks of one scenario × concurrency, and the group of the qualified ones.
#[derive(Debug)]
pub(crate) struct Family {
    pub(crate) members: Vec<Member>,
    group: Group,
    better: Better,
    /// The false-discovery rate it is judged at: its level in the run's sequential design
    /// (`Looks::level`), the whole of `q` for a fixed design.
    q: f64,
    spread: Spread,
}

impl Family {
    /// The family of a metric `value` of each window (`None`: no value in that window) at
    /// saturation, `better` higher or lower.
    fn of(
        dataset: &Dataset<'_>,
        scenario: &str,
        concurrency: u32,
        (better, spread): (Better, Spread),
        value: impl Fn(&Cell) -> Option<f64>,
    ) -> Self {
        let windows =
            |stack: &str| dataset.cell(&Target::Stack(stack.to_owned()), scenario, concurrency);
        let looks = dataset.looks();
        let level = |pairs: &[&[(f64, f64)]]| looks.level(pairs);
        Self::of_windows(dataset, windows, better, value, |_| None, level, spread)
    }

    /// The family of `value` over each stack's `windows`, those `not_ranked` says so of left
    /// out of the comparisons, judged at the level `level` gives its pairs (each its values
    /// per shared round), each pair's interval from the `spread` named.
    fn of_windows<'a, 'd: 'a>(
        dataset: &'a Dataset<'d>,
        windows: impl Fn(&str) -> &'a CellWindows<'d>,
        better: Better,
        value: impl Fn(&Cell) -> Option<f64>,
        not_ranked: impl Fn(&CellWindows<'d>) -> Option<String>,
        level: impl Fn(&[&[(f64, f64)]]) -> f64,
        spread: Spread,
    ) -> Self {
        let members: Vec<Member> = dataset
            .stacks
            .iter()
            .filter_map(|stack| {
                let cell = windows(stack);
                if cell.is_empty() {
                    return None;
                }
                let member = Member::new(dataset, stack, cell.by_round(&value), not_ranked(cell));
                Some(Member { disqualified: cell.disqualified(), ..member })
            })
            .collect();
        Self::of_members(members, better, level, spread)
    }

    /// The family of `members`, judged at the level `level` gives its pairs, each pair's
    /// interval from the `spread` named.
    pub(crate) fn of_members(
        members: Vec<Member>,
        better: Better,
        level: impl Fn(&[&[(f64, f64)]]) -> f64,
        spread: Spread,
    ) -> Self {
        let qualified: Vec<(String, BTreeMap<RoundKey, f64>)> = members
            .iter()
            .filter(|m| m.qualified())
            .map(|m| (m.name.clone(), m.samples.clone()))
            .collect();
        let pairs = every_pair(&qualified.iter().map(|(_, samples)| samples).collect::<Vec<_>>());
        let q = level(&pairs.iter().map(Vec::as_slice).collect::<Vec<_>>());
        let group = match spread {
            Spread::Own => Group::paired_at(&qualified, q),
            Spread::Processes => Group::between_processes_at(&qualified, q),
            Spread::Capacities => {
                Group::between_processes_by(&qualified, q, bookstore_stats::capacity::PROCESS_SD)
            }
            Spread::PooledProcesses => Group::pooled_between_processes_at(&qualified, q),
            Spread::Pooled => Group::pooled_at(&qualified, q),
        };
        Self { members, group, better, q, spread }
    }

    /// The family of the scenario's rate.
    pub(crate) fn rates(dataset: &Dataset<'_>, scenario: &str, concurrency: u32) -> Self {
        let metric = Metric::for_scenario(scenario);
        let ranked = (Better::Higher, Spread::PooledProcesses);
        Self::of(dataset, scenario, concurrency, ranked, |cell| Some(metric.of(cell)))
    }

    /// The family of the p99 latency at saturation (of the answers the scenario is ranked
    /// by): lower is better, so "higher" is slower here.
    pub(crate) fn p99(dataset: &Dataset<'_>, scenario: &str, concurrency: u32) -> Self {
        Self::of(dataset, scenario, concurrency, (Better::Lower, Spread::Own), |cell| {
            cell.ranked_latency().map(|l| l.p99_us as f64)
        })
    }

    /// The family of the p99 latency at an equal offered `rate` (a key of
    /// [`Dataset::equal_load_rates`]): lower is better. A stack that could not carry the
    /// rate (saturated in more than a tenth of its rounds, `bookstore_record::warnings::carried`)
    /// is not ranked; a window whose client fell behind is left out.
    pub(crate) fn equal_load_p99(dataset: &Dataset<'_>, scenario: &str, rate: &str) -> Self {
        Self::equal_load_p99_by(dataset, scenario, rate, Spread::Pooled)
    }

    /// [`Family::equal_load_p99`] with its pairs' spread from `spread`: the page shows
    /// what its own rounds would have given beside what it used.
    pub(crate) fn equal_load_p99_by(
        dataset: &Dataset<'_>,
        scenario: &str,
        rate: &str,
        spread: Spread,
    ) -> Self {
        let windows = |stack: &str| dataset.equal_load_cell(stack, scenario, rate);
        let not_ranked = |windows: &CellWindows<'_>| {
            let saturated: Vec<&bookstore_record::warnings::Warning> =
                windows.cells().filter_map(bookstore_record::warnings::saturation).collect();
            let rounds = windows.cells().count();
            if bookstore_record::warnings::carried(saturated.len(), rounds) {
                return None;
            }
            let first = saturated.first()?;
            Some(format!("{} (in {} of {rounds} rounds)", first.message, saturated.len()))
        };
        // A default run's rounds are every cell's, never more: a fixed design at the whole
        // of `q`. A tail question's stop on their widths: every look at its share.
        let q = dataset.equal_load_q();
        let q = |_: &[&[(f64, f64)]]| q;
        Self::of_windows(
            dataset,
            windows,
            Better::Lower,
            Cell::fixed_load_p99_us,
            not_ranked,
            q,
            spread,
        )
    }

    pub(crate) fn index(&self, name: &str) -> Option<usize> {
        self.members.iter().position(|m| m.name == name)
    }

    /// `b` against `a`, when both are qualified and share at least two rounds; a twin
    /// against its own stack only, as a family of one (it is no part of the family's
    /// question, and its pair must not change the family's correction).
    pub(crate) fn compare(&self, a: &str, b: &str) -> Option<Comparison> {
        let twin_of = |name: &str| self.members.iter().find(|m| m.name == name)?.twin_of.clone();
        match (twin_of(a), twin_of(b)) {
            (None, None) => self.group.compare(a, b),
            (Some(of), None) if of == b => self.pairs_family(&[(a, b)]).pop().flatten(),
            (None, Some(of)) if of == a => self.pairs_family(&[(a, b)]).pop().flatten(),
            _ => None,
        }
    }

    /// Each of `others` against `reference`, as a family of its own (Benjamini–Hochberg over
    /// these comparisons only, intervals at the matching level): for a question asked of a
    /// few pairs, not of every pair of the table. `None` where either side is not qualified
    /// or they share fewer than two rounds.
    pub(crate) fn against(&self, reference: &str, others: &[&str]) -> Vec<Option<Comparison>> {
        let pairs: Vec<(&str, &str)> = others.iter().map(|other| (reference, *other)).collect();
        self.pairs_family(&pairs)
    }

    /// Each `(a, b)`: b against a, these comparisons a family of their own.
    pub(crate) fn pairs_family(&self, pairs: &[(&str, &str)]) -> Vec<Option<Comparison>> {
        let samples = |name: &str| {
            self.members.iter().find(|m| m.name == name && m.comparable()).map(|m| &m.samples)
        };
        let rounds: Vec<Option<Vec<(f64, f64)>>> =
            pairs.iter().map(|(a, b)| Some(shared_rounds(samples(a)?, samples(b)?))).collect();
        let residual = self.group.residual();
        let comparisons: Vec<Option<Samples<'_>>> = rounds
            .iter()
            .map(|r| {
                let pairs = r.as_deref()?;
                Some(match (self.spread, residual) {
                    (Spread::Pooled, Some(residual)) => Samples::Pooled { pairs, residual },
                    (Spread::PooledProcesses, Some(residual)) => {
                        Samples::PooledProcesses { pairs, residual }
                    }
                    (Spread::Processes | Spread::PooledProcesses, _) => Samples::Processes(pairs),
                    (Spread::Capacities, _) => Samples::Contrast {
                        pairs,
                        process_sd: bookstore_stats::capacity::PROCESS_SD,
                    },
                    _ => Samples::Paired(pairs),
                })
            })
            .collect();
        judge_at(&comparisons, self.q)
    }

    /// The qualified members' ranking, the better first, as indices into `members`.
    pub(crate) fn ranking(&self) -> Ranking {
        let to_member = |i: usize| self.index(&self.group.names()[i]).expect("a member");
        let Ranking { order, leaders, best } = self.group.ranking_by(self.better);
        Ranking {
            order: order.into_iter().map(to_member).collect(),
            leaders: leaders.into_iter().map(to_member).collect(),
            best,
        }
    }

    /// Pairs called different, and pairs compared.
    pub(crate) fn calls(&self) -> (usize, usize) {
        self.group.calls()
    }

    /// Every compared pair: (a, b, b against a).
    pub(crate) fn pairs(&self) -> impl Iterator<Item = (&str, &str, &Comparison)> {
        self.group.pairs()
    }

    /// The members' shared spread its intervals were drawn from, if pooled.
    pub(crate) fn residual(&self) -> Option<bookstore_stats::Residual> {
        self.group.residual()
    }

    /// The spread across rounds of each compared pair's log ratio.
    pub(crate) fn log_ratio_spreads(&self) -> &[f64] {
        self.group.log_ratio_spreads()
    }

    /// What this family could see: its rounds (the most any of its pairs shared), its
    /// pairs' median spread, and the smallest difference it calls four times in five at its
    /// strictest level. `None` without a compared pair.
    pub(crate) fn power(&self) -> Option<FamilyPower> {
        let rounds = self.pairs().map(|(_, _, c)| c.n).max()?;
        let spread = Summary::of(self.log_ratio_spreads())?.median;
        let pairs = self.pairs().count();
        let pooled = self.residual().filter(|_| matches!(self.spread, Spread::PooledProcesses));
        let detectable = match pooled {
            Some(residual) => bookstore_stats::min_detectable_ratio_pooled(
                residual.sd,
                residual.df,
                rounds,
                bookstore_stats::PROCESS_SD,
                self.q / pairs.max(1) as f64,
                STATED_POWER,
            ),
            None => detectable_ratio(spread, rounds, self.spread, pairs, self.q),
        };
        Some(FamilyPower { rounds, spread, detectable, pooled })
    }
}

/// What a family could see (see [`Family::power`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FamilyPower {
    pub(crate) rounds: usize,
    /// The median per-round spread of its pairs' log ratios.
    pub(crate) spread: f64,
    /// The smallest ratio (≥ 1) called four times in five.
    pub(crate) detectable: Option<f64>,
    /// The members' shared spread its rates were judged by, where they were.
    pub(crate) pooled: Option<bookstore_stats::Residual>,
}

/// The smallest true ratio a family of `pairs` comparisons, each over `rounds` rounds with
/// a per-round log-ratio spread `spread` (and the spread between processes, if the family's
/// `kind` adds it), judged at false-discovery rate `q`, calls different with probability
/// [`STATED_POWER`] even at its strictest level, q / pairs
/// (Benjamini–Hochberg's first step).
pub(crate) fn detectable_ratio(
    spread: f64,
    rounds: usize,
    kind: Spread,
    pairs: usize,
    q: f64,
) -> Option<f64> {
    let strictest = q / pairs.max(1) as f64;
    let process_sd = match kind {
        Spread::Processes | Spread::PooledProcesses => bookstore_stats::PROCESS_SD,
        Spread::Capacities => bookstore_stats::capacity::PROCESS_SD,
        Spread::Own | Spread::Pooled => 0.0,
    };
    let power = STATED_POWER;
    bookstore_stats::min_detectable_ratio(spread, rounds, process_sd, strictest, power)
}

/// How often a twin was called different from its own stack, over the cells both were
/// compared in: the run's own false-call rate, each cell judged as a family of one at
/// [`bookstore_stats::FALSE_DISCOVERY_RATE`], which is then the rate to expect.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct TwinCalls {
    pub(crate) twin: String,
    pub(crate) stack: String,
    /// Cells (scenario × concurrency) whose twin pair was called different.
    pub(crate) called: usize,
    /// Cells where the pair was compared.
    pub(crate) compared: usize,
    /// The called cells, as `scenario c=N: ratio [interval]`.
    pub(crate) calls: Vec<String>,
}

/// Every twin's calls against its stack, over the saturation cells of the runs.
pub(crate) fn twin_calls(dataset: &Dataset<'_>) -> Vec<TwinCalls> {
    let mut families = Vec::new();
    for scenario in &dataset.scenarios {
        for &concurrency in &dataset.concurrency {
            let family = Family::rates(dataset, scenario, concurrency);
            families.push((format!("{scenario} c={concurrency}"), family));
        }
    }
    twin_calls_in(dataset, &families)
}

/// Every twin's calls against its stack, over the equal-load p99 families of the runs.
pub(crate) fn twin_tail_calls(dataset: &Dataset<'_>) -> Vec<TwinCalls> {
    let families: Vec<(String, Family)> = equal_load_families(dataset)
        .into_iter()
        .map(|(scenario, rate, family)| (format!("{scenario} at {rate}"), family))
        .collect();
    twin_calls_in(dataset, &families)
}

/// The equal-load p99 family of every scenario × rate that has one: (scenario, rate,
/// family).
pub(crate) fn equal_load_families(dataset: &Dataset<'_>) -> Vec<(String, String, Family)> {
    let mut families = Vec::new();
    for scenario in &dataset.scenarios {
        for rate in &dataset.equal_load_rates {
            let family = Family::equal_load_p99(dataset, scenario, rate);
            if !family.members.is_empty() {
                families.push((scenario.clone(), rate.clone(), family));
            }
        }
    }
    families
}

/// Every twin's calls against its stack over `families`, each labelled.
pub(crate) fn twin_calls_in(
    dataset: &Dataset<'_>,
    families: &[(String, Family)],
) -> Vec<TwinCalls> {
    dataset
        .twins()
        .into_iter()
        .map(|(twin, stack)| {
            let mut out = TwinCalls { twin, stack, called: 0, compared: 0, calls: Vec::new() };
            for (label, family) in families {
                let Some(comparison) = family.compare(&out.stack, &out.twin) else {
                    continue;
                };
                out.compared += 1;
                if comparison.differs() {
                    out.called += 1;
                    out.calls.push(format!("{label}: {}", comparison.text()));
                }
            }
            out
        })
        .collect()
}

/// Each stack's rate as a share of its scenario's ceiling measured in the same rounds: one
/// family per scenario × concurrency (one comparison per stack).
#[derive(Debug)]
pub(crate) struct CeilingShares {
    /// Stack → stack ÷ ceiling.
    pub(crate) shares: BTreeMap<String, Comparison>,
}

impl CeilingShares {
    pub(crate) fn of(dataset: &Dataset<'_>, scenario: &str, concurrency: u32) -> Self {
        let metric = Metric::for_scenario(scenario);
        let mut names = Vec::new();
        let mut rounds = Vec::new();
        for stack in &dataset.stacks {
            // A party behind the relay is bounded by the ceiling behind the same relay.
            let latency = dataset.db_latency_us(stack);
            let Some((target, _)) =
                dataset.ceilings_at(scenario, concurrency, latency).into_iter().next()
            else {
                continue;
            };
            let ceiling = dataset.cell(&target, scenario, concurrency);
            let cell = dataset.cell(&Target::Stack(stack.clone()), scenario, concurrency);
            if ceiling.disqualified().is_some() || cell.is_empty() || cell.disqualified().is_some()
            {
                continue;
            }
            let reference = ceiling.by_round(|cell| Some(metric.of(cell)));
            let own = cell.by_round(|cell| Some(metric.of(cell)));
            names.push(stack.clone());
            rounds.push(shared_rounds(&reference, &own));
        }
        let comparisons: Vec<Option<Samples<'_>>> =
            rounds.iter().map(|r| Some(Samples::Paired(r))).collect();
        // Its rounds stopped where the stacks' family did: its level.
        let q = Family::rates(dataset, scenario, concurrency).q;
        let shares = names
            .into_iter()
            .zip(judge_at(&comparisons, q))
            .filter_map(|(name, c)| Some((name, c?)))
            .collect();
        Self { shares }
    }
}
