//! Plan, then run: the windows of a block, decided before any of them runs and in the order
//! they run; [`crate::suite::state::Suite::run_window`] runs one of them.
//!
//! A block is one scenario's closed-loop rounds, or its fixed-load rounds at one rate. The
//! fixed-load block is planned after the closed-loop block it depends on, because its rate
//! is a share of the slowest stack's goodput there; a shard's whole schedule is planned at
//! once, its slots shared with the other shards.
//!
//! Within a block every window of a round runs once per round, the order rotating by one
//! from round to round (the `turn` counts rotations over the whole run), so each party is
//! measured first, in the middle and last equally often and the machine's drift falls on
//! all of them alike. With `--schedule grouped` (the default) the windows compared with each
//! other — one concurrency's parties — run next to each other, the groups and the windows
//! within them rotating alike: the machine drifts on the scale of seconds (docs/method.md, "Where the noise lives"),
//! so a pair's windows close in time scatter less. With `--schedule shuffled` each group's
//! order is drawn afresh every round instead: with many parties listed in blocks (the
//! factorial study's, by framework), a rotation by one per round leaves each block near the
//! same place for as many rounds as the run has, which a shuffle does not.

use bookstore_client::scenario::Scenario;
use bookstore_record::results::Schedule;
use bookstore_stats::rotated_by;
use std::time::Duration;

use crate::suite::ceiling;
use crate::suite::running::PreparedStack;

/// One window of a round: who measures, and at which concurrency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Window {
    /// The minimal responder beside the stacks at this concurrency, for scenarios without
    /// database access.
    HttpCeiling(u32),
    /// The scenario's statements straight through a driver's store, for the others;
    /// behind the database latency relay with a `db_latency`.
    DbCeiling { driver: ceiling::Driver, clients: DbClients, db_latency: Option<Duration> },
    /// An index into the prepared stacks, at this concurrency.
    Stack(usize, u32),
}

impl Window {
    /// The concurrency whose parties it is compared with; `None` for a database ceiling
    /// with one client per pooled connection, compared with every concurrency.
    pub(crate) fn concurrency(&self) -> Option<u32> {
        match *self {
            Window::HttpCeiling(c) | Window::Stack(_, c) => Some(c),
            Window::DbCeiling { clients: DbClients::Stacks(c), .. } => Some(c),
            Window::DbCeiling { clients: DbClients::Pool, .. } => None,
        }
    }
}

/// How many clients a database ceiling window has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DbClients {
    /// One per pooled connection, whatever the stacks' concurrency: measured once per round
    /// and compared with the stacks at every concurrency of that round.
    Pool,
    /// As many as the stacks have connections at this concurrency.
    Stacks(u32),
}

/// A rate offered to every stack alike, in the fixed-load phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Offer {
    /// Requests per second.
    pub(crate) rate_rps: f64,
    /// The share of the slowest stack's goodput it was asked as, if so.
    pub(crate) fraction: Option<f64>,
}

/// `items` rotated by the round `turn` counts (over the whole run), which it then advances:
/// each party is first, in the middle and last equally often.
pub(crate) fn rotated<T: Clone>(items: &[T], turn: &mut usize) -> Vec<T> {
    let order = rotated_by(items, *turn);
    *turn += 1;
    order
}

/// One window the suite will measure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PlannedWindow {
    pub(crate) scenario: Scenario,
    /// The round it belongs to: what the report pairs it by.
    pub(crate) round: u32,
    /// Who measures, at which concurrency.
    pub(crate) party: Window,
    /// The rate offered in an open loop; `None` for the closed loop.
    pub(crate) offer: Option<Offer>,
    /// A shard's slot of the schedule every shard shares (`--shard`).
    pub(crate) slot: Option<u64>,
}

impl PlannedWindow {
    /// Its place in the plan, as a journal names it: the scenario, round, party and offer
    /// (not a shard's slot, which a resumed run has anew).
    pub(crate) fn key(&self) -> String {
        let PlannedWindow { scenario, round, party, offer, .. } = self;
        format!("{} {round} {party:?} {offer:?}", scenario.name())
    }

    /// Whether `other` is of the same round: the same scenario, round and offer.
    pub(crate) fn same_round(&self, other: &PlannedWindow) -> bool {
        (self.scenario, self.round, self.offer) == (other.scenario, other.round, other.offer)
    }
}

/// One round's `windows` in the groups `schedule` orders them by: `Grouped`, one group per
/// concurrency in the order they first appear (the windows compared with each other), the
/// windows compared with every concurrency (the pool-size database ceiling) a group of their
/// own; `Rotated`, all of them one group.
pub(crate) fn grouped(windows: Vec<Window>, schedule: Schedule) -> Vec<Vec<Window>> {
    if schedule == Schedule::Rotated {
        return vec![windows];
    }
    let mut groups: Vec<(Option<u32>, Vec<Window>)> = Vec::new();
    for window in windows {
        let key = window.concurrency();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, group)) => group.push(window),
            None => groups.push((key, vec![window])),
        }
    }
    groups.into_iter().map(|(_, group)| group).collect()
}

