//! `language/twenty-questions-v0`: multi-turn — find a hidden object of a
//! fixed catalogue by asking yes/no questions about its attributes, then
//! name it (ArCHer's Twenty Questions, with a catalogue small enough to
//! solve exactly). A turn is one env step: one token, a question or a name.
//! With `try_again` a wrong name is answered only "try again" and the game
//! goes on (UFO's setting); without it a wrong name ends the episode.

use crate::transcript;
use crate::visuals;
use crate::vocab::PAD;
use proprio_core::rand::RngExt;
use proprio_core::{
    ActMode, Agent, EnvRng, EnvSpec, Error, Info, Outcome, ResetOptions, Result, Space, Task,
};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The yes/no questions, one per attribute.
pub const QUESTIONS: [&str; 10] = [
    "is it an animal?",
    "is it bigger than a person?",
    "can it fly?",
    "does it live in water?",
    "do people eat it?",
    "does it have legs?",
    "is it made of metal?",
    "does it have wheels?",
    "is it kept as a pet?",
    "is it a plant, or does it grow on one?",
];

/// The catalogue: each object with the bits of the questions answered yes.
/// Every object's answers differ from every other's, so each can be found.
pub const CATALOGUE: [(&str, u16); 20] = [
    ("dog", bits(&[0, 5, 8])),
    ("horse", bits(&[0, 1, 5])),
    ("eagle", bits(&[0, 2, 5])),
    ("parrot", bits(&[0, 2, 5, 8])),
    ("shark", bits(&[0, 1, 3])),
    ("goldfish", bits(&[0, 3, 8])),
    ("salmon", bits(&[0, 3, 4])),
    ("chicken", bits(&[0, 4, 5])),
    ("apple", bits(&[4, 9])),
    ("oak tree", bits(&[1, 9])),
    ("rose", bits(&[9])),
    ("car", bits(&[1, 6, 7])),
    ("bicycle", bits(&[6, 7])),
    ("airplane", bits(&[1, 2, 6, 7])),
    ("boat", bits(&[1, 3])),
    ("submarine", bits(&[1, 3, 6])),
    ("spoon", bits(&[6])),
    ("chair", bits(&[5])),
    ("bread", bits(&[4])),
    ("frog", bits(&[0, 3, 5])),
];

const fn bits(yes: &[usize]) -> u16 {
    let mut mask = 0;
    let mut i = 0;
    while i < yes.len() {
        mask |= 1 << yes[i];
        i += 1;
    }
    mask
}

/// Token of question `q`.
pub const fn ask(q: usize) -> u32 {
    1 + q as u32
}
/// Token naming object `o` of the catalogue.
pub const fn name(o: usize) -> u32 {
    1 + (QUESTIONS.len() + o) as u32
}
/// Feedback: yes.
pub const YES: u32 = name(CATALOGUE.len());
/// Feedback: no.
pub const NO: u32 = YES + 1;
/// Feedback to a wrong name: try again (or, without `try_again`, the end).
pub const WRONG: u32 = YES + 2;
/// Feedback to the right name.
pub const CORRECT: u32 = YES + 3;
/// Feedback to a token that is neither a question nor a name.
pub const INVALID: u32 = YES + 4;
/// Vocabulary size: padding, questions, names, five feedback tokens.
pub const VOCAB: u32 = YES + 5;

/// `language/twenty-questions-v0` config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QuestionsConfig {
    /// Objects of the catalogue in play, its first 2–20; the hidden one is uniform among them.
    pub objects: usize,
    /// Turns allowed (questions and names together).
    pub max_turns: usize,
    /// Reward paid for every turn, 0–0.5.
    pub turn_cost: f64,
    /// Extra cost of an invalid token, 0–0.5.
    pub format_penalty: f64,
    /// A wrong name is answered "try again" instead of ending the episode.
    pub try_again: bool,
}

impl Default for QuestionsConfig {
    fn default() -> Self {
        Self {
            objects: 16,
            max_turns: 6,
            turn_cost: 0.05,
            format_penalty: 0.5,
            try_again: false,
        }
    }
}

/// The game's state: the hidden object and the transcript so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Game {
    /// Index of the hidden object in the catalogue.
    pub hidden: usize,
    /// Turns taken.
    pub turns: usize,
    /// Every turn's token followed by its feedback, padded with 0.
    pub transcript: Vec<u32>,
}

/// The game.
pub struct TwentyQuestions {
    config: QuestionsConfig,
    game: Game,
}

impl Task for TwentyQuestions {
    type Config = QuestionsConfig;
    type State = Game;

    fn new(config: &QuestionsConfig) -> std::result::Result<Self, String> {
        let c = config;
        if !(2..=CATALOGUE.len()).contains(&c.objects) || !(1..=64).contains(&c.max_turns) {
            return Err(format!(
                "objects must be 2 to {} and max_turns 1 to 64, got {} and {}",
                CATALOGUE.len(),
                c.objects,
                c.max_turns
            ));
        }
        transcript::check_costs(c.turn_cost, c.format_penalty)?;
        Ok(Self {
            game: Game {
                hidden: 0,
                turns: 0,
                transcript: vec![PAD; 2 * c.max_turns],
            },
            config: config.clone(),
        })
    }

