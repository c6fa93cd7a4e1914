//! The question, run: rounds of mirrored windows (ABBA, then BAAB), a fresh pair of
//! processes every `rounds_per_process` rounds where the run starts the sides, looked at
//! after the plan's block counts until the interval of B ÷ A is as narrow as asked, the
//! budget is spent or the looks run out. Every block goes to a journal as it ends, so a
//! question killed part way goes on with `--resume` and measures only the blocks it lacks.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use bookstore_client::engine::{Arrivals, LoadPlan, Settle};
use bookstore_record::ab::{
    AbAnswer, AbResults, AbRound, AbSettings, CONFIDENCE, SCHEMA, SCHEMA_VERSION,
};
use bookstore_record::environment::capture;
use bookstore_record::journal::Journal;
use bookstore_record::results::Cell;
use bookstore_record::{RunInfo, RunStatus};
use bookstore_stats::question::{Answer, End, QuestionPlan, Samples, order_effect};

use crate::ab::parties::{self, Harness, Running, request_name};
use crate::ab::side::Side;
use crate::harness::database::BenchDatabase;
use crate::http::Target;
use crate::suite::resume::{self, Opened};
use crate::suite::{WARMUP_MAX, WINDOW_MAX_FACTOR};

/// The first look, in blocks (or rounds with one process per side): two leave one degree of
/// freedom, three the fewest that make an interval worth a look.
const FIRST_LOOK: usize = 3;
/// The last look in blocks: 240 rounds at four per process, past any budget of minutes.
const LAST_BLOCK_LOOK: usize = 60;
/// The last look in rounds, with one process per side.
const LAST_ROUND_LOOK: usize = 400;

/// Everything `loadgen ab` is told.
pub struct AbOptions {
    /// A, then B.
    pub sides: [Side; 2],
    /// What both are asked: a scenario, or one request.
    pub request: Target,
    /// The one request's path (empty for a scenario, which makes its own).
    pub path: String,
    /// How every window is measured, and when the question ends.
    pub settings: AbSettings,
    /// How the sides are started and measured, and where the record goes.
    pub harness: Harness,
    /// `--resume`: the journal of the question this one goes on with.
    pub resume: Option<std::path::PathBuf>,
}

/// What kind of run a rate question's journal is of.
pub(crate) const JOURNAL_KIND: &str = "rate question";

/// One block as the journal keeps it: its rounds, and the processes started so far.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Journaled {
    processes: u32,
    rounds: Vec<AbRound>,
}

/// Runs the question to its end; prints a line per look on stderr; returns the results
/// (also written to `options.output`).
pub fn run(options: &AbOptions) -> anyhow::Result<AbResults> {
    let started = Instant::now();
    let settings = &options.settings;
    let [a, b] = &options.sides;
    let writes = matches!(options.request, Target::Scenario(s) if s.writes());
    let blocks_mode = a.starts_here() && b.starts_here();
    if writes && !blocks_mode && options.harness.database_url.is_none() {
        anyhow::bail!(
            "a write scenario needs its database restored before every window: give the URL's database with --database-url, or let the run start both sides"
        );
    }
    let harness = &options.harness;
    let needs_database = a.starts_here() || b.starts_here() || writes;
    let mut database = if needs_database { Some(harness.database(2)?) } else { None };
    let environment = capture(
        harness.build,
        &harness.workspace,
        database.as_mut().map_or((None, Default::default()), BenchDatabase::describe),
    );
    let mut results = AbResults {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        run: RunInfo::running(harness.id(), harness.recorded_command_line()),
        environment,
        settings: settings.clone(),
        request: request_name(&options.request, &options.path),
        parties: [a.record("A"), b.record("B")],
        rounds: Vec::new(),
        rate: None,
        latency: None,
        order_effect: None,
        processes: 0,
        ended_by: String::new(),
        notes: Vec::new(),
    };
    let logs = harness.logs()?;
    let plan = if blocks_mode {
        QuestionPlan::new(FIRST_LOOK, LAST_BLOCK_LOOK, 1.0 - CONFIDENCE, settings.precision)
    } else {
        QuestionPlan::new(FIRST_LOOK, LAST_ROUND_LOOK, 1.0 - CONFIDENCE, settings.precision)
    };
    let per_block = if blocks_mode { settings.rounds_per_process as usize } else { 1 };
    if let Some(note) = floor_note(&plan, blocks_mode) {
        eprintln!("loadgen ab: {note}");
        results.notes.push(note);
    }
    let mut question = Question {
        options,
        plan: &plan,
        blocks_mode,
        per_block,
        window_plan: window_plan(options),
        percentile: settings.rate.map(|_| settings.percentile / 100.0),
        started,
        spent_before: 0.0,
        logs: &logs,
        rate_units: Vec::new(),
        latency_units: Vec::new(),
        orders: Vec::new(),
        journal: None,
    };
    question.open_journal(&mut results)?;
    match question.ask(&mut results, database.as_mut()) {
        Ok(ended_by) => {
            results.ended_by = ended_by.into();
            finish(&mut results, started, &harness.output, None)?;
            Ok(results)
        }
        Err(error) => {
            results.ended_by = "failed".into();
            finish(&mut results, started, &harness.output, Some(format!("{error:#}")))?;
            Err(error)
        }
    }
}

