//! `Puzzle`: a verifiable question with a token answer, and `SingleTurn`,
//! which runs any puzzle as a [`Task`] that takes the answer one token per step.
//!
//! A puzzle only generates instances, shows them and judges answers. The
//! verifier is asked about every prefix of the answer as it grows: a
//! prefix's credit is the fraction of the whole answer already right, and
//! each step is paid the credit it added, so a puzzle that can judge
//! positions (a digit, a jigsaw slot) gives dense, per-token rewards and one
//! that can only judge whole answers pays at the end. The last token also
//! earns [`EXACT_BONUS`] if the answer is exactly right; a token that makes
//! the answer malformed costs [`FORMAT_PENALTY`] and ends the episode.
//!
//! With `max_turns` > 1 (UFO's "try again"), a complete answer that is not
//! exactly right is answered only by another turn: the observation then
//! shows the wrong answers so far, the credit is counted again from zero,
//! and every reward of turn `k` (from 0) is scaled by `turn_decay^k`.

use crate::visuals;
use proprio_core::serde_json::{self, Map, Value};
use proprio_core::{EnvRng, Error, Info, Outcome, ResetOptions, Result, Scene, Space, Task};
use serde::de::{DeserializeOwned, Error as _};
use serde::ser::Error as _;
use serde::{Deserialize, Serialize};

/// Paid with the last token when the answer is exactly right.
pub const EXACT_BONUS: f64 = 1.0;
/// Charged for a token that makes the answer malformed (which ends the episode).
pub const FORMAT_PENALTY: f64 = 1.0;

/// A verifier's judgement of an answer or a prefix of one.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Well-formed so far; `credit` in `[0, 1]` is the fraction of the whole answer that is right.
    Scored {
        /// Fraction of the whole answer that is right.
        credit: f64,
        /// The (complete) answer is exactly right.
        exact: bool,
    },
    /// Not a valid answer, and why.
    Malformed(String),
}

impl Verdict {
    /// Writes `success`, `credit` and `format_error` into `info`.
    pub fn report(&self, info: &mut Info) {
        let (credit, exact, malformed) = match self {
            Self::Scored { credit, exact } => (*credit, *exact, false),
            Self::Malformed(_) => (0.0, false, true),
        };
        info.set("success", f64::from(u8::from(exact)));
        info.set("credit", credit);
        info.set("format_error", f64::from(u8::from(malformed)));
    }
}

/// A verifiable single-answer task: everything a new language or vision task has to say.
pub trait Puzzle: Send + Sized + 'static {
    /// Serde config with defaults (difficulty); unknown keys are rejected.
    type Config: Serialize + DeserializeOwned + Default + Clone + Send + Sync;
    /// One instance (what is asked and its solution), saved in snapshots.
    type Instance: Serialize + DeserializeOwned + Clone + Send;

    /// Builds the puzzle; a config it cannot use is an `Err` with the reason.
    fn new(config: &Self::Config) -> std::result::Result<Self, String>;
    /// What the question looks like.
    fn prompt_space(&self) -> Space;
    /// The answer's vocabulary (ids `0 .. vocab`, 0 being padding) and its length in tokens.
    fn answer_space(&self) -> (u32, usize);
    /// Draws an instance from the env's stream.
    fn generate(&self, rng: &mut EnvRng) -> Self::Instance;
    /// Writes the question of `instance`.
    fn prompt(&self, instance: &Self::Instance, obs: &mut [f32]);
    /// Judges `answer`, a prefix of at most the answer's length (ids in the vocabulary).
    fn verify(&self, instance: &Self::Instance, answer: &[u32]) -> Verdict;
    /// Rejects an instance (from a snapshot) this puzzle could not have drawn.
    fn check(&self, instance: &Self::Instance) -> std::result::Result<(), String>;
    /// Draws `instance` and the answer so far into `scene` (already cleared),
    /// for viewers. The default shows the answer's tokens as cards.
    fn scene(&self, instance: &Self::Instance, answer: &[u32], scene: &mut Scene) {
        let _ = instance;
        let (_, len) = self.answer_space();
        let cards = (0..len).map(|k| match answer.get(k) {
            Some(&t) => (Some(visuals::token_char(t)), visuals::PLAIN),
            None => (None, visuals::BLANK),
        });
        visuals::glyph_row(scene, 0.5, cards);
        scene.text.push(format!("answer so far: {answer:?}"));
        visuals::frame_board(scene, 0.6, len as f32 * 0.2);
    }
}

/// The snapshot state of a [`SingleTurn`] task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Turn<I> {
    /// The instance being asked.
    pub instance: I,
    /// The answer's tokens so far.
    pub answer: Vec<u32>,
    /// Credit of the answer so far.
    pub credit: f64,
    /// The complete answers already given and found wrong ("try again").
    #[serde(default)]
    pub attempts: Vec<Vec<u32>>,
}

