//! An instruction in words: the templates' wording (the only one trained
//! on), the semantic split's paraphrases, a text a person types (config key
//! `instruction`) parsed back to the instruction it asks for, and every
//! wording's CLIP token ids as the observation holds them.

use super::{INSTRUCTION_TOKENS, Instruction, Side};
use crate::panda::{CUBE_COLOURS, MAX_CUBES};
use proprio_text::ClipTokenizer;
use std::sync::OnceLock;

/// Which wording an episode's instruction is in (stored with it in the
/// state): [`TEMPLATE`], a paraphrase `1..=PARAPHRASES`, or [`TYPED`].
pub type Phrasing = u8;
/// The templates' own wording: every training, held-out, vision and position episode's.
pub const TEMPLATE: Phrasing = 0;
/// Paraphrases per template that only the semantic split draws (phrasings `1..=PARAPHRASES`).
pub const PARAPHRASES: Phrasing = 2;
/// The text of the config key `instruction`, whatever its words.
pub const TYPED: Phrasing = PARAPHRASES + 1;
/// Phrasings a state can hold.
pub const PHRASINGS: usize = TYPED as usize + 1;

/// Refuses a stored phrasing that is none of an env's wordings (a typed
/// text's only where the env has one): a restored state must observe real tokens.
pub fn check_phrasing(phrasing: f32, typed: bool) -> Result<(), String> {
    let table = phrasing.fract() == 0.0 && (0.0..=f32::from(PARAPHRASES)).contains(&phrasing);
    if table || typed && phrasing == f32::from(TYPED) {
        return Ok(());
    }
    Err(format!(
        "phrasing {phrasing} is none of this env's wordings (0 to {PARAPHRASES}{})",
        if typed { ", or the typed text's" } else { "" }
    ))
}

/// Words that ask for a push, a pick and a put (the first such word decides).
const PUSH_WORDS: [&str; 5] = ["push", "slide", "move", "shove", "nudge"];
const PICK_WORDS: [&str; 5] = ["pick", "lift", "raise", "grab", "grasp"];
const PUT_WORDS: [&str; 4] = ["put", "place", "stack", "set"];

impl Instruction {
    /// The instruction in `phrasing`'s words ([`TEMPLATE`] for [`TYPED`],
    /// whose words live in the settings).
    pub fn words(self, phrasing: Phrasing) -> String {
        let colour = |i: usize| CUBE_COLOURS[i].0;
        match (self, phrasing) {
            (Instruction::Push { cube, side }, 1) => {
                format!("slide the {} block to the {}", colour(cube), side.word())
            }
            (Instruction::Push { cube, side }, 2) => {
                format!("move {} over to the {} side", colour(cube), side.word())
            }
            (Instruction::PickUp { cube }, 1) => format!("lift the {} block", colour(cube)),
            (Instruction::PickUp { cube }, 2) => format!("raise {} off the table", colour(cube)),
            (Instruction::PutOn { cube, on }, 1) => {
                format!("place {} onto {}", colour(cube), colour(on))
            }
            (Instruction::PutOn { cube, on }, 2) => format!(
                "stack the {} block on top of the {} block",
                colour(cube),
                colour(on)
            ),
            _ => self.text(),
        }
    }