/// A question in progress: what it was told, and the rounds' log ratios so far, by unit
/// (block, or round with one process per side).
struct Question<'a> {
    options: &'a AbOptions,
    plan: &'a QuestionPlan,
    blocks_mode: bool,
    per_block: usize,
    window_plan: LoadPlan,
    percentile: Option<f64>,
    started: Instant,
    /// What the blocks before a resume took, seconds.
    spent_before: f64,
    logs: &'a std::path::Path,
    rate_units: Vec<Vec<f64>>,
    latency_units: Vec<Vec<f64>>,
    /// Each round's rate log ratio with A measured first, and with B first.
    orders: Vec<(f64, f64)>,
    /// Where each block goes as it ends.
    journal: Option<Journal>,
}

impl Question<'_> {
    /// Measures until an end; says which.
    fn ask(
        &mut self,
        results: &mut AbResults,
        mut database: Option<&mut BenchDatabase>,
    ) -> anyhow::Result<&'static str> {
        let options = self.options;
        let [a, b] = &options.sides;
        let mut running: Option<Vec<Running>> = None;
        loop {
            let block = self.rate_units.len();
            // A fresh pair of processes every block where the run starts both sides; with one
            // process per side, the first stays for the whole question.
            if self.blocks_mode || running.is_none() {
                // The last block's processes stop before the next start.
                drop(running.take());
                let parties = [("A".to_owned(), a.clone()), ("B".to_owned(), b.clone())];
                let sides = parties::start(
                    &options.harness,
                    &parties,
                    database.as_deref_mut(),
                    block,
                    self.logs,
                )?;
                if sides.iter().any(|s| s.process.is_some()) {
                    results.processes += 1;
                }
                if block == 0 {
                    parties::check_contract(&options.request, &["A", "B"], &sides)?;
                }
                running = Some(sides);
            }
            let sides = running.as_ref().expect("started above");
            let began = Instant::now();
            let mut rounds = Vec::with_capacity(self.per_block);
            for _ in 0..self.per_block {
                let index = results.rounds.len() + rounds.len();
                let (order, _) = mirrored(index);
                let mut cells: Vec<(usize, Cell)> = Vec::with_capacity(4);
                for side in order {
                    if options.harness.stop.load(Ordering::Relaxed) {
                        // The block cut short is not kept: a resume measures it again whole.
                        return Ok("interrupted");
                    }
                    cells.push((
                        side,
                        window(options, &self.window_plan, &sides[side], database.as_deref_mut())?,
                    ));
                }
                rounds.push(round_of(block, index, &cells, self.percentile)?);
            }
            let journaled = Journaled { processes: results.processes, rounds };
            if let Some(journal) = &mut self.journal {
                let seconds = began.elapsed().as_secs_f64();
                resume::append_whole(journal, &block.to_string(), seconds, &journaled)?;
            }
            self.take(results, journaled.rounds);
            if let Some(ended) = self.look(results) {
                return Ok(ended);
            }
            results.write(&options.harness.output)?;
        }
    }

    /// A whole block's rounds, measured or given back by the journal: their log ratios
    /// added to the samples.
    fn take(&mut self, results: &mut AbResults, rounds: Vec<AbRound>) {
        let (mut rate_block, mut latency_block) = (Vec::new(), Vec::new());
        for round in rounds {
            let (a_first, b_first) = log_ratios(&round.a_rps, &round.b_rps, &round.order);
            self.orders.push((a_first, b_first));
            rate_block.push((a_first + b_first) / 2.0);
            if let (Some(a), Some(b)) = (round.a_latency_us, round.b_latency_us) {
                let (a, b) = (a.map(|v| v.max(1) as f64), b.map(|v| v.max(1) as f64));
                let (a_first, b_first) = log_ratios(&a, &b, &round.order);
                latency_block.push((a_first + b_first) / 2.0);
            }
            results.rounds.push(round);
        }
        self.rate_units.push(rate_block);
        self.latency_units.push(latency_block);
        results.order_effect = order_effect(&self.orders).map(|(effect, se)| [effect, se]);
    }

    /// Before the first block: a new journal, or, resuming, the old one's blocks taken as
    /// measured and the journal reopened to go on.
    fn open_journal(&mut self, results: &mut AbResults) -> anyhow::Result<()> {
        let options = self.options;
        let opened: Opened<AbResults, Journaled> = parties::open_journal(
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
            results.processes = journaled.processes;
            self.take(results, journaled.rounds);
            self.spent_before += seconds;
        }
        Ok(())
    }

    /// At a look: the answers so far, said; and the end, if this is one.
    fn look(&self, results: &mut AbResults) -> Option<&'static str> {
        let units = self.rate_units.len();
        if !self.plan.is_look(units) {
            return None;
        }
        let rate = answer(self.plan, &self.rate_units, self.blocks_mode);
        let latency = answer(self.plan, &self.latency_units, self.blocks_mode);
        results.rate = rate.map(|a| record(&a, true));
        results.latency = latency.map(|a| record(&a, false));
        say_look(units, self.blocks_mode, results, self.started);
        let precise =
            |answer: &Option<Answer>| answer.as_ref().is_some_and(|a| self.plan.precise(a));
        let tail_width = self.options.settings.tail_precision;
        let narrow =
            |answer: &Option<Answer>| answer.as_ref().is_some_and(|a| a.high / a.low <= tail_width);
        let precise = precise(&rate) && (self.percentile.is_none() || narrow(&latency));
        let spent = self.spent_before + self.started.elapsed().as_secs_f64();
        let budget = self.options.settings.budget.as_secs_f64();
        self.plan.end(units, precise, spent, budget).map(End::name)
    }
}