    /// The transcript: `max_turns` × (token, feedback).
    fn observation_space(&self) -> Space {
        Space::Tokens {
            vocab: VOCAB,
            max_len: 2 * self.config.max_turns,
        }
    }

    fn action_space(&self) -> Space {
        Space::Tokens {
            vocab: VOCAB,
            max_len: 1,
        }
    }

    fn reset(&mut self, rng: &mut EnvRng, options: ResetOptions, _info: &mut Info) -> Result<()> {
        transcript::restart(options, &mut self.game.turns, &mut self.game.transcript)?;
        self.game.hidden = rng.random_range(0..self.config.objects);
        Ok(())
    }

    fn observe(&self, obs: &mut [f32]) {
        transcript::observe(&self.game.transcript, obs);
    }

    fn step(&mut self, action: &[f32], _rng: &mut EnvRng, info: &mut Info) -> Outcome {
        let token = action.first().map_or(PAD, |&t| t as u32);
        let game = &mut self.game;
        let feedback = match read(token) {
            Some(Turn::Ask(q)) if CATALOGUE[game.hidden].1 & (1 << q) != 0 => YES,
            Some(Turn::Ask(_)) => NO,
            Some(Turn::Name(o)) if o == game.hidden => CORRECT,
            Some(Turn::Name(_)) => WRONG,
            None => INVALID,
        };
        game.transcript[2 * game.turns..2 * game.turns + 2].copy_from_slice(&[token, feedback]);
        game.turns += 1;
        let costs = [self.config.turn_cost, self.config.format_penalty];
        let correct = feedback == CORRECT;
        let reward = transcript::settle(info, costs, correct, feedback == INVALID, game.turns);
        let named = matches!(feedback, CORRECT | WRONG);
        // UFO's measure: wrong names so far, and those the env had already rejected.
        let (wrong, repeated) = wrong_names(&game.transcript[..2 * game.turns]);
        info.set("wrong_answers", wrong as f64);
        info.set("repeated_answers", repeated as f64);
        Outcome {
            reward,
            terminated: correct
                || (named && !self.config.try_again)
                || game.turns >= self.config.max_turns,
        }
    }

    fn state(&self) -> Game {
        self.game.clone()
    }

    fn set_state(&mut self, game: Game) -> Result<()> {
        let answer = format!("object {} of {}", game.hidden, self.config.objects);
        let shape = (self.game.transcript.len(), self.config.max_turns, VOCAB);
        let answer_ok = game.hidden < self.config.objects;
        transcript::check_restored((&game.transcript, game.turns), shape, answer_ok, answer)?;
        self.game = game;
        Ok(())
    }

    /// The transcript as text, and a card per turn: `?` a question (green
    /// if answered yes), the named object's initial (green if right), blank
    /// cards for the turns left.
    fn scene(&self, scene: &mut proprio_core::Scene) {
        let turns = &self.game.transcript[..2 * self.game.turns];
        let left = self.config.max_turns - self.game.turns;
        let blanks = std::iter::repeat_n((None, visuals::BLANK), left);
        let cards = turns.chunks_exact(2).map(|turn| {
            let colour = match turn[1] {
                YES | CORRECT => visuals::RIGHT,
                NO => visuals::PLAIN,
                _ => visuals::WRONG,
            };
            let mark = match read(turn[0]) {
                Some(Turn::Name(o)) => CATALOGUE[o].0.chars().next().unwrap_or('?'),
                _ => '?',
            };
            (Some(mark), colour)
        });
        visuals::glyph_row(scene, 0.5, cards.chain(blanks));
        let number = format!("{:02}", self.game.hidden);
        visuals::hidden_row(scene, 0.8, &number);
        scene.text.push(format!(
            "hidden: {} ({:02}); turn {} of {}",
            CATALOGUE[self.game.hidden].0, self.game.hidden, self.game.turns, self.config.max_turns
        ));
        scene
            .text
            .extend(turns.chunks_exact(2).map(|t| transcript_line(t[0], t[1])));
        visuals::frame_board(scene, 1.0, 1.2);
    }
}

/// What a token says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    /// Question `q` of [`QUESTIONS`].
    Ask(usize),
    /// Object `o` of [`CATALOGUE`].
    Name(usize),
}

/// The turn token `t` stands for, if it is one.
pub fn read(t: u32) -> Option<Turn> {
    let q = QUESTIONS.len() as u32;
    if (1..=q).contains(&t) {
        Some(Turn::Ask((t - 1) as usize))
    } else if (q + 1..YES).contains(&t) {
        Some(Turn::Name((t - 1 - q) as usize))
    } else {
        None
    }
}

/// Wrong names in `transcript` (tokens and feedback), and how many of them
/// repeat a name rejected earlier.
fn wrong_names(transcript: &[u32]) -> (usize, usize) {
    let wrong: Vec<u32> = transcript
        .chunks_exact(2)
        .filter(|turn| turn[1] == WRONG)
        .map(|turn| turn[0])
        .collect();
    (wrong.len(), transcript::repeats(&wrong))
}