/// The order within group `index` of the round at `turn`: rotated by the turn, or with
/// [`Schedule::Shuffled`] a permutation drawn from both (each group of a round its own).
fn within<T: Clone>(group: &[T], turn: usize, index: usize, schedule: Schedule) -> Vec<T> {
    match schedule {
        Schedule::Shuffled => shuffled(group, ((turn as u64) << 16) | index as u64),
        Schedule::Grouped | Schedule::Rotated => rotated_by(group, turn),
    }
}

/// The seed of every shuffled order, mixed with the round's turn.
const SHUFFLE_SEED: u64 = 0x5EED_0F0D_E500;

/// `items` in the random order `seed` draws (Fisher–Yates).
pub(crate) fn shuffled<T: Clone>(items: &[T], seed: u64) -> Vec<T> {
    let mut order = items.to_vec();
    let mut random = bookstore_fixture::random::SplitMix64::new(SHUFFLE_SEED ^ seed);
    for i in (1..order.len()).rev() {
        order.swap(i, random.below(i + 1));
    }
    order
}

/// The closed-loop `rounds` of `scenario`: the windows of `groups` (one round's, see
/// `SuiteOptions::round_groups`) once per round, each group's windows next to each other;
/// per round the groups' order rotates by one, and the order within each group too (or is
/// drawn afresh, `schedule` shuffled).
pub(crate) fn closed_block(
    scenario: Scenario,
    groups: &[Vec<Window>],
    rounds: std::ops::Range<u32>,
    schedule: Schedule,
    turn: &mut usize,
) -> Vec<PlannedWindow> {
    rounds
        .flat_map(|round| {
            let by = *turn;
            let indices: Vec<usize> = (0..groups.len()).collect();
            let order: Vec<Window> = rotated(&indices, turn)
                .into_iter()
                .flat_map(|g| within(&groups[g], by, g, schedule))
                .collect();
            order.into_iter().map(move |party| PlannedWindow {
                scenario,
                round,
                party,
                offer: None,
                slot: None,
            })
        })
        .collect()
}

/// More rounds of `scenario` for some of its groups (the families still open, past the
/// rounds every cell got): each `(group, from, to)` measures rounds `from..to`. Per step
/// every group with a round left runs one, the groups' order rotating and the order within
/// each group too, as in [`closed_block`].
pub(crate) fn extension_block(
    scenario: Scenario,
    steps: &[(&[Window], u32, u32)],
    schedule: Schedule,
    turn: &mut usize,
) -> Vec<PlannedWindow> {
    let most = steps.iter().map(|(_, from, to)| to.saturating_sub(*from)).max().unwrap_or(0);
    let mut plan = Vec::new();
    for step in 0..most {
        let by = *turn;
        let live: Vec<(usize, &[Window], u32)> = steps
            .iter()
            .enumerate()
            .filter(|(_, (_, from, to))| from + step < *to)
            .map(|(index, (group, from, _))| (index, *group, from + step))
            .collect();
        for (index, group, round) in rotated(&live, turn) {
            plan.extend(
                within(group, by, index, schedule).into_iter().map(|party| PlannedWindow {
                    scenario,
                    round,
                    party,
                    offer: None,
                    slot: None,
                }),
            );
        }
    }
    plan
}

/// The fixed-load `rounds` of `scenario` at `offer`: every prepared stack once per round at
/// `cap` connections at most (as many as the closed loop ever held), rotating (or in a
/// fresh random order each round, `schedule` shuffled).
pub(crate) fn offered_block(
    scenario: Scenario,
    stacks: usize,
    cap: u32,
    offer: Offer,
    rounds: std::ops::Range<u32>,
    schedule: Schedule,
    turn: &mut usize,
) -> Vec<PlannedWindow> {
    let windows: Vec<Window> = (0..stacks).map(|stack| Window::Stack(stack, cap)).collect();
    let mut block = closed_block(scenario, &[windows], rounds, schedule, turn);
    for window in &mut block {
        window.offer = Some(offer);
    }
    block
}

