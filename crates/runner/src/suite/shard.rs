//! `--shard K/N --start-at UNIX_TIME`: one of N clients, each on its own host, that load
//! the same running stacks together.
//!
//! The clients do not talk to each other. They agree by construction: the same options give
//! every shard the same cells in the same order, and each cell has a fixed slot on the wall
//! clock, `start_at + slot × length`, so all N begin a cell at the same moment (as far as
//! their clocks agree). A slot holds the engine's start, the warm-up, the window, the drain
//! — as long as the request timeout, the longest a request sent in the window can take —
//! and [`SETUP`], in which shard 1 reads the statements and audits what the database holds,
//! then restores the seed and resets `pg_stat_statements` for the next slot. Only shard 1
//! touches the database; the acknowledgements of all shards are added up by `loadgen
//! merge`, which judges the rest of the audit. Every shard must be ready (its stacks
//! checked) before the first setup begins, or its checks would write during a measurement.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The end of each slot: shard 1's audit of the slot's cell, and its restore and statement
/// reset for the next.
pub const SETUP: Duration = Duration::from_millis(1500);

/// Beyond the request timeout, for the last answers to arrive everywhere.
const DRAIN_MARGIN: Duration = Duration::from_millis(500);

/// What the length of a slot follows from.
#[allow(missing_docs)] // named for what they hold
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotTiming {
    /// The warm-up.
    pub warmup: Duration,
    pub window: Duration,
    /// The longest a request can take before it counts as an error.
    pub request_timeout: Duration,
}

impl SlotTiming {
    /// From a slot's start to its window's end: the engine's start, warm-up, window.
    fn until_window_end(&self) -> Duration {
        bookstore_client::engine::START_DELAY + self.warmup + self.window
    }

    /// Until every request sent in the window has its answer or its timeout.
    fn drain(&self) -> Duration {
        self.request_timeout + DRAIN_MARGIN
    }

    /// A whole slot.
    pub fn length(&self) -> Duration {
        self.until_window_end() + self.drain() + SETUP
    }
}

/// K of N, and when the first slot begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardPlan {
    /// K, from 1.
    pub index: u32,
    /// N.
    pub count: u32,
    /// The first slot's start, seconds since the Unix epoch.
    pub start_at_unix_seconds: u64,
}

impl ShardPlan {
    /// `K/N` (as given to `--shard`) and `--start-at`.
    pub fn parse(spec: &str, start_at_unix_seconds: u64) -> Result<Self, String> {
        let invalid = || format!("--shard {spec:?}: expected K/N, 1 ≤ K ≤ N (e.g. 1/2)");
        let (index, count) = spec.split_once('/').ok_or_else(invalid)?;
        let index: u32 = index.trim().parse().map_err(|_| invalid())?;
        let count: u32 = count.trim().parse().map_err(|_| invalid())?;
        if index == 0 || index > count {
            return Err(invalid());
        }
        Ok(Self { index, count, start_at_unix_seconds })
    }

    /// This shard's share of `concurrency` connections: an even split, the first shards
    /// taking one more where it does not divide, so the shares add up to `concurrency`.
    pub fn connections(&self, concurrency: u32) -> u32 {
        concurrency / self.count + u32::from(self.index <= concurrency % self.count)
    }

    /// Whether this shard restores, resets and reads the database (shard 1).
    pub fn coordinates(&self) -> bool {
        self.index == 1
    }

    /// When slot `slot` begins (the engine starts its connections).
    pub fn slot_start(&self, slot: u64, timing: SlotTiming) -> SystemTime {
        UNIX_EPOCH
            + Duration::from_secs(self.start_at_unix_seconds)
            + timing.length() * u32::try_from(slot).unwrap_or(u32::MAX)
    }

    /// When shard 1 restores and resets for slot `slot`: the setup before it (for slot 0,
    /// before `--start-at`). Every shard must be ready by this for slot 0.
    pub fn setup_start(&self, slot: u64, timing: SlotTiming) -> SystemTime {
        self.slot_start(slot, timing) - SETUP
    }

