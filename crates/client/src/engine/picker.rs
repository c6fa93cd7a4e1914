//! Which pre-built request a connection sends next (SPEC §4: fixed, uniform random from a
//! seeded generator, or cycling in order).

use bookstore_fixture::random::SplitMix64;

/// Seed of the random pickers: the same ids in every run and for every stack.
pub const PICK_SEED: u64 = 0x5EED_B00C;

/// The next request index of one connection.
#[derive(Debug, Clone)]
pub enum Picker {
    /// Always the same request.
    Fixed(usize),
    /// Uniform over `0..len`, from a seeded generator (reproducible per connection).
    Random {
        /// Generator state.
        rng: SplitMix64,
        /// Number of requests.
        len: usize,
    },
    /// `start`, `start + step`, … modulo `len`: connections that cycle with the same `step`
    /// and different starts cover every request in turn without sharing a counter.
    Cycle {
        /// Next index.
        next: usize,
        /// Distance between picks.
        step: usize,
        /// Number of requests.
        len: usize,
    },
    /// Another picker's picks moved up by `by`: a scenario's requests at their place in a
    /// mix of several scenarios.
    Shifted {
        /// The scenario's own picker.
        inner: Box<Picker>,
        /// Where the scenario's requests start in the mix.
        by: usize,
    },
}

impl Picker {
    /// Uniform over `0..len`, seeded from `seed` and the connection `index`.
    pub fn random(seed: u64, index: usize, len: usize) -> Self {
        Picker::Random {
            rng: SplitMix64::new(seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            len,
        }
    }

    /// Connection `index` of `connections` takes every `connections`-th request from `index`.
    pub fn cycle(index: usize, connections: usize, len: usize) -> Self {
        Picker::Cycle { next: index % len, step: connections.max(1), len }
    }

    /// The next index.
    #[inline]
    pub fn pick(&mut self) -> usize {
        match self {
            Picker::Fixed(index) => *index,
            Picker::Random { rng, len } => rng.below(*len),
            Picker::Cycle { next, step, len } => {
                let pick = *next;
                *next = (*next + *step) % *len;
                pick
            }
            Picker::Shifted { inner, by } => *by + inner.pick(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_sequence_and_another_a_different_one() {
        let take = |mut picker: Picker| (0..100).map(|_| picker.pick()).collect::<Vec<_>>();
        assert_eq!(take(Picker::random(7, 3, 20_000)), take(Picker::random(7, 3, 20_000)));
        assert_ne!(take(Picker::random(7, 3, 20_000)), take(Picker::random(7, 4, 20_000)));
    }

    #[test]
    fn random_picks_stay_in_range_and_cover_it_evenly() {
        let mut picker = Picker::random(42, 0, 10);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            counts[picker.pick()] += 1;
        }
        assert!(counts.iter().all(|&c| (9_000..11_000).contains(&c)), "{counts:?}");
    }

    #[test]
    fn cycling_connections_together_cover_every_request_in_order() {
        let connections = 3;
        let mut pickers: Vec<_> =
            (0..connections).map(|i| Picker::cycle(i, connections, 10)).collect();
        let mut seen = Vec::new();
        for _ in 0..4 {
            for picker in &mut pickers {
                seen.push(picker.pick());
            }
        }
        assert_eq!(&seen[..10], &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(&seen[10..], &[0, 1], "and wrap around");
    }
}
