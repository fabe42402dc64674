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

use crate::visuals;
use proprio_core::{EnvRng, Error, Info, Outcome, ResetOptions, Result, Scene, Space, Task};
use serde::{Deserialize, Serialize, de::DeserializeOwned};

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
}

/// Runs a [`Puzzle`] as a [`Task`]: reset draws an instance, every step adds one answer token.
///
/// Observation: `Dict { prompt, answer }`, the puzzle's prompt then the answer
/// so far (padded with 0). Action: one token, `Tokens { vocab, max_len: 1 }`.
pub struct SingleTurn<P: Puzzle> {
    puzzle: P,
    turn: Option<Turn<P::Instance>>,
    prompt: Vec<f32>,
}

impl<P: Puzzle> SingleTurn<P> {
    /// The puzzle inside.
    pub fn puzzle(&self) -> &P {
        &self.puzzle
    }

    fn show(&mut self) {
        self.prompt.fill(0.0);
        if let Some(turn) = &self.turn {
            self.puzzle.prompt(&turn.instance, &mut self.prompt);
        }
    }
}

impl<P: Puzzle> Task for SingleTurn<P> {
    type Config = P::Config;
    type State = Option<Turn<P::Instance>>;

    fn new(config: &P::Config) -> std::result::Result<Self, String> {
        let puzzle = P::new(config)?;
        let (vocab, len) = puzzle.answer_space();
        if vocab < 2 || len == 0 {
            return Err(format!(
                "an answer needs a vocabulary of at least 2 and at least one token, got {vocab} and {len}"
            ));
        }
        Ok(Self {
            prompt: vec![0.0; puzzle.prompt_space().flat_dim()],
            puzzle,
            turn: None,
        })
    }

    fn observation_space(&self) -> Space {
        let (vocab, max_len) = self.puzzle.answer_space();
        Space::Dict {
            spaces: vec![
                ("prompt".into(), self.puzzle.prompt_space()),
                ("answer".into(), Space::Tokens { vocab, max_len }),
            ],
        }
    }

    fn action_space(&self) -> Space {
        let (vocab, _) = self.puzzle.answer_space();
        Space::Tokens { vocab, max_len: 1 }
    }

    fn reset(&mut self, rng: &mut EnvRng, options: ResetOptions, _info: &mut Info) -> Result<()> {
        proprio_core::family::no_reset_options("language", "", options)?;
        let (_, len) = self.puzzle.answer_space();
        self.turn = Some(Turn {
            instance: self.puzzle.generate(rng),
            answer: Vec::with_capacity(len),
            credit: 0.0,
        });
        self.show();
        Ok(())
    }

    fn observe(&self, obs: &mut [f32]) {
        let (prompt, answer) = obs.split_at_mut(self.prompt.len());
        prompt.copy_from_slice(&self.prompt);
        answer.fill(0.0);
        if let Some(turn) = &self.turn {
            for (o, &t) in answer.iter_mut().zip(&turn.answer) {
                *o = t as f32;
            }
        }
    }

    fn step(&mut self, action: &[f32], _rng: &mut EnvRng, info: &mut Info) -> Outcome {
        let (_, len) = self.puzzle.answer_space();
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
        let done = turn.answer.len() >= len;
        let reward = match &verdict {
            Verdict::Malformed(_) => -FORMAT_PENALTY,
            Verdict::Scored { credit, exact } => {
                let gained = credit - turn.credit;
                turn.credit = *credit;
                gained + if *exact && done { EXACT_BONUS } else { 0.0 }
            }
        };
        let malformed = matches!(verdict, Verdict::Malformed(_));
        if done || malformed {
            verdict.report(info);
        }
        Outcome {
            reward,
            terminated: done || malformed,
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
        }
        self.turn = state;
        self.show();
        Ok(())
    }

    fn scene(&self, scene: &mut Scene) {
        if let Some(turn) = &self.turn {
            self.puzzle.scene(&turn.instance, &turn.answer, scene);
        }
    }
}