fn transcript_line(token: u32, feedback: u32) -> String {
    let said = match read(token) {
        Some(Turn::Ask(q)) => QUESTIONS[q].to_string(),
        Some(Turn::Name(o)) => format!("is it a {}?", CATALOGUE[o].0),
        None => format!("(token {token})"),
    };
    let heard = match feedback {
        YES => "yes",
        NO => "no",
        CORRECT => "right",
        WRONG => "try again",
        _ => "invalid",
    };
    format!("{said} {heard}")
}

/// Fewest turns that find any object of `candidates` (a bit set of the
/// catalogue) for certain, the name included, asking the best question each
/// turn: the exact solver's bound (memoised over the sets questions reach).
pub fn worst_case_turns(candidates: u32, memo: &mut HashMap<u32, usize>) -> usize {
    if candidates.count_ones() <= 1 {
        return candidates.count_ones() as usize;
    }
    if let Some(&t) = memo.get(&candidates) {
        return t;
    }
    let best = best_question(candidates, memo)
        .map(|(turns, _)| 1 + turns)
        // Objects no question tells apart (none in the catalogue): named one by one.
        .unwrap_or(candidates.count_ones() as usize);
    memo.insert(candidates, best);
    best
}

/// The question that splits `candidates` with the fewest worst-case turns
/// after it (the lowest-numbered on ties), and those turns; `None` if no
/// question splits them.
fn best_question(candidates: u32, memo: &mut HashMap<u32, usize>) -> Option<(usize, usize)> {
    (0..QUESTIONS.len())
        .filter_map(|q| {
            let (yes, no) = split(candidates, q);
            (yes != 0 && no != 0).then(|| {
                (
                    worst_case_turns(yes, memo).max(worst_case_turns(no, memo)),
                    q,
                )
            })
        })
        .min()
}

/// The candidates answering question `q` yes, and those answering no.
fn split(candidates: u32, q: usize) -> (u32, u32) {
    let yes = (0..CATALOGUE.len())
        .filter(|&o| candidates & (1 << o) != 0 && CATALOGUE[o].1 & (1 << q) != 0)
        .fold(0, |set, o| set | (1 << o));
    (yes, candidates & !yes)
}

/// The exact solver: it keeps the objects the transcript allows and asks
/// the question that leaves the fewest worst-case turns (the lowest-numbered
/// on ties), naming the object once one is left; it never needs more than
/// [`worst_case_turns`] of the whole catalogue in play.
pub struct Scripted {
    objects: usize,
    memo: HashMap<u32, usize>,
}

impl Scripted {
    /// The solver of games with `config`.
    pub fn new(config: &QuestionsConfig) -> Self {
        Self {
            objects: config.objects,
            memo: HashMap::new(),
        }
    }

    /// The registry's scripted agent for envs of `spec`.
    pub fn for_spec(spec: &EnvSpec) -> Result<Box<dyn Agent + Send>> {
        let mut config = spec.config.clone();
        // The time limit every env takes is not the game's own key.
        if let Some(keys) = config.as_object_mut() {
            keys.remove("max_episode_steps");
        }
        let config: QuestionsConfig =
            proprio_core::serde_json::from_value(config).map_err(|e| Error::Config {
                id: spec.id.clone(),
                message: e.to_string(),
            })?;
        Ok(Box::new(Self::new(&config)))
    }

    /// The objects still possible after `transcript` (tokens and feedback, padded).
    pub fn candidates(&self, transcript: &[f32]) -> u32 {
        let all = (1u32 << self.objects) - 1;
        transcript.chunks_exact(2).fold(all, |set, turn| {
            match (read(turn[0] as u32), turn[1] as u32) {
                (Some(Turn::Ask(q)), YES) => split(set, q).0,
                (Some(Turn::Ask(q)), NO) => split(set, q).1,
                (Some(Turn::Name(o)), WRONG) => set & !(1 << o),
                _ => set,
            }
        })
    }

    /// The next turn's token after `transcript`.
    pub fn next(&mut self, transcript: &[f32]) -> u32 {
        let candidates = self.candidates(transcript);
        if candidates.count_ones() <= 1 {
            return name(candidates.trailing_zeros().min(self.objects as u32 - 1) as usize);
        }
        best_question(candidates, &mut self.memo)
            .map_or(name(candidates.trailing_zeros() as usize), |(_, q)| ask(q))
    }
}

impl Agent for Scripted {
    fn act(&mut self, obs: &[f32], actions: &mut [f32], _: ActMode) -> Result<()> {
        let n = actions.len();
        if n == 0 || !obs.len().is_multiple_of(n) {
            return Err(Error::Agent(format!(
                "{} observation values do not split into {n} transcripts",
                obs.len()
            )));
        }
        for (transcript, action) in obs.chunks_exact(obs.len() / n).zip(actions) {
            *action = self.next(transcript) as f32;
        }
        Ok(())
    }
}
