//! The sequential design ([`Looks`]) on simulated families: each judged at its looks on the
//! rounds so far, stopped as soon as none of its pairs is open, as the suite does, and as
//! the pages judge a family of stacks (`Samples::Processes`). Each stack is one process with
//! a lead or lag of its own ([`PROCESS_SD`] between two), as the twins measured.

use bookstore_stats::{FALSE_DISCOVERY_RATE, Looks, PROCESS_SD, Samples, Verdict, judge_at};

use super::{Normal, PAIR_SD, STACKS, processes};

/// The suite's default looks: `--rounds 3 --max-rounds 12`.
fn looks() -> Looks {
    Looks::planned(3, 12)
}

/// One family run as the suite runs it, stopped at the look its pairs settle at or at the
/// look `budget` (an index into the looks, drawn apart from the data) allows, whichever
/// comes first: every pair (i < j) with its verdict, and the rounds it took.
fn sequential(
    rates: &[Vec<f64>],
    looks: &Looks,
    budget: usize,
) -> (Vec<(usize, usize, Verdict)>, usize) {
    let mut pairs = Vec::new();
    for i in 0..rates.len() {
        for j in i + 1..rates.len() {
            pairs.push((i, j));
        }
    }
    for (look, &n) in looks.rounds().iter().enumerate() {
        let samples: Vec<Vec<(f64, f64)>> = pairs
            .iter()
            .map(|&(i, j)| {
                rates[i][..n].iter().copied().zip(rates[j][..n].iter().copied()).collect()
            })
            .collect();
        let slices: Vec<&[(f64, f64)]> = samples.iter().map(Vec::as_slice).collect();
        if looks.open(&slices) > 0 && look < budget && looks.next(n).is_some() {
            continue;
        }
        let comparisons: Vec<Option<Samples>> =
            samples.iter().map(|s| Some(Samples::Processes(s))).collect();
        let verdicts = judge_at(&comparisons, looks.level(&slices))
            .into_iter()
            .zip(&pairs)
            .map(|(c, &(i, j))| (i, j, c.expect("≥ 2 rounds").verdict))
            .collect();
        return (verdicts, n);
    }
    unreachable!("the last look stops every family")
}

#[test]
fn stopping_on_the_data_keeps_false_calls_within_q() {
    let looks = looks();
    let last = *looks.rounds().last().unwrap();
    for (seed, sd) in [(0x5EED_0101, PAIR_SD), (0x5EED_0102, 0.07)] {
        let mut random = Normal(seed);
        let families = 2000;
        let mut wrong = 0;
        let mut spent = 0;
        for _ in 0..families {
            let rates = processes(&mut random, &[0.0; STACKS], last, sd, PROCESS_SD);
            // The budget stops it at a look drawn apart from its data (often the last).
            let budget = (random.uniform() * 6.0) as usize;
            let (verdicts, n) = sequential(&rates, &looks, budget);
            wrong +=
                usize::from(verdicts.iter().any(|(_, _, v)| *v != Verdict::NotDistinguishable));
            spent += n;
        }
        let rate = wrong as f64 / families as f64;
        let mean_rounds = spent as f64 / families as f64;
        eprintln!(
            "sd {sd}, no difference: {wrong} of {families} families called a pair, {mean_rounds:.1} rounds on average"
        );
        assert!(rate <= FALSE_DISCOVERY_RATE, "sd {sd}: {wrong} of {families}");
        // Futility stops most of them early: the rounds go where they can change a verdict.
        assert!(mean_rounds < 0.75 * last as f64, "sd {sd}: {mean_rounds} rounds on average");
    }
}

#[test]
fn power_at_ten_fifteen_and_twenty_five_percent() {
    // One stack faster than the four others, which are equal; the spread of the kept
    // grouped runs' median pair (docs/method.md, "Where the noise lives").
    let looks = looks();
    let last = *looks.rounds().last().unwrap();
    let sd = 0.105;
    let mut powers = Vec::new();
    for difference in [1.10f64, 1.15, 1.25] {
        let mut random = Normal(0x5EED_0103);
        let families = 1000;
        let (mut found, mut backwards, mut spent) = (0, 0, 0);
        for _ in 0..families {
            let truth = [0.0, difference.ln(), 0.0, 0.0, 0.0];
            let rates = processes(&mut random, &truth, last, sd, PROCESS_SD);
            let (verdicts, n) = sequential(&rates, &looks, 3);
            spent += n;
            match verdicts.iter().find(|(i, j, _)| (*i, *j) == (0, 1)).unwrap().2 {
                Verdict::Higher => found += 1,
                Verdict::Lower => backwards += 1,
                Verdict::NotDistinguishable => {}
            }
        }
        let power = found as f64 / families as f64;
        eprintln!(
            "sd {sd}, ×{difference}: found in {power:.3} of the families, {:.1} rounds on average",
            spent as f64 / families as f64
        );
        assert_eq!(backwards, 0, "×{difference}");
        powers.push(power);
    }
    assert!(powers.windows(2).all(|w| w[0] < w[1]), "{powers:?}");
    assert!(powers[2] > 0.95, "25% at this spread is found nearly always: {powers:?}");
}
