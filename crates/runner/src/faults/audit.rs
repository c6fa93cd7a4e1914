//! The write audit after a fault: the suite's audit of SPEC §5, with the acknowledgements
//! matched by checkout id instead of counted. Around a fault some checkouts end without a
//! success (503, cut off, timed out) and may still have committed, so rows = acknowledged
//! no longer holds; what must hold is that every acknowledged checkout is stored, and that
//! no more rows exist than such in-doubt requests could have written.

use bookstore_fixture::audit::{self, AuditFacts, Writes};

use bookstore_record::faults::FaultAudit;

/// How the stack's work in progress drained before the audit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drain {
    /// How long it took, ms.
    pub ms: f64,
    /// It had not drained at the limit.
    pub timed_out: bool,
}

/// Judges the stored checkouts (`stored` ids, `facts`) against the `acknowledged` ids and
/// the `in_doubt` checkouts that ended without a success.
pub fn judge(
    acknowledged: &[u128],
    stored: &[u128],
    in_doubt: u64,
    facts: &AuditFacts,
    drain: Drain,
) -> FaultAudit {
    let verdict = audit::judge_stored(Writes::Spread, facts);
    let mut failures = verdict.failures;
    let mut stored_sorted = stored.to_vec();
    stored_sorted.sort_unstable();
    let mut acknowledged_sorted = acknowledged.to_vec();
    acknowledged_sorted.sort_unstable();
    let twice = acknowledged_sorted.windows(2).filter(|pair| pair[0] == pair[1]).count();
    if twice > 0 {
        failures.push(format!("{twice} checkout id(s) acknowledged more than once"));
    }
    acknowledged_sorted.dedup();
    let lost: Vec<u128> = acknowledged_sorted
        .iter()
        .filter(|id| stored_sorted.binary_search(id).is_err())
        .copied()
        .collect();
    if !lost.is_empty() {
        failures.push(format!(
            "{} acknowledged checkout(s) not stored, first {}",
            lost.len(),
            uuid_text(lost[0])
        ));
    }
    let unacknowledged =
        stored_sorted.iter().filter(|id| acknowledged_sorted.binary_search(id).is_err()).count()
            as u64;
    if unacknowledged > in_doubt {
        failures.push(format!(
            "{unacknowledged} checkout rows were never acknowledged, but only {in_doubt} checkout(s) ended without an answer that could hide one"
        ));
    }
    if drain.timed_out {
        failures.push(format!(
            "the stack's transactions were still open {:.0} ms after the load",
            drain.ms
        ));
    }
    FaultAudit {
        passed: failures.is_empty(),
        acknowledged_checkouts: acknowledged.len() as u64,
        checkout_rows: facts.checkout_rows,
        lost_acknowledged: lost.len() as u64,
        unacknowledged_rows: unacknowledged,
        in_doubt_checkouts: in_doubt,
        negative_stock_books: verdict.negative_stock_books,
        stock_mismatches: verdict.stock_mismatches,
        failures,
        drained_ms: drain.ms,
        drain_timed_out: drain.timed_out,
    }
}

/// A checkout id as PostgreSQL writes it.
fn uuid_text(id: u128) -> String {
    let hex = format!("{id:032x}");
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use bookstore_fixture::seed;

    const DRAINED: Drain = Drain { ms: 3.0, timed_out: false };

    /// The seeded books after one copy of each of `books` was sold.
    fn facts_after(books: &[i64]) -> AuditFacts {
        let mut all: Vec<(i64, i32, i64)> = seed::books().map(|b| (b.id, b.stock, 0)).collect();
        for &id in books {
            let book = &mut all[(id - 1) as usize];
            book.1 -= 1;
            book.2 += 1;
        }
        AuditFacts { checkout_rows: books.len() as u64, books: all, hotspot_rows: 0 }
    }

    #[test]
    fn every_acknowledged_checkout_stored_passes_and_in_doubt_rows_are_allowed() {
        let facts = facts_after(&[3, 4, 5]);
        let audit = judge(&[1, 2], &[1, 2, 3], 1, &facts, DRAINED);
        assert!(audit.passed, "{:?}", audit.failures);
        assert_eq!((audit.lost_acknowledged, audit.unacknowledged_rows), (0, 1));
    }

    #[test]
    fn an_acknowledged_checkout_without_its_row_is_a_lost_write() {
        let facts = facts_after(&[3, 4]);
        let audit = judge(&[1, 2, 7], &[1, 2], 0, &facts, DRAINED);
        assert!(!audit.passed);
        assert_eq!(audit.lost_acknowledged, 1);
        assert!(
            audit.failures[0].contains("1 acknowledged checkout(s) not stored"),
            "{:?}",
            audit.failures
        );
        assert!(audit.failures[0].contains("00000000-0000-0000-0000-000000000007"));
    }

    #[test]
    fn more_unacknowledged_rows_than_in_doubt_requests_fail() {
        let facts = facts_after(&[3, 4, 5]);
        let audit = judge(&[1], &[1, 2, 3], 1, &facts, DRAINED);
        assert!(!audit.passed);
        assert!(audit.failures[0].contains("2 checkout rows were never acknowledged"));
    }

    #[test]
    fn a_stock_out_of_line_with_the_rows_fails_whatever_the_ids() {
        let mut facts = facts_after(&[3]);
        facts.books[3].1 -= 1; // book 4 lost a copy without a row
        let audit = judge(&[1], &[1], 0, &facts, DRAINED);
        assert!(!audit.passed);
        assert_eq!(audit.stock_mismatches, 1);
    }

    #[test]
    fn work_still_open_after_the_drain_limit_fails_the_audit() {
        let facts = facts_after(&[]);
        let audit = judge(&[], &[], 0, &facts, Drain { ms: 30_000.0, timed_out: true });
        assert!(!audit.passed);
        assert!(audit.drain_timed_out);
    }
}