    /// The instruction `text` asks for over `cubes` cubes: its colour words
    /// name the cubes (two: put the first on the second), a side word makes
    /// a push, an action word (push/slide/move, pick/lift/raise, put/place/stack)
    /// decides the rest. The error says what the text lacks.
    pub fn parse(text: &str, cubes: usize) -> Result<Instruction, String> {
        let lower = text.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_ascii_alphabetic())
            .filter(|w| !w.is_empty())
            .collect();
        let known = CUBE_COLOURS[..cubes.min(MAX_CUBES)]
            .iter()
            .map(|c| c.0)
            .collect::<Vec<_>>()
            .join(", ");
        let mut named = Vec::new();
        for w in &words {
            if let Some(i) = CUBE_COLOURS.iter().position(|c| c.0 == *w) {
                if i >= cubes {
                    return Err(format!(
                        "instruction {text:?} names {w}, but the scene has {cubes} cubes: {known}"
                    ));
                }
                named.push(i);
            }
        }
        let sides: Vec<Side> = words
            .iter()
            .filter_map(|w| Side::ALL.into_iter().find(|s| s.word() == *w))
            .collect();
        let action = words.iter().find_map(|w| {
            [&PUSH_WORDS[..], &PICK_WORDS, &PUT_WORDS]
                .iter()
                .position(|set| set.contains(w))
        });
        let fail = |why: &str| Err(format!("instruction {text:?} {why}"));
        match (named.as_slice(), sides.as_slice(), action) {
            ([], ..) => fail(&format!("names no cube colour ({known})")),
            ([a, b], [], None | Some(2)) if a != b => Ok(Instruction::PutOn { cube: *a, on: *b }),
            ([a, b], ..) if a == b => fail("names the same cube twice"),
            ([_, _], ..) => fail("names two cubes, which only a put (\"put A on B\") takes"),
            ([cube], [side], None | Some(0)) => Ok(Instruction::Push {
                cube: *cube,
                side: *side,
            }),
            ([_], [_], Some(_)) => fail("names a side, which only a push takes"),
            ([_], [_, _, ..], _) => fail("names more than one side"),
            ([cube], [], Some(1)) => Ok(Instruction::PickUp { cube: *cube }),
            ([_], [], Some(0)) => {
                fail("asks for a push but names no side (left, right, front, back)")
            }
            ([_], [], Some(_)) => fail("asks for a put but names one cube"),
            ([_], [], None) => fail("names no action (push … to a side, pick up …, put … on …)"),
            _ => fail("names more than two cubes"),
        }
    }
}

/// An instruction a person typed: the one it was parsed to and the text's
/// own token ids (what the policy reads; the success test follows the parse).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Typed {
    /// What the text asks for.
    pub instruction: Instruction,
    /// The text's CLIP token ids, padded with 0.
    pub tokens: [f32; INSTRUCTION_TOKENS],
}

impl Typed {
    /// Parses and tokenizes `text`; an error if it asks for nothing over
    /// `cubes` cubes or is longer than the observation's tokens.
    pub fn new(text: &str, cubes: usize) -> Result<Self, String> {
        let instruction = Instruction::parse(text, cubes)?;
        let ids = tokenizer().encode(text);
        if ids.len() > INSTRUCTION_TOKENS {
            return Err(format!(
                "instruction {text:?} is {} tokens; the observation holds {} (start and end included)",
                ids.len(),
                INSTRUCTION_TOKENS
            ));
        }
        Ok(Self {
            instruction,
            tokens: padded(&ids),
        })
    }
}

/// OpenAI's CLIP tokenizer, wide enough to measure any text, built once.
fn tokenizer() -> &'static ClipTokenizer {
    static TOKENIZER: OnceLock<ClipTokenizer> = OnceLock::new();
    TOKENIZER.get_or_init(|| ClipTokenizer::openai(77))
}

/// Token ids as the observation holds them: the first [`INSTRUCTION_TOKENS`], padded with 0.
fn padded(ids: &[u32]) -> [f32; INSTRUCTION_TOKENS] {
    let mut row = [0.0; INSTRUCTION_TOKENS];
    for (slot, &id) in row.iter_mut().zip(ids) {
        *slot = id as f32;
    }
    row
}

/// Every instruction's token ids over `cubes` cubes in each wording of the
/// table, padded with 0 to [`INSTRUCTION_TOKENS`]: what the observation
/// holds, looked up per step.
pub struct Vocabulary {
    /// Per phrasing (`TEMPLATE..=PARAPHRASES`), each instruction and its row.
    rows: Vec<Vec<(Instruction, [f32; INSTRUCTION_TOKENS])>>,
}

impl Vocabulary {
    /// Tokenizes every instruction in every wording once with OpenAI's CLIP vocabulary.
    pub fn new(cubes: usize) -> Self {
        let rows = (TEMPLATE..=PARAPHRASES)
            .map(|phrasing| {
                Instruction::all(cubes)
                    .into_iter()
                    .map(|i| (i, padded(&tokenizer().encode(&i.words(phrasing)))))
                    .collect()
            })
            .collect();
        Self { rows }
    }