/// A puzzle's config, and how many answers an episode allows (one JSON
/// object: the puzzle's keys beside `max_turns`, `turn_decay` and `try_again`).
#[derive(Debug, Clone, PartialEq)]
pub struct TurnsConfig<C> {
    /// The puzzle's own keys.
    pub puzzle: C,
    /// Answers an episode allows (1–16): after a wrong one the env only asks
    /// for another (UFO's "try again"); 1 is the single-turn task.
    pub max_turns: usize,
    /// Scale of every reward of a later turn, per turn (0–1).
    pub turn_decay: f64,
    /// A wrong answer gets another turn; `false` ends the episode at the
    /// first answer while the observation keeps `max_turns`' layout (the
    /// single-turn training a "try again" evaluation is compared with).
    pub try_again: bool,
}

fn one_turn() -> usize {
    1
}

fn half() -> f64 {
    0.5
}

impl<C: Serialize> Serialize for TurnsConfig<C> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut keys = match serde_json::to_value(&self.puzzle).map_err(S::Error::custom)? {
            Value::Object(keys) => keys,
            _ => Map::new(),
        };
        keys.insert("max_turns".into(), Value::from(self.max_turns));
        keys.insert("turn_decay".into(), Value::from(self.turn_decay));
        keys.insert("try_again".into(), Value::from(self.try_again));
        keys.serialize(s)
    }
}

/// Reads the three keys of its own and gives the rest to the puzzle's config,
/// which rejects keys it does not know (serde's `flatten` would hide them).
impl<'de, C: DeserializeOwned> Deserialize<'de> for TurnsConfig<C> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let mut keys = match Option::<Map<String, Value>>::deserialize(d)? {
            Some(keys) => keys,
            None => Map::new(),
        };
        let mut take = |key: &str| keys.remove(key).filter(|v| !v.is_null());
        let max_turns = match take("max_turns") {
            Some(v) => usize::deserialize(v).map_err(D::Error::custom)?,
            None => one_turn(),
        };
        let turn_decay = match take("turn_decay") {
            Some(v) => f64::deserialize(v).map_err(D::Error::custom)?,
            None => half(),
        };
        let try_again = match take("try_again") {
            Some(v) => bool::deserialize(v).map_err(D::Error::custom)?,
            None => true,
        };
        let puzzle = C::deserialize(Value::Object(keys)).map_err(D::Error::custom)?;
        Ok(Self {
            puzzle,
            max_turns,
            turn_decay,
            try_again,
        })
    }
}

impl<C: Default> Default for TurnsConfig<C> {
    fn default() -> Self {
        Self {
            puzzle: C::default(),
            max_turns: one_turn(),
            turn_decay: half(),
            try_again: true,
        }
    }
}

/// Runs a [`Puzzle`] as a [`Task`]: reset draws an instance, every step adds one answer token.
///
/// Observation: `Dict { prompt, answer }`, the puzzle's prompt then the answer
/// so far (padded with 0); with `max_turns` > 1, `Dict { prompt, attempts,
/// answer }`, the wrong answers so far in between. Action: one token,
/// `Tokens { vocab, max_len: 1 }`.
pub struct SingleTurn<P: Puzzle> {
    puzzle: P,
    turn: Option<Turn<P::Instance>>,
    prompt: Vec<f32>,
    max_turns: usize,
    turn_decay: f64,
    try_again: bool,
}

impl<P: Puzzle> SingleTurn<P> {
    /// The puzzle inside.
    pub fn puzzle(&self) -> &P {
        &self.puzzle
    }

    fn answer_len(&self) -> usize {
        self.puzzle.answer_space().1
    }

    fn show(&mut self) {
        self.prompt.fill(0.0);
        if let Some(turn) = &self.turn {
            self.puzzle.prompt(&turn.instance, &mut self.prompt);
        }
    }
}

impl<P: Puzzle> Task for SingleTurn<P> {
    type Config = TurnsConfig<P::Config>;
    type State = Option<Turn<P::Instance>>;

    fn new(config: &Self::Config) -> std::result::Result<Self, String> {
        let puzzle = P::new(&config.puzzle)?;
        let (vocab, len) = puzzle.answer_space();
        if vocab < 2 || len == 0 {
            return Err(format!(
                "an answer needs a vocabulary of at least 2 and at least one token, got {vocab} and {len}"
            ));
        }
        if !(1..=16).contains(&config.max_turns) || !(0.0..=1.0).contains(&config.turn_decay) {
            return Err(format!(
                "max_turns must be 1 to 16 and turn_decay 0 to 1, got {} and {}",
                config.max_turns, config.turn_decay
            ));
        }
        Ok(Self {
            prompt: vec![0.0; puzzle.prompt_space().flat_dim()],
            puzzle,
            turn: None,
            max_turns: config.max_turns,
            turn_decay: config.turn_decay,
            try_again: config.try_again,
        })
    }

