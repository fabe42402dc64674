//! # proprio-language
//!
//! Language and vision tasks with verifiable rewards, on the same [`Env`]
//! trait as the physics envs, so one trainer serves both:
//!
//! - `language/jigsaw-v0`: a shuffled picture (image observation); the answer
//!   is the permutation, one token per piece.
//! - `language/arithmetic-v0`: `a + b` or `a × b` written as tokens; the
//!   answer is the result's digits, one per step, each rewarded.
//! - `language/guess-number-v0`: a multi-turn game with higher/lower feedback.
//! - `language/twenty-questions-v0`: a multi-turn game of yes/no questions
//!   about a hidden object, then its name (with an exact solver).
//!
//! Instances are drawn from the env's seeded stream and difficulty is a
//! config key. Answers are [`Space::Tokens`] actions, one token per step, and
//! the observation shows the question and the answer so far; every token is
//! paid the credit it adds, so a verifier that judges positions gives dense
//! rewards. A malformed answer earns a defined format penalty, never an
//! error or a panic. A new single-answer task is a [`Puzzle`]: its generator
//! and verifier.
//!
//! [`Env`]: proprio_core::Env
//! [`Space::Tokens`]: proprio_core::Space::Tokens

pub mod arithmetic;
pub mod entries;
pub mod guess;
pub mod jigsaw;
pub mod picture;
mod puzzle;
pub mod questions;
mod transcript;
pub mod visuals;
pub mod vocab;

pub use arithmetic::{Arithmetic, ArithmeticConfig, DigitOrder, Operation};
pub use guess::{GuessConfig, GuessNumber};
pub use jigsaw::{Jigsaw, JigsawConfig};
pub use puzzle::{EXACT_BONUS, FORMAT_PENALTY, Puzzle, SingleTurn, Turn, TurnsConfig, Verdict};
pub use questions::{QuestionsConfig, Scripted, TwentyQuestions};

/// Smallest and largest reward of one answer token: the penalty, or a token's
/// whole credit (1 for a one-token answer) plus the exact bonus.
pub const REWARD_RANGE: (f64, f64) = (-FORMAT_PENALTY, 1.0 + EXACT_BONUS);

use proprio_core::{EnvSpec, Registry, Teleop};

/// Registers `language/jigsaw-v0`, `language/arithmetic-v0`,
/// `language/guess-number-v0` and `language/twenty-questions-v0` (with its solver).
pub fn register(registry: &mut Registry) {
    registry.register_task::<SingleTurn<Jigsaw>>(entries::JIGSAW);
    registry.register_task::<SingleTurn<Arithmetic>>(entries::ARITHMETIC);
    registry.register_task::<GuessNumber>(entries::GUESS_NUMBER);
    registry.register_task::<TwentyQuestions>(entries::TWENTY_QUESTIONS);
    // Answers are numbers: a typed digit d is the token d + 1.
    for id in [entries::ARITHMETIC.id, entries::GUESS_NUMBER.id] {
        let digits = |_: &EnvSpec| {
            Ok(Teleop {
                token_offset: 1,
                ..Teleop::default()
            })
        };
        let _ = registry.register_teleop(id, Box::new(digits));
    }
    // Registered just above, so the id is known.
    let _ = registry.register_scripted(entries::TWENTY_QUESTIONS.id, Box::new(Scripted::for_spec));
}