/// A shard's whole schedule: per scenario, concurrency and round, every stack of the run in
/// its slot, the order rotating per round. A stack that failed here keeps its slots (the
/// other shards may measure it) and has no window in them.
pub(crate) fn shard_schedule(
    scenarios: &[Scenario],
    concurrency: &[u32],
    rounds: u32,
    stacks: usize,
    prepared: &[PreparedStack],
) -> Vec<PlannedWindow> {
    let mut plan = Vec::new();
    let mut turn: u64 = 0;
    for &scenario in scenarios {
        for &connections in concurrency {
            for round in 0..rounds {
                let mut order: Vec<usize> = (0..stacks).collect();
                order.rotate_left(turn as usize % stacks.max(1));
                for stack in order {
                    let Some(index) = prepared.iter().position(|p| p.index == stack) else {
                        continue;
                    };
                    plan.push(PlannedWindow {
                        scenario,
                        round,
                        party: Window::Stack(index, connections),
                        offer: None,
                        slot: Some(crate::suite::shard::slot(turn, stack, stacks)),
                    });
                }
                turn += 1;
            }
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(index: usize) -> PreparedStack {
        PreparedStack {
            index,
            database: String::new(),
            addr: "127.0.0.1:1".parse().unwrap(),
            relay_pid: None,
            idle_connections: None,
        }
    }

    #[test]
    fn every_window_runs_once_a_round_and_each_is_first_in_turn() {
        let windows = [Window::Stack(0, 128), Window::Stack(1, 128), Window::HttpCeiling(128)];
        let mut turn = 0;
        let plan =
            closed_block(Scenario::Health, &[windows.to_vec()], 0..3, Schedule::Grouped, &mut turn);
        assert_eq!(plan.len(), 9);
        assert_eq!(turn, 3, "one rotation per round");
        for round in 0..3 {
            let parties: Vec<Window> =
                plan.iter().filter(|w| w.round == round).map(|w| w.party).collect();
            assert_eq!(parties.len(), 3);
            assert!(windows.iter().all(|w| parties.contains(w)), "round {round}: {parties:?}");
            assert_eq!(parties[0], windows[round as usize], "each leads one round");
        }
        assert!(plan.iter().all(|w| w.offer.is_none() && w.slot.is_none()));
    }

    #[test]
    fn the_rotation_goes_on_across_blocks() {
        let windows = [Window::Stack(0, 128), Window::Stack(1, 128)];
        let mut turn = 0;
        let first =
            closed_block(Scenario::Health, &[windows.to_vec()], 0..1, Schedule::Grouped, &mut turn);
        let offer = Offer { rate_rps: 1000.0, fraction: Some(0.7) };
        let second =
            offered_block(Scenario::Health, 2, 256, offer, 0..1, Schedule::Grouped, &mut turn);
        assert_eq!(first[0].party, Window::Stack(0, 128));
        assert_eq!(second[0].party, Window::Stack(1, 256), "the next block starts where it was");
        assert!(second.iter().all(|w| w.offer == Some(offer)));
    }

    #[test]
    fn grouped_windows_stay_together_and_every_one_leads_its_group_in_turn() {
        let at = |c: u32| (0..3).map(|s| Window::Stack(s, c)).collect::<Vec<_>>();
        let groups = [at(128), at(256)];
        let mut turn = 0;
        let plan = closed_block(Scenario::BookById, &groups, 0..6, Schedule::Grouped, &mut turn);
        for round in 0..6 {
            let parties: Vec<Window> =
                plan.iter().filter(|w| w.round == round).map(|w| w.party).collect();
            assert_eq!(parties.len(), 6, "round {round}");
            // The windows compared with each other are next to each other: at most the
            // group's size apart.
            for group in &groups {
                let places: Vec<usize> = parties
                    .iter()
                    .enumerate()
                    .filter(|(_, w)| group.contains(w))
                    .map(|(i, _)| i)
                    .collect();
                assert_eq!(places.len(), 3);
                assert_eq!(places[2] - places[0], 2, "round {round}: {parties:?}");
            }
            // The groups take turns at going first, and so do the windows within them.
            let first_group = (round as usize) % 2;
            assert_eq!(parties[0], groups[first_group][round as usize % 3], "round {round}");
        }
    }

    #[test]
    fn shuffled_rounds_stay_grouped_and_no_party_keeps_its_place() {
        // The factorial study's 32 parties in a list that runs by framework: rotated over
        // eight rounds, the third nine are in the group's first half in 15 of 72 places
        // and the second nine in 69, so a drift within the group would favour a framework.
        let parties: Vec<Window> = (0..32).map(|s| Window::Stack(s, 128)).collect();
        let first_half = |schedule| {
            let mut turn = 0;
            let groups = std::slice::from_ref(&parties);
            let plan = closed_block(Scenario::BookById, groups, 0..8, schedule, &mut turn);
            let mut counts = [0usize; 32];
            for round in 0..8 {
                let order: Vec<Window> =
                    plan.iter().filter(|w| w.round == round).map(|w| w.party).collect();
                let mut sorted = order.clone();
                sorted.sort_by_key(|w| format!("{w:?}"));
                let mut all = parties.clone();
                all.sort_by_key(|w| format!("{w:?}"));
                assert_eq!(sorted, all, "round {round}: each party once");
                for window in &order[..16] {
                    let Window::Stack(s, _) = window else { unreachable!() };
                    counts[*s] += 1;
                }
            }
            counts
        };
        let rotated = first_half(Schedule::Grouped);
        let sum = |counts: &[usize; 32], range: std::ops::Range<usize>| {
            counts[range].iter().sum::<usize>()
        };
        assert_eq!((sum(&rotated, 9..18), sum(&rotated, 18..27)), (69, 15), "{rotated:?}");
        let drawn = first_half(Schedule::Shuffled);
        // Drawn, not placed: each framework's nine near an even share of the first half.
        let block = |range: std::ops::Range<usize>| sum(&drawn, range);
        for (name, sum) in
            [("first", block(0..9)), ("second", block(9..18)), ("third", block(18..27))]
        {
            assert!((24..=48).contains(&sum), "the {name} nine: {sum} of 72 in the first half");
        }
        // Two groups of one round (c = 128 and 256) each get an order of their own.
        let at = |c: u32| (0..8).map(|s| Window::Stack(s, c)).collect::<Vec<_>>();
        let mut turn = 0;
        let plan = closed_block(
            Scenario::BookById,
            &[at(128), at(256)],
            0..1,
            Schedule::Shuffled,
            &mut turn,
        );
        let order = |c: u32| {
            plan.iter()
                .filter(|w| w.party.concurrency() == Some(c))
                .map(|w| format!("{:?}", w.party).replace(&c.to_string(), ""))
                .collect::<Vec<_>>()
        };
        assert_ne!(order(128), order(256));
        // The same plan orders alike.
        assert_eq!(shuffled(&parties, 3), shuffled(&parties, 3));
        assert_ne!(shuffled(&parties, 3), shuffled(&parties, 4));
    }

    #[test]
    fn grouping_puts_each_concurrency_together_and_the_pool_ceiling_apart() {
        use super::DbClients;
        use crate::suite::ceiling::Driver;
        let pool =
            |driver| Window::DbCeiling { driver, clients: DbClients::Pool, db_latency: None };
        let windows = vec![
            Window::Stack(0, 128),
            Window::Stack(1, 128),
            Window::Stack(0, 256),
            Window::Stack(1, 256),
            pool(Driver::ALL[0]),
            pool(Driver::ALL[1]),
        ];
        let groups = grouped(windows.clone(), Schedule::Grouped);
        assert_eq!(
            groups,
            [windows[0..2].to_vec(), windows[2..4].to_vec(), windows[4..6].to_vec()]
        );
        assert_eq!(grouped(windows.clone(), Schedule::Rotated), [windows]);
    }

    #[test]
    fn more_rounds_go_to_the_groups_asked_for_and_continue_their_numbering() {
        let at = |c: u32| (0..2).map(|s| Window::Stack(s, c)).collect::<Vec<_>>();
        let (low, high) = (at(128), at(256));
        let mut turn = 4;
        // The group at 128 from its 3rd round to its 5th, the one at 256 from its 5th to 8th.
        let plan = extension_block(
            Scenario::BookById,
            &[(&low, 3, 5), (&high, 5, 8)],
            Schedule::Grouped,
            &mut turn,
        );
        assert_eq!(turn, 7, "one rotation per step");
        let rounds = |group: &[Window]| {
            let mut r: Vec<u32> =
                plan.iter().filter(|w| group.contains(&w.party)).map(|w| w.round).collect();
            r.dedup();
            r
        };
        assert_eq!(rounds(&low), [3, 4]);
        assert_eq!(rounds(&high), [5, 6, 7]);
        assert_eq!(plan.len(), 2 * 2 + 3 * 2, "every window of a group once per round");
        // Within a step a group's windows are next to each other.
        for window in plan.chunks(2).take(2) {
            assert_eq!(window[0].party.concurrency(), window[1].party.concurrency());
        }
        assert!(extension_block(Scenario::Health, &[], Schedule::Grouped, &mut turn).is_empty());
    }

    #[test]
    fn a_shard_keeps_the_slots_of_a_stack_that_failed_here() {
        // Stack 1 of 3 failed here: it has no window, and the others keep their slots.
        let plan = shard_schedule(&[Scenario::Health], &[64], 2, 3, &[prepared(0), prepared(2)]);
        assert_eq!(plan.len(), 4);
        let slots: Vec<u64> = plan.iter().map(|w| w.slot.unwrap()).collect();
        let full: Vec<u64> = (0..2u64)
            .flat_map(|turn| [0, 2].map(|stack| crate::suite::shard::slot(turn, stack, 3)))
            .collect();
        let mut sorted_full = full.clone();
        sorted_full.sort();
        let mut sorted = slots.clone();
        sorted.sort();
        assert_eq!(sorted, sorted_full);
        assert!(plan.iter().all(|w| matches!(w.party, Window::Stack(0 | 1, 64))));
    }
}