/// The answer at a look: blocks, or with one process per side the rounds.
fn answer(plan: &QuestionPlan, units: &[Vec<f64>], blocks_mode: bool) -> Option<Answer> {
    if units.iter().all(Vec::is_empty) {
        return None;
    }
    if blocks_mode {
        plan.answer(&Samples::Blocks(units))
    } else {
        let rounds: Vec<f64> = units.iter().flatten().copied().collect();
        plan.answer(&Samples::Rounds(&rounds))
    }
}

fn record(answer: &Answer, higher_is_better: bool) -> AbAnswer {
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
        words: answer.words(higher_is_better),
    }
}

/// The two pairs of a round as log ratios of B to A: with A measured first, with B first.
fn log_ratios(a: &[f64; 2], b: &[f64; 2], order: &str) -> (f64, f64) {
    let ln = |x: f64, y: f64| (y.max(f64::MIN_POSITIVE) / x.max(f64::MIN_POSITIVE)).ln();
    // ABBA: A0 B0 | B1 A1 ; BAAB: B0 A0 | A1 B1.
    if order == "ABBA" {
        (ln(a[0], b[0]), ln(a[1], b[1]))
    } else {
        (ln(a[1], b[1]), ln(a[0], b[0]))
    }
}

/// Round `index`'s order, as side indices (A 0, B 1) and in words: ABBA, then BAAB, in turn.
fn mirrored(index: usize) -> ([usize; 4], &'static str) {
    if index.is_multiple_of(2) { ([0, 1, 1, 0], "ABBA") } else { ([1, 0, 0, 1], "BAAB") }
}