    /// When shard 1 may read the database after the slot: every shard's drain is over.
    pub fn drained(&self, slot: u64, timing: SlotTiming) -> SystemTime {
        self.slot_start(slot, timing) + timing.until_window_end() + timing.drain()
    }
}

/// The slot of a stack's window. Stacks take turns in rounds (each block of a scenario and
/// concurrency has its rounds; `turn` counts the rounds over the whole run), the order
/// rotating by one each round over *every* stack asked for — not only those that passed the
/// contract check here, which may differ between hosts — one slot per window.
pub fn slot(turn: u64, stack: usize, stacks: usize) -> u64 {
    let stacks = stacks.max(1) as u64;
    let position = (stack as u64 + stacks - turn % stacks) % stacks;
    turn * stacks + position
}

/// Seconds since the Unix epoch.
pub fn unix_seconds(time: SystemTime) -> f64 {
    time.duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// Sleeps until `time` unless `stop` is set first; how late it is now (zero when early).
pub fn wait_until(time: SystemTime, stop: &std::sync::atomic::AtomicBool) -> Duration {
    loop {
        let now = SystemTime::now();
        let Ok(left) = time.duration_since(now) else {
            return now.duration_since(time).unwrap_or_default();
        };
        if left.is_zero() || stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Duration::ZERO;
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_concurrency() {
        for count in 1..=5 {
            for concurrency in [count, 7, 128, 256, 257] {
                let total: u32 = (1..=count)
                    .map(|index| ShardPlan { index, count, start_at_unix_seconds: 0 })
                    .map(|plan| plan.connections(concurrency))
                    .sum();
                assert_eq!(total, concurrency, "{concurrency} over {count}");
            }
        }
        let second_of_three = ShardPlan { index: 2, count: 3, start_at_unix_seconds: 0 };
        assert_eq!(second_of_three.connections(128), 43); // 43 + 43 + 42
    }

    #[test]
    fn shard_specs_are_k_of_n() {
        assert_eq!(
            ShardPlan::parse("2/3", 100).unwrap(),
            ShardPlan { index: 2, count: 3, start_at_unix_seconds: 100 }
        );
        for bad in ["0/2", "3/2", "2", "a/b", "1/0"] {
            assert!(ShardPlan::parse(bad, 0).unwrap_err().contains("K/N"), "{bad}");
        }
    }

    #[test]
    fn every_window_of_a_run_has_its_own_slot_in_the_order_of_the_rounds() {
        // 3 stacks, 8 rounds: slots 0..24, each once, in running order.
        let stacks = 3;
        let mut seen = Vec::new();
        for turn in 0..8u64 {
            let mut order: Vec<usize> = (0..stacks).collect();
            order.rotate_left(turn as usize % stacks);
            for stack in order {
                seen.push(slot(turn, stack, stacks));
            }
        }
        assert_eq!(seen, (0..24).collect::<Vec<u64>>());
    }

    #[test]
    fn a_slot_holds_the_start_the_window_a_whole_request_timeout_and_the_setup() {
        let plan = ShardPlan { index: 1, count: 2, start_at_unix_seconds: 1_000 };
        let timing = SlotTiming {
            warmup: Duration::from_secs(1),
            window: Duration::from_secs(3),
            request_timeout: Duration::from_secs(2),
        };
        // 0.1 s start + 1 s warm-up + 3 s window + 2.5 s drain + 1.5 s setup.
        assert_eq!(timing.length(), Duration::from_millis(8_100));
        assert_eq!(unix_seconds(plan.slot_start(0, timing)), 1_000.0);
        assert_eq!(unix_seconds(plan.slot_start(2, timing)), 1_016.2);
        // A request sent at the window's last instant has its timeout before the audit…
        let window_end = 1_000.0 + 4.1;
        assert!(unix_seconds(plan.drained(0, timing)) >= window_end + 2.0);
        // …and the audit, restore and reset fit before the next slot, after the drain.
        assert_eq!(plan.drained(0, timing), plan.setup_start(1, timing));
        assert_eq!(unix_seconds(plan.setup_start(0, timing)), 998.5);
    }
}
