//! `language/guess-number-v0`: multi-turn — guess a secret number, hear "higher", "lower" or "correct".

use crate::transcript;
use crate::visuals;
use crate::vocab::{PAD, SYMBOLS, read_number};
use proprio_core::rand::RngExt;
use proprio_core::{EnvRng, Info, Outcome, ResetOptions, Result, Space, Task};
use serde::{Deserialize, Serialize};

/// `language/guess-number-v0` config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GuessConfig {
    /// Largest secret (1–999 999); the secret is uniform in `0 ..= max`.
    pub max: u64,
    /// Guesses allowed; the episode ends without success after this many.
    pub max_turns: usize,
    /// Reward paid for every guess (the cost of trying again), 0–0.5.
    pub turn_cost: f64,
    /// Extra cost of a malformed guess, 0–0.5.
    pub format_penalty: f64,
}

impl Default for GuessConfig {
    fn default() -> Self {
        Self {
            max: 99,
            max_turns: 10,
            turn_cost: 0.1,
            format_penalty: 0.5,
        }
    }
}

/// Feedback: the secret is higher than the guess.
pub const HIGHER: u32 = SYMBOLS;
/// Feedback: the secret is lower than the guess.
pub const LOWER: u32 = SYMBOLS + 1;
/// Feedback: the guess is the secret.
pub const CORRECT: u32 = SYMBOLS + 2;
/// Feedback: the guess was not a number in range.
pub const INVALID: u32 = SYMBOLS + 3;
/// Vocabulary size: padding, ten digits, four feedback tokens.
pub const VOCAB: u32 = SYMBOLS + 4;

/// The game's state: the secret and the transcript so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Game {
    /// The number to find.
    pub secret: u64,
    /// Guesses made.
    pub turns: usize,
    /// Every guess's digits followed by its feedback token, padded with 0.
    pub transcript: Vec<u32>,
}

/// The guessing game.
pub struct GuessNumber {
    config: GuessConfig,
    digits: usize,
    game: Game,
    guess: Vec<u32>,
}

impl GuessNumber {
    fn turn_len(&self) -> usize {
        self.digits + 1
    }
}

impl Task for GuessNumber {
    type Config = GuessConfig;
    type State = Game;

    fn new(config: &GuessConfig) -> std::result::Result<Self, String> {
        let c = config;
        if !(1..=999_999).contains(&c.max) || !(1..=64).contains(&c.max_turns) {
            return Err(format!(
                "max must be 1 to 999999 and max_turns 1 to 64, got {} and {}",
                c.max, c.max_turns
            ));
        }
        transcript::check_costs(c.turn_cost, c.format_penalty)?;
        let digits = c.max.to_string().len();
        Ok(Self {
            game: Game {
                secret: 0,
                turns: 0,
                transcript: vec![PAD; c.max_turns * (digits + 1)],
            },
            guess: Vec::with_capacity(digits),
            config: config.clone(),
            digits,
        })
    }

    /// The transcript: `max_turns` × (guess digits, feedback).
    fn observation_space(&self) -> Space {
        Space::Tokens {
            vocab: VOCAB,
            max_len: self.config.max_turns * self.turn_len(),
        }
    }

    fn action_space(&self) -> Space {
        Space::Tokens {
            vocab: VOCAB,
            max_len: self.digits,
        }
    }

    fn observe(&self, obs: &mut [f32]) {
        transcript::observe(&self.game.transcript, obs);
    }

    fn reset(&mut self, rng: &mut EnvRng, options: ResetOptions, _info: &mut Info) -> Result<()> {
        transcript::restart(options, &mut self.game.turns, &mut self.game.transcript)?;
        self.game.secret = rng.random_range(0..=self.config.max);
        Ok(())
    }

    fn step(&mut self, action: &[f32], _rng: &mut EnvRng, info: &mut Info) -> Outcome {
        self.guess.clear();
        self.guess.extend(action.iter().map(|&t| t as u32));
        let guess = read_number(&self.guess).filter(|&g| g <= self.config.max);
        let secret = self.game.secret;
        let feedback = match guess {
            None => INVALID,
            Some(g) if g < secret => HIGHER,
            Some(g) if g > secret => LOWER,
            Some(_) => CORRECT,
        };
        let len = self.turn_len();
        let at = self.game.turns * len;
        let row = &mut self.game.transcript[at..at + len];
        row[..self.digits].copy_from_slice(&self.guess);
        row[self.digits] = feedback;
        self.game.turns += 1;
        let costs = [self.config.turn_cost, self.config.format_penalty];
        let correct = feedback == CORRECT;
        let reward = transcript::settle(info, costs, correct, feedback == INVALID, self.game.turns);
        Outcome {
            reward,
            terminated: correct || self.game.turns >= self.config.max_turns,
        }
    }

    fn state(&self) -> Game {
        self.game.clone()
    }

    fn set_state(&mut self, game: Game) -> Result<()> {
        let answer = format!("secret {} of at most {}", game.secret, self.config.max);
        let shape = (self.game.transcript.len(), self.config.max_turns, VOCAB);
        let answer_ok = game.secret <= self.config.max;
        transcript::check_restored((&game.transcript, game.turns), shape, answer_ok, answer)?;
        self.game = game;
        Ok(())
    }

    /// The last turns, newest at the bottom: the guess, then `^` (higher),
    /// `v` (lower), `!` (correct) or `?` (malformed).
    fn scene(&self, scene: &mut proprio_core::Scene) {
        const SHOWN: usize = 5;
        let len = self.turn_len();
        let turns = self.game.turns;
        let first = turns.saturating_sub(SHOWN);
        let step = visuals::CARD + visuals::GAP;
        for (row, turn) in (first..turns).enumerate() {
            let tokens = &self.game.transcript[turn * len..(turn + 1) * len];
            let z = 0.2 + (SHOWN - 1 - row) as f32 * step;
            let cards = tokens.iter().enumerate().map(|(k, &t)| {
                if k < self.digits {
                    return (Some(visuals::token_char(t)), visuals::PLAIN);
                }
                match t {
                    HIGHER => (Some('^'), visuals::PLAIN),
                    LOWER => (Some('v'), visuals::PLAIN),
                    CORRECT => (Some('!'), visuals::RIGHT),
                    _ => (Some('?'), visuals::WRONG),
                }
            });
            visuals::glyph_row(scene, z, cards);
        }
        if turns == 0 {
            let blank = (0..len).map(|_| (None, visuals::BLANK));
            visuals::glyph_row(scene, 0.2 + (SHOWN - 1) as f32 * step, blank);
        }
        let secret = format!("{:0w$}", self.game.secret, w = self.digits);
        visuals::hidden_row(scene, 0.2 + SHOWN as f32 * step + 0.1, &secret);
        scene.text.push(format!(
            "secret {}; turn {turns} of {}",
            self.game.secret, self.config.max_turns
        ));
        visuals::frame_board(scene, 0.3 + (SHOWN + 1) as f32 * step, 1.2);
    }
}
