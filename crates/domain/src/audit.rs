//! The write audit's rule that needs no database (SPEC §5): the checkout rows are exactly
//! the checkouts acknowledged to the clients. Here so that the audit after a window
//! (`bookstore-fixture`) and the merge of several clients' shards (`bookstore-record`),
//! which adds their acknowledgements up, word its failure alike.

/// The failure when the checkout rows are not exactly the checkouts acknowledged to the
/// clients: work lost (fewer rows) or done twice or without telling (more rows).
pub fn unacknowledged(checkout_rows: u64, acknowledged: u64) -> Option<String> {
    (checkout_rows != acknowledged).then(|| {
        format!(
            "{checkout_rows} checkout rows but {acknowledged} successful checkouts acknowledged to the client"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_equal_to_the_acknowledgements_pass_and_any_other_count_names_both() {
        assert_eq!(unacknowledged(2, 2), None);
        assert_eq!(
            unacknowledged(0, 250).as_deref(),
            Some("0 checkout rows but 250 successful checkouts acknowledged to the client")
        );
    }
}
