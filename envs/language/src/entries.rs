//! The language tasks' registry entries: what each says of its reward and its end.

use proprio_core::EnvEntry;

/// `language/jigsaw-v0`.
pub const JIGSAW: EnvEntry = EnvEntry {
    id: "language/jigsaw-v0",
    description: "Put a shuffled R x C jigsaw back together: for each piece shown, name the slot it belongs in.",
    reward_range: crate::REWARD_RANGE,
    max_episode_steps: None,
    physics_steps_per_step: 1,
    reward: "1/(R*C) for every piece sent to its own slot, +1 with the last token when all are; -1 for a token that names no slot (padding), which ends the episode",
    termination: "terminated after R*C tokens, or a malformed one",
    action_handling: "tokens: one per step; the j-th is 1 + the row-major slot of the piece shown at position j",
};

/// `language/arithmetic-v0`.
pub const ARITHMETIC: EnvEntry = EnvEntry {
    id: "language/arithmetic-v0",
    description: "Add or multiply two k-digit numbers; answer with the result's digits.",
    reward_range: crate::REWARD_RANGE,
    max_episode_steps: None,
    physics_steps_per_step: 1,
    reward: "1/answer_len for every right digit, +1 with the last digit when all are right; -1 for a token that is not a digit (which ends the episode)",
    termination: "terminated after answer_len digits (k+1 for a sum, 2k for a product) or a malformed token",
    action_handling: "tokens: one token per step, the next digit of the result (most significant first, or least with order = least_significant_first), zero-padded",
};

/// `language/guess-number-v0`.
pub const GUESS_NUMBER: EnvEntry = EnvEntry {
    id: "language/guess-number-v0",
    description: "Find a secret number in 0..=max by guessing; each turn the env answers higher, lower or correct.",
    reward_range: (-1.0, 1.0),
    max_episode_steps: None,
    physics_steps_per_step: 1,
    reward: "-turn_cost per guess, +1 for the correct guess; a malformed guess also costs format_penalty",
    termination: "terminated on the correct guess or after max_turns guesses",
    action_handling: "tokens: the guess as exactly `digits` digit tokens, zero-padded; anything else is a malformed guess (feedback INVALID)",
};

/// `language/twenty-questions-v0`.
pub const TWENTY_QUESTIONS: EnvEntry = EnvEntry {
    id: "language/twenty-questions-v0",
    description: "Find a hidden object of a catalogue by asking yes/no questions about it, then name it; one token per turn.",
    reward_range: (-1.0, 1.0),
    max_episode_steps: None,
    physics_steps_per_step: 1,
    reward: "-turn_cost per turn, +1 for naming the object; a token that is neither question nor name also costs format_penalty",
    termination: "terminated on the right name, on a wrong one (unless try_again), or after max_turns turns",
    action_handling: "tokens: one per turn — a question (1..=10) or a name (11..=30); anything else is invalid (feedback INVALID)",
};
