//! The pooled spread (`Samples::Pooled`, the equal-load p99's comparison) on simulated
//! families: six members, three rounds, a per-round log-ratio spread like the kept runs'
//! equal-load p99s (docs/method.md, "How two p99s are compared").

use std::collections::BTreeMap;

use bookstore_stats::{FALSE_DISCOVERY_RATE, Group, Verdict};

use super::{Normal, rounds};

/// The median per-round spread of a pair's log p99 ratio at equal load in the kept default
/// run `summary/results/2026-12-03-sequential-default-1.json` (0.5 s windows).
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
