//! The pooled spread (`Samples::Pooled`, the equal-load p99's comparison) on simulated
//! families: six members, three rounds, a per-round log-ratio spread like the kept runs'
//! equal-load p99s (docs/method.md, "Latency at equal load").

use std::collections::BTreeMap;

use bookstore_stats::{FALSE_DISCOVERY_RATE, Group, Verdict};

use super::{Normal, rounds};

/// The median per-round spread of a pair's log p99 ratio at equal load in the default
/// run `2713e02:summary/results/2026-12-03-sequential-default-1.json` (0.5 s windows).
const P99_PAIR_SD: f64 = 0.63;
const MEMBERS: usize = 6;
const ROUNDS: usize = 3;

fn members(rates: &[Vec<f64>]) -> Vec<(String, BTreeMap<u32, f64>)> {
    rates
        .iter()
        .enumerate()
        .map(|(i, r)| {
            (format!("s{i}"), r.iter().enumerate().map(|(k, v)| (k as u32, *v)).collect())
        })
        .collect()
}

/// Families with no true difference: the share with any call, and the median width (upper ÷
/// lower) of their intervals, pooled and per pair.
fn null_families(random: &mut Normal, families: usize, stall: f64) -> (f64, f64, f64) {
    let (mut called, mut pooled_widths, mut own_widths) = (0, Vec::new(), Vec::new());
    for _ in 0..families {
        let mut rates = rounds(random, &[0.0; MEMBERS], ROUNDS, P99_PAIR_SD);
        // A stall now and then: one window's p99 several times its usual.
        for value in rates.iter_mut().flatten() {
            if random.uniform() < stall {
                *value *= 4.0;
            }
        }
        let members = members(&rates);
        let pooled = Group::pooled_at(&members, FALSE_DISCOVERY_RATE);
        called += usize::from(pooled.calls().0 > 0);
        pooled_widths.extend(pooled.pairs().map(|(_, _, c)| c.high / c.low));
        let own = Group::paired_at(&members, FALSE_DISCOVERY_RATE);
        own_widths.extend(own.pairs().map(|(_, _, c)| c.high / c.low));
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (called as f64 / families as f64, median(pooled_widths), median(own_widths))
}

#[test]
fn with_no_true_difference_the_pooled_spread_keeps_false_calls_within_q() {
    let mut random = Normal(0x5EED_0030);
    for stall in [0.0, 0.1] {
        let (share, pooled, own) = null_families(&mut random, 2000, stall);
        eprintln!(
            "stalls {stall}: {:.1}% of families called a pair; median width pooled {pooled:.1}×, per pair {own:.1}×",
            share * 100.0
        );
        assert!(share <= FALSE_DISCOVERY_RATE + 0.01, "stalls {stall}: {share}");
        assert!(pooled < own / 3.0, "pooling narrows the intervals: {pooled} vs {own}");
    }
}

#[test]
fn a_member_twice_as_slow_is_called_where_its_own_rounds_could_not_say() {
    let mut random = Normal(0x5EED_0031);
    let truth: Vec<f64> = (0..MEMBERS).map(|i| if i == 0 { 2f64.ln() } else { 0.0 }).collect();
    let (mut pooled, mut own) = (0, 0);
    let families = 500;
    for _ in 0..families {
        let members = members(&rounds(&mut random, &truth, ROUNDS, P99_PAIR_SD));
        let called = |g: &Group| {
            (1..MEMBERS)
                .filter(|j| g.compare("s0", &format!("s{j}")).unwrap().verdict == Verdict::Lower)
                .count()
        };
        pooled += called(&Group::pooled_at(&members, FALSE_DISCOVERY_RATE));
        own += called(&Group::paired_at(&members, FALSE_DISCOVERY_RATE));
    }
    let (pooled, own) = (pooled as f64 / (families * 5) as f64, own as f64 / (families * 5) as f64);
    eprintln!(
        "2× at spread {P99_PAIR_SD}, {ROUNDS} rounds: power pooled {pooled:.2}, per pair {own:.2}"
    );
    assert!(pooled > 2.0 * own && pooled > 0.1, "{pooled} vs {own}");
}

/// The rates' families: five stacks and a twin, each one process (its own lead drawn once
/// from the spread between processes), a per-round pair spread like the default run's.
mod rates {
    use super::*;
    use bookstore_stats::{PROCESS_SD, Residual, Samples, judge_one};

    /// The default run's median per-round spread of a pair's log rate ratio
    /// (`summary/results/2026-12-06T08-36-39Z.json.zst`, 0.2 s windows).
    const RATE_PAIR_SD: f64 = 0.09;

    /// A family of `MEMBERS` (the last the first's twin), `rounds` rounds, all equal in
    /// truth; `noisier` times the noise on member 2 (1: alike).
    fn family(
        random: &mut Normal,
        rounds: usize,
        noisier: f64,
    ) -> Vec<(String, BTreeMap<u32, f64>)> {
        let mut rates =
            super::super::processes(random, &[0.0; MEMBERS], rounds, RATE_PAIR_SD, PROCESS_SD);
        for value in &mut rates[2] {
            *value = (value.ln() * 1.0 + (noisier - 1.0) * RATE_PAIR_SD * random.next()).exp();
        }
        members(&rates)
    }

    #[test]
    fn a_twin_judged_by_the_pooled_spread_is_called_in_at_most_five_percent_of_families() {
        let mut random = Normal(0x5EED_0041);
        let (families, mut twin_called, mut family_called, mut pooled) = (2000, 0, 0, 0);
        for f in 0..families {
            let rounds = 3 + f % 10; // 3 to 12, as a sequential run's families get
            let members = family(&mut random, rounds, 1.0);
            // The stacks (all but the twin) are the family; the twin is judged against its
            // own stack alone, by the family's spread, as the pages judge it.
            let stacks = &members[..MEMBERS - 1];
            let group = Group::pooled_between_processes_at(stacks, FALSE_DISCOVERY_RATE);
            family_called += usize::from(group.calls().0 > 0);
            pooled += usize::from(group.residual().is_some());
            let pairs = bookstore_stats::shared_rounds(&members[0].1, &members[MEMBERS - 1].1);
            let twin = match group.residual() {
                Some(residual) => judge_one(Samples::PooledProcesses { pairs: &pairs, residual }),
                None => judge_one(Samples::Processes(&pairs)),
            };
            twin_called +=
                usize::from(twin.is_some_and(|c| c.verdict != Verdict::NotDistinguishable));
        }
        eprintln!(
            "pooled {pooled} of {families}; twin called {twin_called}, a family {family_called}"
        );
        assert!(pooled > families * 8 / 10, "equally noisy members are pooled: {pooled}");
        assert!(twin_called as f64 <= 0.05 * families as f64, "twin called in {twin_called}");
        assert!(family_called as f64 <= 0.05 * families as f64, "a pair called in {family_called}");
    }

    #[test]
    fn a_member_three_times_as_noisy_keeps_each_pair_to_its_own_spread() {
        let mut random = Normal(0x5EED_0042);
        let (families, mut alike) = (500, 0);
        for _ in 0..families {
            let members = family(&mut random, 12, 3.0);
            let samples: Vec<&BTreeMap<u32, f64>> = members.iter().map(|(_, s)| s).collect();
            alike += usize::from(Residual::alike(&samples, FALSE_DISCOVERY_RATE) == Some(true));
        }
        assert!(alike < families / 5, "a noisier member passed as alike in {alike} of {families}");
    }
}
