//! The capacity question (`loadgen ab --slo`, `loadgen study capacity`): how many requests
//! per second each party serves within a latency objective, and each against the first.
//!
//! A capacity moves with the process: the kept capacity studies' twins, one process each
//! for the whole study, differed by about 0.20 in log capacity
//! ([`bookstore_stats::capacity::PROCESS_SD`]). So every block starts a fresh process of
//! every party on a fresh clone of the seeded database and climbs one ladder of each, their
//! windows interleaved ([`bookstore_stats::capacity::climb`]); a block's log ratio of two
//! parties' capacities is one sample, and the spread between processes is in the blocks'
//! spread instead of assumed. The blocks are looked at as `loadgen ab`'s are
//! ([`bookstore_stats::question`]), every look at level 1 − α/(looks × parties compared).

use std::sync::atomic::Ordering;
use std::time::Instant;

use bookstore_client::engine::{Arrivals, LoadPlan, Settle};
use bookstore_record::ab::{AbAnswer, CONFIDENCE};
use bookstore_record::capacity::{
    CapacityAnswer, CapacityBlock, CapacityResults, CapacitySettings, PartyCapacity, PartyLadder,
    SCHEMA, SCHEMA_VERSION,
};
use bookstore_record::environment::capture;
use bookstore_record::journal::Journal;
use bookstore_record::ladder::{Capacity, Step};
use bookstore_record::warnings::WarningKind;
use bookstore_record::{RunInfo, RunStatus};
use bookstore_stats::capacity::{Ladder, LadderDesign, centre_of, climb, dither};
use bookstore_stats::question::{Answer, End, QuestionPlan, Samples};

use crate::ab::parties::{self, Harness, Running, request_name};
use crate::ab::side::Side;
use crate::harness::database::BenchDatabase;
use crate::http::Target;
use crate::http::capacity::{MAX_RATE_FACTOR, said};
use crate::suite::resume::{self, Opened};
use crate::suite::{WARMUP_MAX, WINDOW_MAX_FACTOR};

/// The first look, in blocks.
const FIRST_LOOK: usize = 3;
/// The last: a block of two ladders takes about 5 s, so 200 blocks are past any budget of
/// minutes.
const LAST_LOOK: usize = 200;

/// Everything a capacity question is told.
pub struct CapacityOptions {
    /// The parties, labelled; the first is the one every other is compared with.
    pub parties: Vec<(String, Side)>,
    /// What every party is asked: a scenario, or one request.
    pub request: Target,
    /// The one request's path (empty for a scenario).
    pub path: String,
    /// How every window is measured, and when the question ends.
    pub settings: CapacitySettings,
    /// How the parties are started and measured, and where the record goes.
    pub harness: Harness,
    /// `--resume`: the journal of the question this one goes on with.
    pub resume: Option<std::path::PathBuf>,
}

/// What kind of run a capacity question's journal is of.
pub(crate) const JOURNAL_KIND: &str = "capacity";

/// One block as the journal keeps it, with what the first block set for all.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Journaled {
    closed_loop_rps: Vec<f64>,
    max_rate_rps: f64,
    block: CapacityBlock,
}

/// Runs the question to its end; prints a line per block and per look on stderr; returns
/// the results (also written to the harness's output after every block).
pub fn run(options: &CapacityOptions) -> anyhow::Result<CapacityResults> {
    if let Some((label, _)) = options.parties.iter().find(|(_, side)| !side.starts_here()) {
        anyhow::bail!(
            "{label}: a capacity needs a side the run starts (a stack or a command), not a URL: a server's capacity moves by about 20% between two of its processes, which one process per side cannot average (docs/method.md, \"Capacity at an objective\")"
        );
    }
    anyhow::ensure!(options.parties.len() >= 2, "a capacity question needs two parties");
    let started = Instant::now();
    let harness = &options.harness;
    let mut database = harness.database(options.parties.len())?;
    let environment = capture(harness.build, &harness.workspace, database.describe());
    let mut results = CapacityResults {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        run: RunInfo::running(harness.id(), harness.recorded_command_line()),
        environment,
        settings: options.settings.clone(),
        request: request_name(&options.request, &options.path),
        parties: options.parties.iter().map(|(label, side)| side.record(label)).collect(),
        closed_loop_rps: Vec::new(),
        max_rate_rps: 0.0,
        blocks: Vec::new(),
        capacities: Vec::new(),
        answers: Vec::new(),
        processes: 0,
        ended_by: String::new(),
        notes: Vec::new(),
    };
    let compared = options.parties.len() - 1;
    let plan = QuestionPlan::new(
        FIRST_LOOK,
        LAST_LOOK,
        (1.0 - CONFIDENCE) / compared as f64,
        options.settings.precision,
    );
    let mut question = Question {
        options,
        plan: &plan,
        started,
        spent_before: 0.0,
        logs: harness.logs()?,
        found: vec![Vec::new(); options.parties.len()],
        units: vec![Vec::new(); compared],
        journal: None,
    };
    question.open_journal(&mut results)?;
    let outcome = question.ask(&mut results, &mut database);
    let failure = outcome.as_ref().err().map(|e| format!("{e:#}"));
    results.ended_by = match &outcome {
        Ok(ended) => (*ended).into(),
        Err(_) => "failed".into(),
    };
    results.run.status = match (&failure, results.ended_by.as_str()) {
        (Some(_), _) => RunStatus::Failed,
        (None, "interrupted") => RunStatus::Interrupted,
        _ => RunStatus::Complete,
    };
    results.run.failure = failure;
    results.run.finished_at = Some(bookstore_record::environment::now_rfc3339());
    results.run.wall_seconds = Some(started.elapsed().as_secs_f64());
    results
        .write(&harness.output)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", harness.output.display()))?;
    outcome.map(|_| results)
}

