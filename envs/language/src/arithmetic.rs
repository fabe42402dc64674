//! `language/arithmetic-v0`: k-digit addition or multiplication, answered
//! digit by digit — one digit per step, each paid for when it is right.

use crate::puzzle::{Puzzle, Verdict};
use crate::visuals;
use crate::vocab::{SYMBOLS, as_digit, digit, write_number};
use proprio_core::rand::RngExt;
use proprio_core::{EnvRng, Space};
use serde::{Deserialize, Serialize};

/// Token `+`.
pub const PLUS: u32 = SYMBOLS;
/// Token `×`.
pub const TIMES: u32 = SYMBOLS + 1;
/// Token `=`.
pub const EQUALS: u32 = SYMBOLS + 2;
/// Vocabulary size: padding, ten digits, `+`, `×`, `=`.
pub const VOCAB: u32 = SYMBOLS + 3;

/// Which operation the instances ask for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// `a + b`.
    #[default]
    Add,
    /// `a × b`.
    Mul,
}

/// The order in which the answer's digits are asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DigitOrder {
    /// As the result is written: the most significant digit first.
    #[default]
    MostSignificantFirst,
    /// As it is computed by hand: the units first, so every carry is known
    /// before the digit that needs it (Lee et al. 2023, "Teaching Arithmetic
    /// to Small Transformers": reversed answers are learned much faster).
    LeastSignificantFirst,
}

/// `language/arithmetic-v0` config: the difficulty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ArithmeticConfig {
    /// Digits of each operand (1–9); operands are uniform in `0 .. 10^digits`.
    pub digits: u32,
    /// The operation.
    pub operation: Operation,
    /// The order of the answer's digits.
    pub order: DigitOrder,
}

impl Default for ArithmeticConfig {
    fn default() -> Self {
        Self {
            digits: 2,
            operation: Operation::Add,
            order: DigitOrder::MostSignificantFirst,
        }
    }
}

/// One problem: `a op b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// Left operand.
    pub a: u64,
    /// Right operand.
    pub b: u64,
}

/// The arithmetic puzzle.
pub struct Arithmetic {
    config: ArithmeticConfig,
    bound: u64,
}

impl Arithmetic {
    /// Digits of the answer: k + 1 for a sum, 2k for a product.
    pub fn answer_len(&self) -> usize {
        let k = self.config.digits as usize;
        match self.config.operation {
            Operation::Add => k + 1,
            Operation::Mul => 2 * k,
        }
    }

    /// The power of ten answer digit `k` of `len` stands for.
    fn power(&self, k: usize, len: usize) -> u32 {
        match self.config.order {
            DigitOrder::MostSignificantFirst => (len - 1 - k) as u32,
            DigitOrder::LeastSignificantFirst => k as u32,
        }
    }

    /// The true result.
    pub fn solve(&self, p: &Problem) -> u64 {
        match self.config.operation {
            Operation::Add => p.a + p.b,
            Operation::Mul => p.a * p.b,
        }
    }
}

impl Puzzle for Arithmetic {
    type Config = ArithmeticConfig;
    type Instance = Problem;

    fn new(config: &ArithmeticConfig) -> Result<Self, String> {
        if !(1..=9).contains(&config.digits) {
            return Err(format!("digits must be 1 to 9, got {}", config.digits));
        }
        Ok(Self {
            bound: 10u64.pow(config.digits),
            config: config.clone(),
        })
    }

    /// `a`'s digits, the operator, `b`'s digits, `=`: 2k + 2 tokens.
    fn prompt_space(&self) -> Space {
        Space::Tokens {
            vocab: VOCAB,
            max_len: 2 * self.config.digits as usize + 2,
        }
    }

    fn answer_space(&self) -> (u32, usize) {
        (VOCAB, self.answer_len())
    }

    fn generate(&self, rng: &mut EnvRng) -> Problem {
        Problem {
            a: rng.random_range(0..self.bound),
            b: rng.random_range(0..self.bound),
        }
    }

    fn prompt(&self, p: &Problem, obs: &mut [f32]) {
        let k = self.config.digits as usize;
        write_number(p.a, &mut obs[..k]);
        obs[k] = match self.config.operation {
            Operation::Add => PLUS,
            Operation::Mul => TIMES,
        } as f32;
        write_number(p.b, &mut obs[k + 1..2 * k + 1]);
        obs[2 * k + 1] = EQUALS as f32;
    }

    fn verify(&self, p: &Problem, answer: &[u32]) -> Verdict {
        if let Some(k) = answer.iter().position(|&t| as_digit(t).is_none()) {
            return Verdict::Malformed(format!("token {k} ({}) is not a digit", answer[k]));
        }
        let len = self.answer_len();
        let truth = self.solve(p);
        let right = answer
            .iter()
            .enumerate()
            .filter(|&(k, &t)| t == digit(truth / 10u64.pow(self.power(k, len))))
            .count();
        Verdict::Scored {
            credit: right as f64 / len as f64,
            exact: right == len,
        }
    }

    fn check(&self, p: &Problem) -> Result<(), String> {
        if p.a >= self.bound || p.b >= self.bound {
            return Err(format!(
                "operands {} and {} exceed {} digits",
                p.a, p.b, self.config.digits
            ));
        }
        Ok(())
    }

    fn scene(&self, p: &Problem, answer: &[u32], scene: &mut proprio_core::Scene) {
        let k = self.config.digits as usize;
        let op = match self.config.operation {
            Operation::Add => '+',
            Operation::Mul => '*',
        };
        let question = format!("{:0k$}{op}{:0k$}=", p.a, p.b);
        let plain = question.chars().map(|c| (Some(c), visuals::PLAIN));
        visuals::glyph_row(scene, 0.55, plain);
        let len = self.answer_len();
        let truth = self.solve(p);
        let cards = (0..len).map(|pos| match answer.get(pos) {
            Some(&t) => {
                let right = t == digit(truth / 10u64.pow(self.power(pos, len)));
                let colour = if right {
                    visuals::RIGHT
                } else {
                    visuals::WRONG
                };
                (Some(visuals::token_char(t)), colour)
            }
            None => (None, visuals::BLANK),
        });
        visuals::glyph_row(scene, 0.25, cards);
        let shown: String = answer.iter().map(|&t| visuals::token_char(t)).collect();
        scene.text.push(format!(
            "{} {op} {} = {truth}; answer so far: {shown}",
            p.a, p.b
        ));
        visuals::frame_board(scene, 0.7, question.len() as f32 * 0.2);
    }
}
