//! The instruction each env's observation carries (an env whose episodes
//! each draw one, like `manipulation/instruct-v0`), embedded by the reward's
//! CLIP once per distinct instruction: a progress model then reads every
//! env under its own episode's instruction, and a goal-caption head
//! (VLM-RM, RoboCLIP) scores it against that instruction's caption.

use crate::clip::{ClipModel, Embeddings, TextReading};
use crate::{Result, RewardError};
use proprio::Space;
use proprio_text::ClipTokenizer;
use std::collections::BTreeMap;
use std::ops::Range;

/// `goals` keyed as `tokenizer` reads an instruction back (lower case,
/// spaces collapsed), the way a decoded observation reads.
pub(crate) fn keyed(
    tokenizer: &ClipTokenizer,
    goals: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    goals
        .iter()
        .map(|(instruction, goal)| (read_back(tokenizer, instruction), goal.clone()))
        .collect()
}

/// `text` as `tokenizer` reads it back.
pub(crate) fn read_back(tokenizer: &ClipTokenizer, text: &str) -> String {
    tokenizer
        .decode(&tokenizer.encode(text))
        .unwrap_or_else(|| text.to_string())
}

/// Every instruction seen so far, embedded, and each stepped env's row.
pub struct Instructions {
    /// The columns of the observation row that hold the instruction's token ids.
    columns: Range<usize>,
    tokenizer: ClipTokenizer,
    /// The token ids of each instruction seen, in order of first sight.
    seen: Vec<Vec<f32>>,
    /// Their embeddings, row for row with `seen`.
    embedded: Embeddings,
    /// How they are embedded.
    reading: TextReading,
    /// Where each instruction is embedded as its goal caption instead: the
    /// instructions as the tokenizer reads them back, with their captions.
    goals: Option<BTreeMap<String, String>>,
    /// Per env of the last [`Instructions::read`], its instruction's row.
    rows: Vec<usize>,
}

impl Instructions {
    /// Reads the first token part of observations of `space`, each
    /// instruction embedded as `reading` says, or as its caption in `goals`
    /// where given; `None` if it has none.
    pub fn new(
        space: &Space,
        reading: TextReading,
        goals: Option<&BTreeMap<String, String>>,
    ) -> Option<Self> {
        let columns = space.token_parts().into_iter().next()?;
        let tokenizer = ClipTokenizer::openai(columns.len());
        let goals = goals.map(|goals| keyed(&tokenizer, goals));
        Some(Self {
            tokenizer,
            goals,
            columns,
            seen: Vec::new(),
            embedded: Embeddings {
                dim: 0,
                values: Vec::new(),
            },
            reading,
            rows: Vec::new(),
        })
    }

    /// Finds the instruction row of each of `envs` in `obs` (rows of
    /// `obs_dim` values), embedding the ones not seen before in one pass.
    pub fn read(
        &mut self,
        clip: &ClipModel,
        obs: &[f32],
        obs_dim: usize,
        envs: &[usize],
    ) -> Result<()> {
        self.rows.clear();
        let mut fresh = Vec::new();
        for &env in envs {
            let ids = &obs[env * obs_dim..][self.columns.clone()];
            let row = match self.seen.iter().position(|seen| seen.as_slice() == ids) {
                Some(row) => row,
                None => {
                    let as_ids: Vec<u32> = ids.iter().map(|&t| t as u32).collect();
                    let text = self.tokenizer.decode(&as_ids).ok_or_else(|| {
                        RewardError::Input(format!(
                            "env {env}'s instruction holds ids outside CLIP's vocabulary: {as_ids:?}"
                        ))
                    })?;
                    let text = match &self.goals {
                        None => text,
                        Some(goals) => goals.get(&text).cloned().ok_or_else(|| {
                            RewardError::Input(format!(
                                "the reward's goals give no caption for env {env}'s instruction \"{text}\""
                            ))
                        })?,
                    };
                    fresh.push(text);
                    self.seen.push(ids.to_vec());
                    self.seen.len() - 1
                }
            };
            self.rows.push(row);
        }
        if !fresh.is_empty() {
            let texts: Vec<&str> = fresh.iter().map(String::as_str).collect();
            let embedded = clip.read_texts(&texts, self.reading)?;
            self.embedded.dim = embedded.dim;
            self.embedded.values.extend(embedded.values);
        }
        Ok(())
    }

