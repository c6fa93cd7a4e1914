//! The order things are measured in, round after round: each first, in the middle and last
//! equally often, so that the machine's drift within a round falls on all of them alike.

/// `items` rotated left by `by` (modulo their number).
pub fn rotated_by<T: Clone>(items: &[T], by: usize) -> Vec<T> {
    let mut order = items.to_vec();
    if !order.is_empty() {
        let len = order.len();
        order.rotate_left(by % len);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_item_leads_once_in_as_many_turns_as_there_are_items() {
        let leads: Vec<char> = (0..3).map(|turn| rotated_by(&['a', 'b', 'c'], turn)[0]).collect();
        assert_eq!(leads, ['a', 'b', 'c']);
        assert_eq!(rotated_by(&['a', 'b', 'c'], 4), ['b', 'c', 'a']);
        assert!(rotated_by::<u8>(&[], 3).is_empty());
    }
}