/// A question in progress: what it was told, and the capacities so far.
struct Question<'a> {
    options: &'a CapacityOptions,
    plan: &'a QuestionPlan,
    started: Instant,
    /// What the blocks before a resume took, seconds.
    spent_before: f64,
    logs: std::path::PathBuf,
    /// Each party's capacity in every block so far, requests per second.
    found: Vec<Vec<f64>>,
    /// Each party after the first: per block, ln(its capacity ÷ the first's).
    units: Vec<Vec<Vec<f64>>>,
    /// Where each block goes as it ends.
    journal: Option<Journal>,
}

/// Ctrl-C, seen before a window: the block in progress is dropped, not half kept.
#[derive(Debug)]
struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

impl Question<'_> {
    /// Measures until an end; says which.
    fn ask(
        &mut self,
        results: &mut CapacityResults,
        database: &mut BenchDatabase,
    ) -> anyhow::Result<&'static str> {
        let options = self.options;
        let harness = &options.harness;
        let labels: Vec<&str> = options.parties.iter().map(|(l, _)| l.as_str()).collect();
        loop {
            let block = results.blocks.len();
            let began = Instant::now();
            let running =
                parties::start(harness, &options.parties, Some(database), block, &self.logs)?;
            results.processes += 1;
            if block == 0 {
                parties::check_contract(&options.request, &labels, &running)?;
                match self.first_centres(&running, database)? {
                    Some(closed) => {
                        let highest = closed.iter().copied().fold(0.0, f64::max);
                        results.max_rate_rps =
                            options.settings.max_rate_rps.unwrap_or(highest * MAX_RATE_FACTOR);
                        results.closed_loop_rps = closed;
                    }
                    None => return Ok("interrupted"),
                }
            }
            let Some(ladders) = self.climb(results, &running, database, block)? else {
                return Ok("interrupted");
            };
            drop(running);
            let journaled = Journaled {
                closed_loop_rps: results.closed_loop_rps.clone(),
                max_rate_rps: results.max_rate_rps,
                block: ladders,
            };
            if let Some(journal) = &mut self.journal {
                let seconds = began.elapsed().as_secs_f64();
                resume::append_whole(journal, &block.to_string(), seconds, &journaled)?;
            }
            results.blocks.push(journaled.block);
            if let Some(ended) = self.look(results) {
                return Ok(ended);
            }
        }
    }

    /// Before the first block: a new journal, or, resuming, the old one's blocks taken as
    /// measured and the journal reopened to go on.
    fn open_journal(&mut self, results: &mut CapacityResults) -> anyhow::Result<()> {
        let options = self.options;
        let opened: Opened<CapacityResults, Journaled> = parties::open_journal(
            JOURNAL_KIND,
            (&options.harness, options.resume.as_deref()),
            &*results,
            |r| (&r.environment, &r.settings),
            |a, b| a.parties == b.parties && a.request == b.request,
        )?;
        self.journal = Some(opened.journal);
        let Some((read, run)) = opened.resumed else { return Ok(()) };
        results.run = run;
        for (_, seconds, journaled) in read.windows {
            results.closed_loop_rps = journaled.closed_loop_rps.clone();
            results.max_rate_rps = journaled.max_rate_rps;
            for (party, ladder) in journaled.block.ladders.iter().enumerate() {
                let rate = ladder.capacity.and_then(Capacity::rate_rps);
                self.found[party].push(rate.expect("a journaled block bracketed every capacity"));
            }
            let last = |found: &[Vec<f64>], party: usize| *found[party].last().expect("pushed");
            for (pair, units) in self.units.iter_mut().enumerate() {
                units.push(vec![(last(&self.found, pair + 1) / last(&self.found, 0)).ln()]);
            }
            results.blocks.push(journaled.block);
            results.processes += 1;
            self.spent_before += seconds;
        }
        Ok(())
    }

    /// One closed-loop window of each party, its rate the centre of its first ladder;
    /// `None` when interrupted.
    fn first_centres(
        &self,
        running: &[Running],
        database: &mut BenchDatabase,
    ) -> anyhow::Result<Option<Vec<f64>>> {
        let (options, s) = (self.options, &self.options.settings);
        let plan = LoadPlan {
            connections: s.concurrency as usize,
            workers: options.harness.client_workers,
            warmup: s.warmup,
            duration: s.duration,
            request_timeout: s.request_timeout,
            rate_rps: None,
            arrivals: Arrivals::Constant,
            stop: std::sync::Arc::clone(&options.harness.stop),
            live: None,
            settle: Some(Settle {
                warmup_max: WARMUP_MAX.max(s.warmup),
                window_min_completions: u64::from(s.concurrency),
                window_max: s.duration * WINDOW_MAX_FACTOR,
            }),
            requests: None,
        };
        let mut closed = Vec::with_capacity(running.len());
        for ((label, _), side) in options.parties.iter().zip(running) {
            if options.harness.stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let cell = parties::window(
                &options.harness,
                &options.request,
                &options.path,
                &plan,
                side,
                Some(&mut *database),
            )?;
            anyhow::ensure!(
                cell.goodput_rps > 0.0,
                "{label} ({}) answered nothing in a closed-loop window",
                side.url
            );
            closed.push(cell.goodput_rps);
        }
        eprintln!(
            "loadgen ab: closed loop, c = {}: {}; the first ladders are laid around these",
            s.concurrency,
            self.per_party(&closed)
        );
        Ok(Some(closed))
    }

    /// Every party's ladder of block `block`; `None` when interrupted.
    fn climb(
        &mut self,
        results: &CapacityResults,
        running: &[Running],
        database: &mut BenchDatabase,
        block: usize,
    ) -> anyhow::Result<Option<CapacityBlock>> {
        let options = self.options;
        let objective = options.settings.objective;
        let design = LadderDesign::up_to(results.max_rate_rps);
        // Each party's ladder around its median so far, moved by a dither of its own so that
        // no two of its ladders put their rungs at the same rates.
        let parties = options.parties.len();
        let centres: Vec<f64> = (0..parties)
            .map(|i| {
                let centre = centre_of(&self.found[i]).unwrap_or(results.closed_loop_rps[i]);
                centre * design.step.powf(dither(block * parties + i))
            })
            .collect();
        let mut ladders: Vec<Ladder> = centres.iter().map(|&c| Ladder::new(design, c)).collect();
        let mut steps: Vec<Vec<Step>> = vec![Vec::new(); ladders.len()];
        let climbed = climb(&mut ladders, block, |party, rate| {
            if options.harness.stop.load(Ordering::Relaxed) {
                return Err(anyhow::Error::new(Interrupted));
            }
            let step = self.rung(party, rate, &running[party], database)?;
            let rung = step.rung(objective).expect("a window is measured until not left out");
            steps[party].push(step);
            Ok(rung)
        });
        match climbed {
            Err(error) if error.downcast_ref::<Interrupted>().is_some() => return Ok(None),
            Err(error) => return Err(error),
            Ok(()) => {}
        }
        let mut block_ladders = Vec::with_capacity(ladders.len());
        for (party, ((ladder, steps), centre_rps)) in
            ladders.iter().zip(steps).zip(centres).enumerate()
        {
            let capacity = ladder.capacity();
            match capacity.and_then(Capacity::rate_rps) {
                Some(rate) => self.found[party].push(rate),
                None => {
                    anyhow::bail!("{}: {}", options.parties[party].0, said(capacity, objective))
                }
            }
            block_ladders.push(PartyLadder { centre_rps, steps, capacity });
        }
        let last = |party: usize| *self.found[party].last().expect("found above");
        for (pair, units) in self.units.iter_mut().enumerate() {
            units.push(vec![(last(pair + 1) / last(0)).ln()]);
        }
        let capacities: Vec<f64> = (0..self.found.len()).map(last).collect();
        eprintln!(
            "loadgen ab: block {}, {:.0} s: {} at {}",
            block + 1,
            self.started.elapsed().as_secs_f64(),
            self.per_party(&capacities),
            objective.label()
        );
        Ok(Some(CapacityBlock { block: block as u32, ladders: block_ladders }))
    }

    /// One window of `party` at `rate`, judged: a window that broke the contract ends the
    /// question; one the client itself limited (its send lag) is measured again, and if the
    /// client is late again counted as missed — on a machine the client shares with the
    /// server, a rate it cannot offer in time is past what the two can do together (the
    /// first twin questions ended on such a window in 3 of 10).
    fn rung(
        &self,
        party: usize,
        rate: f64,
        side: &Running,
        database: &mut BenchDatabase,
    ) -> anyhow::Result<Step> {
        let mut step = self.window(party, rate, side, database)?;
        if step.left_out {
            step = self.window(party, rate, side, database)?;
        }
        if step.left_out {
            let why = step.missed_because.take().unwrap_or_default();
            (step.left_out, step.met, step.fell_behind) = (false, false, true);
            step.missed_because = Some(format!("missed: twice {why}"));
        }
        Ok(step)
    }

    /// One window of `party` at `rate`, judged.
    fn window(
        &self,
        party: usize,
        rate: f64,
        side: &Running,
        database: &mut BenchDatabase,
    ) -> anyhow::Result<Step> {
        let (options, s) = (self.options, &self.options.settings);
        let plan = LoadPlan {
            connections: s.concurrency as usize,
            workers: options.harness.client_workers,
            warmup: s.warmup,
            duration: s.window_at(rate),
            request_timeout: s.request_timeout,
            rate_rps: Some(rate),
            arrivals: Arrivals::Constant,
            stop: std::sync::Arc::clone(&options.harness.stop),
            live: None,
            settle: None,
            requests: None,
        };
        let cell = parties::window(
            &options.harness,
            &options.request,
            &options.path,
            &plan,
            side,
            Some(database),
        )?;
        let label = &options.parties[party].0;
        if let Some(broken) =
            cell.warnings.iter().find(|w| matches!(w.kind, WarningKind::InvalidResponses { .. }))
        {
            anyhow::bail!("{label} ({}) at {rate:.0} req/s: {}", side.url, broken.message);
        }
        Step::judge(&cell, rate, s.objective).map_err(anyhow::Error::msg)
    }

    /// At a look: each party's capacity and each against the first, said; and the end, if
    /// this is one.
    fn look(&self, results: &mut CapacityResults) -> Option<&'static str> {
        let blocks = results.blocks.len();
        if !self.plan.is_look(blocks) {
            return None;
        }
        let objective = self.options.settings.objective;
        results.capacities = self
            .found
            .iter()
            .enumerate()
            .filter_map(|(party, found)| {
                let logs: Vec<f64> = found.iter().map(|c| c.ln()).collect();
                let estimate = bookstore_stats::Estimate::of(&logs, 1.0 - CONFIDENCE)?;
                let sd = (logs.iter().map(|l| (l - estimate.mean).powi(2)).sum::<f64>()
                    / (logs.len() - 1) as f64)
                    .sqrt();
                Some(PartyCapacity {
                    label: results.label(party).to_owned(),
                    rate_rps: estimate.mean.exp(),
                    low_rps: estimate.low.exp(),
                    high_rps: estimate.high.exp(),
                    level: estimate.level,
                    blocks: logs.len(),
                    block_sd: sd,
                })
            })
            .collect();
        let answers: Vec<(usize, Answer)> = self
            .units
            .iter()
            .enumerate()
            .filter_map(|(pair, units)| Some((pair, self.plan.answer(&Samples::Blocks(units))?)))
            .collect();
        results.answers = answers
            .iter()
            .map(|(pair, answer)| {
                let label = results.label(pair + 1).to_owned();
                let subject = format!("{label}'s capacity at {}", objective.label());
                CapacityAnswer { label, answer: recorded(answer, &subject) }
            })
            .collect();
        for answer in &results.answers {
            eprintln!("loadgen ab: {blocks} blocks: {}", answer.answer.words);
        }
        let precise = answers.len() == self.units.len()
            && answers.iter().all(|(_, answer)| self.plan.precise(answer));
        let spent = self.spent_before + self.started.elapsed().as_secs_f64();
        let budget = self.options.settings.budget.as_secs_f64();
        self.plan.end(blocks, precise, spent, budget).map(End::name)
    }

    /// `values`, one per party, as "A 9,812, B 9,020 req/s".
    fn per_party(&self, values: &[f64]) -> String {
        let each: Vec<String> = self
            .options
            .parties
            .iter()
            .zip(values)
            .map(|((label, _), value)| format!("{label} {value:.0}"))
            .collect();
        format!("{} req/s", each.join(", "))
    }
}

/// An answer as the file keeps it, its words about `subject`.
fn recorded(answer: &Answer, subject: &str) -> AbAnswer {
    AbAnswer {
        ratio: answer.ratio,
        low: answer.low,
        high: answer.high,
        level: answer.level,
        blocks: answer.blocks,
        rounds: answer.rounds,
        process_sd: answer.process_sd,
        round_sd: answer.round_sd,
        verdict: answer.verdict.name().to_owned(),
        words: answer.words_of(subject, "higher", "lower"),
    }
}