    /// The embeddings of every instruction seen and, per env of the last read, its row.
    pub fn last(&self) -> (&Embeddings, &[usize]) {
        (&self.embedded, &self.rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::FitConfig;
    use burn::prelude::Device;

    fn clip() -> ClipModel {
        let small = FitConfig {
            width: 16,
            layers: 1,
            heads: 2,
            projection_dim: 8,
            ..FitConfig::default()
        };
        ClipModel::random(small.clip_config(), &Device::flex()).unwrap()
    }

    fn space() -> Space {
        Space::Dict {
            spaces: vec![
                (
                    "state".into(),
                    Space::Box {
                        low: vec![-1.0; 2],
                        high: vec![1.0; 2],
                    },
                ),
                (
                    "instruction".into(),
                    Space::Tokens {
                        vocab: 49408,
                        max_len: 12,
                    },
                ),
            ],
        }
    }

    /// Two envs' rows of `[state (2), the text's ids padded with 0 to 12]`.
    fn obs_rows(texts: [&str; 2]) -> Vec<f32> {
        let tokenizer = ClipTokenizer::openai(12);
        texts
            .iter()
            .flat_map(|text| {
                let mut row = vec![0.5, -0.5];
                let ids = tokenizer.encode(text);
                row.extend(ids.iter().map(|&i| i as f32));
                row.resize(14, 0.0);
                row
            })
            .collect()
    }

    #[test]
    fn each_env_reads_its_own_instruction_embedded_once() {
        let clip = clip();
        let mut instructions = Instructions::new(&space(), TextReading::Sentence, None).unwrap();
        let obs = obs_rows(["pick up the red cube", "push the blue cube to the left"]);
        instructions.read(&clip, &obs, 14, &[1, 0]).unwrap();
        let (embedded, rows) = instructions.last();
        assert_eq!(rows, [0, 1]);
        let expected = clip
            .embed_texts(&["push the blue cube to the left", "pick up the red cube"])
            .unwrap();
        assert_eq!(embedded.values, expected.values);
        // Seen instructions keep their rows; a new one is embedded after them.
        let obs = obs_rows(["put the red cube on the blue cube", "pick up the red cube"]);
        instructions.read(&clip, &obs, 14, &[0, 1]).unwrap();
        let (embedded, rows) = instructions.last();
        assert_eq!(rows, [2, 1]);
        assert_eq!(embedded.len(), 3);
        let put = clip
            .embed_texts(&["put the red cube on the blue cube"])
            .unwrap();
        assert_eq!(embedded.row(2), put.row(0));
    }

    #[test]
    fn with_goals_each_instruction_reads_as_its_caption_and_one_without_is_named() {
        let clip = clip();
        // Written as a person types it: capitals and spaces read as the env's words.
        let goals = BTreeMap::from([(
            "Pick up  the RED cube".to_string(),
            "the gripper holds the red cube up".to_string(),
        )]);
        let mut instructions =
            Instructions::new(&space(), TextReading::Sentence, Some(&goals)).unwrap();
        let obs = obs_rows(["pick up the red cube", "push the blue cube to the left"]);
        instructions.read(&clip, &obs, 14, &[0]).unwrap();
        let caption = clip
            .embed_texts(&["the gripper holds the red cube up"])
            .unwrap();
        assert_eq!(instructions.last().0.values, caption.values);
        let error = instructions.read(&clip, &obs, 14, &[0, 1]).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("env 1's instruction \"push the blue cube to the left\""),
            "{error}"
        );
    }

    #[test]
    fn a_word_reading_gives_each_token_its_own_embedding() {
        let clip = clip();
        let mut instructions = Instructions::new(&space(), TextReading::Words(10), None).unwrap();
        let obs = obs_rows([
            "push the blue cube to the left",
            "push the blue cube to the right",
        ]);
        instructions.read(&clip, &obs, 14, &[0, 1]).unwrap();
        let (embedded, rows) = instructions.last();
        assert_eq!((embedded.dim, rows), (10 * 16, &[0, 1][..]));
        let word = |row: usize, t: usize| &embedded.row(row)[t * 16..(t + 1) * 16];
        // Start, push, the, blue, cube, to, the, left|right, end, end: the
        // two differ in their eighth word alone.
        let differ: Vec<usize> = (0..10).filter(|&t| word(0, t) != word(1, t)).collect();
        assert_eq!(differ, [7]);
        assert_eq!(word(0, 8), word(0, 9));
        let norm = word(0, 3).iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{norm}");
        let long = "put the green cube on the red cube and then wait";
        let error = clip
            .read_texts(&[long], TextReading::Words(10))
            .unwrap_err();
        assert!(error.to_string().contains("at most 10"), "{error}");
    }

    #[test]
    fn ids_outside_the_vocabulary_are_an_error_and_no_tokens_no_reader() {
        let clip = clip();
        let mut instructions = Instructions::new(&space(), TextReading::Sentence, None).unwrap();
        let mut obs = obs_rows(["pick up the red cube", "pick up the red cube"]);
        obs[17] = 1e6;
        let error = instructions.read(&clip, &obs, 14, &[1]).unwrap_err();
        assert!(error.to_string().contains("env 1"), "{error}");
        let state = Space::Box {
            low: vec![0.0],
            high: vec![1.0],
        };
        assert!(Instructions::new(&state, TextReading::Sentence, None).is_none());
    }
}
