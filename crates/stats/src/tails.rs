//! When a tail question may end: its p99 comparisons all as narrow as asked.
//!
//! A tail question measures its parties at one offered rate in rounds, look by look
//! ([`crate::Looks`]), and stops at the first look where every comparison the page will show
//! has an interval no wider than the width asked (upper ÷ lower). Whether it stops depends
//! on the data, so every look is judged at [`crate::Looks::every_look_q`]: all the looks'
//! intervals hold together, and the one it stops at keeps the promise.

use std::collections::BTreeMap;

use crate::{Comparison, Group, Samples, judge_at, shared_rounds};

/// The comparisons a tail question's page shows: every two of `ranked` (each a name and
/// its p99 by round; `j` against `i` for `i < j`) as one family at `q`, their intervals
/// from the spread they share ([`Group::pooled_at`]), then each of `twins` (the index into
/// `ranked` of its stack, and its p99 by round) against its stack as a family of one with
/// that spread — as the page judges them. `None` while one of them has no interval yet.
pub fn tail_comparisons<K: Ord>(
    ranked: &[(String, BTreeMap<K, f64>)],
    twins: &[(usize, BTreeMap<K, f64>)],
    q: f64,
) -> Option<Vec<Comparison>> {
    let group = Group::pooled_at(ranked, q);
    let mut comparisons = Vec::new();
    for i in 0..ranked.len() {
        for j in i + 1..ranked.len() {
            comparisons.push(group.compare(&ranked[i].0, &ranked[j].0)?);
        }
    }
    for (of, samples) in twins {
        let rounds = shared_rounds(&ranked.get(*of)?.1, samples);
        let samples = match group.residual() {
            Some(residual) => Samples::Pooled { pairs: &rounds, residual },
            None => Samples::Paired(&rounds),
        };
        comparisons.push(judge_at(&[Some(samples)], q).pop().flatten()?);
    }
    Some(comparisons)
}

/// The widest interval (upper ÷ lower) of [`tail_comparisons`]: what a tail question
/// stops on. `None` while one of them has no interval yet.
pub fn widest_interval<K: Ord>(
    ranked: &[(String, BTreeMap<K, f64>)],
    twins: &[(usize, BTreeMap<K, f64>)],
    q: f64,
) -> Option<f64> {
    tail_comparisons(ranked, twins, q)?.iter().map(|c| c.high / c.low).reduce(f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(values: &[f64]) -> BTreeMap<u32, f64> {
        values.iter().enumerate().map(|(round, v)| (round as u32, *v)).collect()
    }

    #[test]
    fn the_widest_is_over_every_pair_and_every_twin_and_none_while_one_has_no_interval() {
        let a = member(&[1000.0, 1300.0, 900.0, 1100.0, 1000.0, 1200.0]);
        let b = member(&[2000.0, 2500.0, 1900.0, 2300.0, 2050.0, 2400.0]);
        let twin = member(&[1100.0, 1200.0, 950.0, 1000.0, 1100.0, 1250.0]);
        let ranked = vec![("a".to_owned(), a.clone()), ("b".to_owned(), b)];
        let without = widest_interval(&ranked, &[], 0.05).unwrap();
        let with = widest_interval(&ranked, &[(0, twin)], 0.05).unwrap();
        assert!(without > 1.0 && with >= without, "{without} {with}");
        // A stricter level widens every interval.
        assert!(widest_interval(&ranked, &[], 0.005).unwrap() > without);
        // One round shared: no interval yet.
        let lone = vec![("a".to_owned(), a), ("b".to_owned(), member(&[2000.0]))];
        assert_eq!(widest_interval(&lone, &[], 0.05), None);
        assert_eq!(widest_interval(&ranked, &[(5, member(&[1.0, 2.0]))], 0.05), None);
    }
}