/// The round from its four windows, in the order measured.
fn round_of(
    block: usize,
    index: usize,
    cells: &[(usize, Cell)],
    percentile: Option<f64>,
) -> anyhow::Result<AbRound> {
    let (_, order) = mirrored(index);
    let of = |side: usize| -> anyhow::Result<([f64; 2], Option<[u64; 2]>)> {
        let mine: Vec<&Cell> = cells.iter().filter(|(s, _)| *s == side).map(|(_, c)| c).collect();
        let rates = [mine[0].goodput_rps, mine[1].goodput_rps];
        let latency = match percentile {
            Some(q) => {
                let mut values = [0u64; 2];
                for (value, cell) in values.iter_mut().zip(&mine) {
                    let histogram = cell.ranked_histogram().map_err(anyhow::Error::msg)?;
                    *value = histogram.map_or(0, |h| h.value_at_quantile(q));
                }
                Some(values)
            }
            None => None,
        };
        Ok((rates, latency))
    };
    let ((a_rps, a_latency_us), (b_rps, b_latency_us)) = (of(0)?, of(1)?);
    Ok(AbRound {
        block: block as u32,
        order: order.into(),
        a_rps,
        b_rps,
        a_latency_us,
        b_latency_us,
    })
}

/// One window of `side`; a disqualified window ends the question (its rate would not be
/// the server's).
fn window(
    options: &AbOptions,
    plan: &LoadPlan,
    side: &Running,
    database: Option<&mut BenchDatabase>,
) -> anyhow::Result<Cell> {
    let cell =
        parties::window(&options.harness, &options.request, &options.path, plan, side, database)?;
    if let Some(warning) = bookstore_record::warnings::disqualification(&cell) {
        anyhow::bail!("{}: a window was disqualified: {}", side.url, warning.message);
    }
    Ok(cell)
}

/// With one process per side the answer cannot be finer than the spread between two
/// processes: what that floor is at the plan's level, when the precision asked is below it.
fn floor_note(plan: &QuestionPlan, blocks_mode: bool) -> Option<String> {
    if blocks_mode {
        return None;
    }
    let last = plan.last() as f64;
    let floor = (bookstore_stats::t_critical(last - 1.0, 1.0 - plan.level())
        * bookstore_stats::PROCESS_SD)
        .exp()
        - 1.0;
    (plan.precision() < floor).then(|| {
        format!(
            "±{:.1}% is out of reach with one process per side (a URL): the spread between two processes of one binary ({}) floors the interval at about ±{:.1}%; let the run start both sides (a stack or a command) to reach it",
            plan.precision() * 100.0,
            bookstore_stats::PROCESS_SD,
            floor * 100.0
        )
    })
}

fn window_plan(options: &AbOptions) -> LoadPlan {
    let s = &options.settings;
    LoadPlan {
        connections: s.concurrency as usize,
        workers: options.harness.client_workers,
        warmup: s.warmup,
        duration: s.duration,
        request_timeout: s.request_timeout,
        rate_rps: s.rate,
        arrivals: Arrivals::Constant,
        stop: Arc::clone(&options.harness.stop),
        live: None,
        settle: s.rate.is_none().then(|| Settle {
            warmup_max: WARMUP_MAX.max(s.warmup),
            window_min_completions: u64::from(s.concurrency),
            window_max: s.duration * WINDOW_MAX_FACTOR,
        }),
        requests: None,
    }
}

fn say_look(units: usize, blocks_mode: bool, results: &AbResults, started: Instant) {
    let what = if blocks_mode { "blocks" } else { "rounds" };
    let rate = results.rate.as_ref().map_or("–".to_owned(), |a| a.words.clone());
    let latency = results
        .latency
        .as_ref()
        .map_or(String::new(), |a| format!("; p{}: {}", results.settings.percentile, a.words));
    eprintln!(
        "loadgen ab: {units} {what}, {:.0} s: rate: {rate}{latency}",
        started.elapsed().as_secs_f64()
    );
}

fn finish(
    results: &mut AbResults,
    started: Instant,
    output: &std::path::Path,
    failure: Option<String>,
) -> anyhow::Result<()> {
    results.run.status = match (&failure, results.ended_by.as_str()) {
        (Some(_), _) => RunStatus::Failed,
        (None, "interrupted") => RunStatus::Interrupted,
        _ => RunStatus::Complete,
    };
    results.run.failure = failure;
    results.run.finished_at = Some(bookstore_record::environment::now_rfc3339());
    results.run.wall_seconds = Some(started.elapsed().as_secs_f64());
    results.write(output).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", output.display()))
}
