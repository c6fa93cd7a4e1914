//! What every section of the page shares: numbers as the page writes them, the names and
//! colours of the things compared, and [`Keyed`], a comparison group whose members are
//! known by their key (an access style, a library) rather than by a name or a position.

use std::collections::BTreeMap;

use bookstore_report::charts;
use bookstore_stats::{Comparison, Group, Summary};

use crate::crud::Op;
use crate::dimensions::{Database, Library};
use crate::measure::Access;

/// Values of one cell, by round.
pub(super) type Rounds = BTreeMap<u32, f64>;

/// The values of `rounds`, in round order.
pub(super) fn values(rounds: &Rounds) -> Vec<f64> {
    rounds.values().copied().collect()
}

/// A rate: whole with thousands separators from 100 up, one decimal below.
pub(super) fn rate(value: f64) -> String {
    if value >= 100.0 {
        let text = (value.round() as u64).to_string();
        let mut out = String::new();
        for (i, c) in text.chars().enumerate() {
            if i > 0 && (text.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    } else {
        format!("{value:.1}")
    }
}

/// A count, with thousands separators.
pub(super) fn count(value: usize) -> String {
    rate(value as f64).trim_end_matches(".0").to_owned()
}

/// "12,345" or "12,345 (11,900–12,800)" over the rounds.
pub(super) fn rate_range(rounds: &Rounds) -> String {
    match Summary::of(&values(rounds)) {
        Some(s) if s.n > 1 => format!("{} ({}–{})", rate(s.median), rate(s.min), rate(s.max)),
        Some(s) => rate(s.median),
        None => "–".into(),
    }
}

/// A comparison as the page writes it: the ratio and its interval, or that it cannot tell.
pub(super) fn comparison(c: Option<Comparison>) -> Option<String> {
    c.map(|c| c.text())
}

/// An access style's name on the page.
pub(super) fn access_label(access: Access) -> &'static str {
    match access {
        Access::SqlxTasks => "sqlx · tokio tasks",
        Access::DieselSpawnBlocking => "diesel · spawn_blocking",
        Access::DieselThreads => "diesel · OS threads",
    }
}

/// An access style's series in a chart: its colour, and its bar's place in a group.
pub(super) fn access_series(access: Access) -> usize {
    match access {
        Access::SqlxTasks => 0,
        Access::DieselSpawnBlocking => 1,
        Access::DieselThreads => 2,
    }
}

/// An access style's colour, in the legend and the charts.
pub(super) fn access_colour(access: Access) -> String {
    charts::series_colour(access_series(access))
}

/// A library's colour: the colour of the access style it is the async or the blocking side
/// of.
pub(super) fn library_colour(library: Library) -> String {
    charts::series_colour(match library {
        Library::Sqlx => access_series(Access::SqlxTasks),
        Library::Diesel => access_series(Access::DieselThreads),
    })
}

/// An operation's name on the page; the join measured without its index says so.
pub(super) fn op_label(op: Op, join_index: bool) -> String {
    match (op, join_index) {
        (Op::Join, false) => "join (no index on orders.user_id)".to_owned(),
        (op, _) => op.name().replace('_', " "),
    }
}

/// The databases that have cells, in their order.
pub(super) fn databases_of<'a>(cells: impl Iterator<Item = &'a Database>) -> Vec<Database> {
    let mut found: Vec<Database> = cells.copied().collect();
    found.sort();
    found.dedup();
    found
}

/// Members measured side by side in rounds, compared round by round as one [`Group`] (all
/// pairs one family), each known by its key.
pub(super) struct Keyed<K> {
    group: Group,
    keys: Vec<K>,
}

impl<K: Copy + PartialEq> Keyed<K> {
    /// The group of `members`: each a key, its name on the page and its rounds.
    pub(super) fn paired(members: Vec<(K, String, Rounds)>) -> Self {
        let (keys, named): (Vec<K>, Vec<(String, Rounds)>) =
            members.into_iter().map(|(key, name, rounds)| (key, (name, rounds))).unzip();
        Self { group: Group::paired(&named), keys }
    }

    /// The member faster than every other, when the method can tell.
    pub(super) fn best(&self) -> Option<K> {
        let ranking = self.group.ranking();
        ranking.order.first().filter(|_| ranking.best).map(|&i| self.keys[i])
    }

    /// The first member's name and that of every member the method cannot tell apart from
    /// it, and whether the first is best (faster than every other).
    pub(super) fn leaders(&self) -> Leaders {
        let ranking = self.group.ranking();
        let names = ranking.leaders.iter().map(|&i| self.group.names()[i].clone()).collect();
        Leaders { names, best: ranking.best }
    }

    /// `b` against `a`.
    pub(super) fn compare(&self, a: K, b: K) -> Option<Comparison> {
        let name = |key: K| {
            let i = self.keys.iter().position(|k| *k == key)?;
            Some(self.group.names()[i].as_str())
        };
        self.group.compare(name(a)?, name(b)?)
    }
}

/// Who leads a group: `templates/cells.html` writes them as "best: …", "… (no comparison)"
/// or "not distinguishable: …".
#[derive(Debug, serde::Serialize)]
pub(super) struct Leaders {
    /// The first, and every member the method cannot tell apart from it.
    pub(super) names: Vec<String>,
    /// The first is faster than every other member.
    pub(super) best: bool,
}
