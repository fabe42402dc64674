//! What the multi-turn games share: the bounds of their costs, the check
//! of a transcript restored from a snapshot, and UFO's count of repeats.

/// `turn_cost` and `format_penalty` within [0, 0.5], so every reward stays in [−1, 1].
pub(crate) fn check_costs(turn_cost: f64, format_penalty: f64) -> Result<(), String> {
    let cost = 0.0..=0.5;
    if cost.contains(&turn_cost) && cost.contains(&format_penalty) {
        return Ok(());
    }
    Err(format!(
        "turn_cost and format_penalty must lie in [0, 0.5] (rewards stay in [-1, 1]), got {turn_cost} and {format_penalty}"
    ))
}

/// Whether a restored transcript fits the game: `turns` of at most
/// `max_turns`, `len` tokens in all, every one below `vocab`.
pub(crate) fn fits(
    transcript: &[u32],
    turns: usize,
    max_turns: usize,
    len: usize,
    vocab: u32,
) -> bool {
    turns <= max_turns && transcript.len() == len && transcript.iter().all(|&t| t < vocab)
}

/// Items equal to an earlier one (answers said again after being found wrong).
pub(crate) fn repeats<T: PartialEq>(items: &[T]) -> usize {
    (0..items.len())
        .filter(|&k| items[..k].contains(&items[k]))
        .count()
}