    /// The padded token ids of `instruction` in `phrasing` (all padding for
    /// one this cube count cannot form or [`TYPED`], whose ids the settings hold).
    pub fn tokens(
        &self,
        instruction: Instruction,
        phrasing: Phrasing,
    ) -> &[f32; INSTRUCTION_TOKENS] {
        const NONE: [f32; INSTRUCTION_TOKENS] = [0.0; INSTRUCTION_TOKENS];
        self.rows
            .get(usize::from(phrasing))
            .and_then(|rows| rows.iter().find(|(i, _)| *i == instruction))
            .map_or(&NONE, |(_, row)| row)
    }

    /// The instruction whose tokens are `ids` in any wording of the table.
    pub fn read(&self, ids: &[f32]) -> Option<Instruction> {
        self.rows
            .iter()
            .flatten()
            .find(|(_, row)| row.as_slice() == ids)
            .map(|(i, _)| *i)
    }
}

/// The token table of each cube count, built once.
pub fn vocabulary(cubes: usize) -> &'static Vocabulary {
    static TABLES: OnceLock<Vec<Vocabulary>> = OnceLock::new();
    &TABLES.get_or_init(|| (0..=MAX_CUBES).map(Vocabulary::new).collect())[cubes.min(MAX_CUBES)]
}

/// The instruction the observed token `ids` ask for over `cubes` cubes: a
/// wording of the table, or any text that parses (a typed one); what a
/// scripted expert or a caption reads.
pub fn understood(ids: &[f32], cubes: usize) -> Option<Instruction> {
    vocabulary(cubes)
        .read(ids)
        .or_else(|| Instruction::parse(&spoken(ids)?, cubes).ok())
}

/// The words of token `ids` (the text a viewer shows), if they are CLIP's.
pub fn spoken(ids: &[f32]) -> Option<String> {
    let ids: Vec<u32> = ids.iter().map(|&id| id as u32).collect();
    tokenizer().decode(&ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_wording_parses_back_to_its_instruction() {
        for cubes in [3, 4] {
            for i in Instruction::all(cubes) {
                for phrasing in TEMPLATE..=PARAPHRASES {
                    assert_eq!(Instruction::parse(&i.words(phrasing), cubes), Ok(i));
                }
            }
        }
        let parse = |text| Instruction::parse(text, 3);
        assert_eq!(
            parse("Lift the RED block!"),
            Ok(Instruction::PickUp { cube: 0 })
        );
        assert_eq!(
            parse("place green onto blue"),
            Ok(Instruction::PutOn { cube: 2, on: 1 })
        );
        assert_eq!(
            parse("shove blue to the front"),
            Ok(Instruction::Push {
                cube: 1,
                side: Side::Front
            })
        );
    }

    #[test]
    fn a_text_that_asks_for_nothing_says_why() {
        let error = |text| Instruction::parse(text, 3).unwrap_err();
        assert!(error("dance").contains("names no cube colour (red, blue, green)"));
        assert!(error("pick up the yellow cube").contains("the scene has 3 cubes"));
        assert!(error("put red on red").contains("same cube twice"));
        assert!(error("push the red cube").contains("names no side"));
        assert!(error("the red cube").contains("names no action"));
        assert!(error("lift red to the left").contains("only a push takes"));
        assert!(error("push red on blue").contains("only a put"));
        let long = "please would you very kindly pick up the red cube from the table now thanks";
        assert!(
            Typed::new(long, 3)
                .unwrap_err()
                .contains("tokens; the observation holds 16")
        );
    }

    #[test]
    fn a_typed_text_keeps_its_own_tokens_and_reads_back() {
        let typed = Typed::new("grab the green one", 3).unwrap();
        assert_eq!(typed.instruction, Instruction::PickUp { cube: 2 });
        let ids = ClipTokenizer::openai(77).encode("grab the green one");
        let expected: Vec<f32> = ids.iter().map(|&id| id as f32).collect();
        assert_eq!(typed.tokens[..ids.len()], expected[..]);
        assert_eq!(
            vocabulary(3).read(&typed.tokens),
            None,
            "not a table wording"
        );
        assert_eq!(understood(&typed.tokens, 3), Some(typed.instruction));
        assert_eq!(spoken(&typed.tokens).as_deref(), Some("grab the green one"));
    }
}
