//! What the multi-turn games share: the bounds of their costs, a turn's
//! reward and `info`, the check of a transcript restored from a snapshot,
//! and UFO's count of repeats.

use proprio_core::{Error, Info, ResetOptions, Result};

/// `turn_cost` and `format_penalty` within [0, 0.5], so every reward stays in [−1, 1].
pub(crate) fn check_costs(turn_cost: f64, format_penalty: f64) -> std::result::Result<(), String> {
    let cost = 0.0..=0.5;
    if cost.contains(&turn_cost) && cost.contains(&format_penalty) {
        return Ok(());
    }
    Err(format!(
        "turn_cost and format_penalty must lie in [0, 0.5] (rewards stay in [-1, 1]), got {turn_cost} and {format_penalty}"
    ))
}

/// A turn's reward under `[turn_cost, format_penalty]` (+1 when `correct`),
/// and the `info` every multi-turn game reports after `turns` turns.
pub(crate) fn settle(
    info: &mut Info,
    [turn_cost, format_penalty]: [f64; 2],
    correct: bool,
    invalid: bool,
    turns: usize,
) -> f64 {
    let mut reward = -turn_cost;
    if invalid {
        reward -= format_penalty;
    }
    if correct {
        reward += 1.0;
    }
    info.set("success", f64::from(u8::from(correct)));
    info.set("format_error", f64::from(u8::from(invalid)));
    // Every step is a whole turn.
    info.set("turn_end", 1.0);
    info.set("turns", turns as f64);
    reward
}

/// Starts a new game: no turns, an all-padding transcript (the games take no reset options).
pub(crate) fn restart(
    options: ResetOptions,
    turns: &mut usize,
    transcript: &mut [u32],
) -> Result<()> {
    proprio_core::family::no_reset_options("language", "", options)?;
    *turns = 0;
    transcript.fill(crate::vocab::PAD);
    Ok(())
}

/// Writes the transcript as the observation.
pub(crate) fn observe(transcript: &[u32], obs: &mut [f32]) {
    for (o, &t) in obs.iter_mut().zip(transcript) {
        *o = t as f32;
    }
}

/// Refuses a restored game unless its answer is valid (`answer_ok`; `answer`
/// describes it) and its `transcript` fits: `turns` of at most `max_turns`,
/// `len` tokens in all, every one below `vocab`.
pub(crate) fn check_restored(
    (transcript, turns): (&[u32], usize),
    (len, max_turns, vocab): (usize, usize, u32),
    answer_ok: bool,
    answer: String,
) -> Result<()> {
    let fits =
        turns <= max_turns && transcript.len() == len && transcript.iter().all(|&t| t < vocab);
    if answer_ok && fits {
        return Ok(());
    }
    Err(Error::State(format!(
        "not a game of this config ({answer}, {turns} turns of at most {max_turns}, transcript of {} tokens)",
        transcript.len()
    )))
}

/// Items equal to an earlier one (answers said again after being found wrong).
pub(crate) fn repeats<T: PartialEq>(items: &[T]) -> usize {
    (0..items.len())
        .filter(|&k| items[..k].contains(&items[k]))
        .count()
}