    fn observation_space(&self) -> Space {
        let (vocab, max_len) = self.puzzle.answer_space();
        let mut spaces = vec![("prompt".into(), self.puzzle.prompt_space())];
        if self.max_turns > 1 {
            let max_len = (self.max_turns - 1) * max_len;
            spaces.push(("attempts".into(), Space::Tokens { vocab, max_len }));
        }
        spaces.push(("answer".into(), Space::Tokens { vocab, max_len }));
        Space::Dict { spaces }
    }

    fn action_space(&self) -> Space {
        let (vocab, _) = self.puzzle.answer_space();
        Space::Tokens { vocab, max_len: 1 }
    }

    fn reset(&mut self, rng: &mut EnvRng, options: ResetOptions, _info: &mut Info) -> Result<()> {
        proprio_core::family::no_reset_options("language", "", options)?;
        let len = self.answer_len();
        self.turn = Some(Turn {
            instance: self.puzzle.generate(rng),
            answer: Vec::with_capacity(len),
            credit: 0.0,
            attempts: Vec::new(),
        });
        self.show();
        Ok(())
    }

    fn observe(&self, obs: &mut [f32]) {
        let (prompt, rest) = obs.split_at_mut(self.prompt.len());
        prompt.copy_from_slice(&self.prompt);
        rest.fill(0.0);
        if let Some(turn) = &self.turn {
            let (attempts, answer) = rest.split_at_mut(rest.len() - self.answer_len());
            let said = turn.attempts.iter().flatten();
            for (o, &t) in attempts.iter_mut().zip(said) {
                *o = t as f32;
            }
            for (o, &t) in answer.iter_mut().zip(&turn.answer) {
                *o = t as f32;
            }
        }
    }

    fn step(&mut self, action: &[f32], _rng: &mut EnvRng, info: &mut Info) -> Outcome {
        let len = self.answer_len();
        let Some(turn) = &mut self.turn else {
            Verdict::Malformed("no instance was drawn".into()).report(info);
            return Outcome {
                reward: -FORMAT_PENALTY,
                terminated: true,
            };
        };
        // The action passed `Space::check`: one whole number in the vocabulary.
        turn.answer.push(action[0] as u32);
        let verdict = self.puzzle.verify(&turn.instance, &turn.answer);
        let complete = turn.answer.len() >= len;
        let scale = self.turn_decay.powi(turn.attempts.len() as i32);
        let (exact, malformed) = match &verdict {
            Verdict::Scored { exact, .. } => (*exact && complete, false),
            Verdict::Malformed(_) => (false, true),
        };
        let reward = match &verdict {
            Verdict::Malformed(_) => -FORMAT_PENALTY,
            Verdict::Scored { credit, .. } => {
                let gained = credit - turn.credit;
                turn.credit = *credit;
                scale * (gained + if exact { EXACT_BONUS } else { 0.0 })
            }
        };
        info.set("turn_end", f64::from(u8::from(complete || malformed)));
        if !(complete || malformed) {
            return Outcome {
                reward,
                terminated: false,
            };
        }
        verdict.report(info);
        let repeated = !exact && turn.attempts.contains(&turn.answer);
        let wrong = turn.attempts.len() + usize::from(!exact && !malformed);
        let repeats = crate::transcript::repeats(&turn.attempts) + usize::from(repeated);
        info.set("turns", (turn.attempts.len() + 1) as f64);
        info.set("wrong_answers", wrong as f64);
        info.set("repeated_answers", repeats as f64);
        let again =
            self.try_again && !exact && !malformed && turn.attempts.len() + 1 < self.max_turns;
        if again {
            turn.attempts.push(std::mem::take(&mut turn.answer));
            turn.credit = 0.0;
        }
        Outcome {
            reward,
            terminated: !again,
        }
    }

    fn state(&self) -> Self::State {
        self.turn.clone()
    }

    fn set_state(&mut self, state: Self::State) -> Result<()> {
        if let Some(turn) = &state {
            self.puzzle.check(&turn.instance).map_err(Error::State)?;
            let (vocab, len) = self.puzzle.answer_space();
            if turn.answer.len() > len || turn.answer.iter().any(|&t| t >= vocab) {
                return Err(Error::State(format!(
                    "an answer of {} tokens (at most {len}, ids below {vocab}): {:?}",
                    turn.answer.len(),
                    turn.answer
                )));
            }
            let whole = |a: &Vec<u32>| a.len() == len && a.iter().all(|&t| t < vocab);
            if turn.attempts.len() >= self.max_turns || !turn.attempts.iter().all(whole) {
                return Err(Error::State(format!(
                    "{} earlier answers (fewer than {} turns, each {len} tokens below {vocab})",
                    turn.attempts.len(),
                    self.max_turns
                )));
            }
        }
        self.turn = state;
        self.show();
        Ok(())
    }

    fn scene(&self, scene: &mut Scene) {
        if let Some(turn) = &self.turn {
            self.puzzle.scene(&turn.instance, &turn.answer, scene);
            if !turn.attempts.is_empty() {
                scene
                    .text
                    .push(format!("try again after {:?}", turn.attempts));
            }
        }
    }
}
