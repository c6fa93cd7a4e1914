//! `loadgen ab`'s question on simulated parties, with the stopping rule as shipped: blocks of
//! rounds, each block a fresh pair of processes with a lead or lag of its own, looked at
//! after the plan's block counts and stopped when the interval is as narrow as asked.

use bookstore_stats::question::{QuestionPlan, Samples, order_effect};
use bookstore_stats::{PROCESS_SD, Verdict};

use super::Normal;

/// The spread of one ABBA round's log ratio: two pairs of 0.2 s windows, each pair's spread
/// the default run's (0.09, `summary/results/2026-12-06T08-36-39Z.json.zst`), averaged.
const ROUND_SD: f64 = 0.065;
/// Rounds per block: `loadgen ab`'s default.
const ROUNDS_PER_BLOCK: usize = 4;

/// The plan `loadgen ab` ships: looks from 3 to 60 blocks, all at 95%, ended at ±2%.
fn plan() -> QuestionPlan {
    QuestionPlan::new(3, 60, 0.05, 0.02)
}

/// One question to its end: blocks with a true log ratio `truth`, each block a process
/// pair's lead drawn from `process_sd`; the answer it stops with.
fn ask(random: &mut Normal, truth: f64, process_sd: f64) -> bookstore_stats::question::Answer {
    let plan = plan();
    let mut blocks: Vec<Vec<f64>> = Vec::new();
    loop {
        let lead = process_sd * random.next();
        blocks
            .push((0..ROUNDS_PER_BLOCK).map(|_| truth + lead + ROUND_SD * random.next()).collect());
        if !plan.is_look(blocks.len()) {
            continue;
        }
        let answer = plan.answer(&Samples::Blocks(&blocks)).expect("two blocks at a look");
        if plan.precise(&answer) || blocks.len() >= plan.last() {
            return answer;
        }
    }
}

#[test]
fn a_twin_question_is_called_in_at_most_five_percent_of_two_thousand() {
    let mut random = Normal(0x5eed_ab01);
    let (questions, mut called, mut precise) = (2_000, 0, 0);
    for _ in 0..questions {
        let answer = ask(&mut random, 0.0, PROCESS_SD);
        called += usize::from(answer.verdict != Verdict::NotDistinguishable);
        precise += usize::from(plan().precise(&answer));
    }
    let rate = called as f64 / questions as f64;
    eprintln!("twin questions called: {called} of {questions}; ended by precision: {precise}");
    assert!(rate <= 0.05, "{called} of {questions} twin questions called");
    assert!(precise > questions * 9 / 10, "only {precise} reached ±2%");
}

#[test]
fn a_five_percent_difference_is_called_the_right_way_and_its_interval_holds_it() {
    let mut random = Normal(0x5eed_ab02);
    let truth = (1.0f64 / 0.952).ln(); // 2.0 ms against 2.1 ms per request
    let (questions, mut right, mut covered) = (500, 0, 0);
    for _ in 0..questions {
        let answer = ask(&mut random, truth, PROCESS_SD);
        right += usize::from(answer.verdict == Verdict::Higher);
        covered += usize::from(answer.low <= truth.exp() && truth.exp() <= answer.high);
    }
    eprintln!("a 5% difference: called the right way in {right} of {questions}, held in {covered}");
    assert!(right as f64 >= 0.99 * questions as f64, "called right in {right} of {questions}");
    assert!(
        covered as f64 >= 0.95 * questions as f64,
        "held the truth in {covered} of {questions}"
    );
}

#[test]
fn with_one_process_per_side_a_twin_is_called_in_at_most_five_percent() {
    // A URL someone else started: one process each, their lead drawn once, the rounds'
    // interval widened by PROCESS_SD, stopped at the looks on rounds.
    let mut random = Normal(0x5eed_ab03);
    let plan = QuestionPlan::new(4, 120, 0.05, 0.02);
    let (questions, mut called) = (2_000, 0);
    for _ in 0..questions {
        let lead = PROCESS_SD * random.next();
        let mut rounds = Vec::new();
        let answer = loop {
            rounds.push(lead + ROUND_SD * random.next());
            if !plan.is_look(rounds.len()) {
                continue;
            }
            let answer = plan.answer(&Samples::Rounds(&rounds)).unwrap();
            if plan.precise(&answer) || rounds.len() >= plan.last() {
                break answer;
            }
        };
        called += usize::from(answer.verdict != Verdict::NotDistinguishable);
    }
    eprintln!("one process per side: twin questions called {called} of {questions}");
    assert!(called as f64 <= 0.05 * questions as f64, "{called} of {questions}");
}

#[test]
fn a_mirrored_round_cancels_a_linear_drift_that_a_fixed_order_keeps() {
    // The machine slows by 1% a window: in A B B A, A's windows sit at 0 and 3, B's at 1
    // and 2 — the same mean time; in A B alone, B is always a window later.
    let mut random = Normal(0x5eed_ab04);
    let drift = -0.01;
    let (mut mirrored, mut fixed, mut orders) = (0.0, 0.0, Vec::new());
    let rounds = 400;
    for _ in 0..rounds {
        let window = |at: f64, random: &mut Normal| drift * at + 0.03 * random.next();
        let (a0, b1, b2, a3) = (
            window(0.0, &mut random),
            window(1.0, &mut random),
            window(2.0, &mut random),
            window(3.0, &mut random),
        );
        let (a_first, b_first) = (b1 - a0, b2 - a3);
        mirrored += (a_first + b_first) / 2.0;
        fixed += a_first;
        orders.push((a_first, b_first));
    }
    let (mirrored, fixed) = (mirrored / rounds as f64, fixed / rounds as f64);
    assert!(mirrored.abs() < 0.003, "mirrored: {mirrored}");
    assert!((fixed - drift).abs() < 0.004, "A B alone keeps the drift: {fixed}");
    // And the order effect measures it: half of (A first − B first) = the drift per window.
    let (effect, se) = order_effect(&orders).unwrap();
    assert!((effect - drift).abs() < 3.0 * se, "{effect} ± {se}");
}
