//! # proprio-text
//!
//! CLIP's byte-level BPE through `instant-clip-tokenizer`: lower-cased,
//! wrapped in start/end-of-text tokens, truncated to the context length.
//! Envs that take instructions (`manipulation/instruct-v0`) and the reward
//! models that read text (CLIP's text tower) share it, so an instruction's
//! ids are the ones a CLIP checkpoint reads.

use instant_clip_tokenizer::{Token, Tokenizer};
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// Why a vocabulary could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct VocabularyError {
    /// The `merges.txt` at fault.
    pub path: PathBuf,
    /// What is wrong with it.
    pub message: String,
}

/// The size of OpenAI's CLIP vocabulary (`<end_of_text>` is its last id).
pub const OPENAI_VOCAB: u32 = 49_408;

/// Texts to token ids, as transformers' `CLIPTokenizer` writes them.
pub struct ClipTokenizer {
    inner: Tokenizer,
    context: usize,
}

impl ClipTokenizer {
    /// OpenAI's vocabulary (49,408 tokens), bundled with the crate.
    pub fn openai(context: usize) -> Self {
        Self {
            inner: Tokenizer::new(),
            context,
        }
    }

    /// The vocabulary of a checkpoint's `merges.txt` (one header line, then
    /// one merge per line), of `vocab_size` tokens in all.
    pub fn from_merges(
        path: &Path,
        vocab_size: usize,
        context: usize,
    ) -> Result<Self, VocabularyError> {
        let error = |message: String| VocabularyError {
            path: path.to_path_buf(),
            message,
        };
        let size = u16::try_from(vocab_size)
            .ok()
            .filter(|s| *s > 514)
            .ok_or_else(|| {
                error(format!(
                    "vocab_size {vocab_size} is not a CLIP BPE size (515 to 65,535)"
                ))
            })?;
        let file = std::fs::File::open(path).map_err(|e| error(e.to_string()))?;
        let inner = Tokenizer::with_vocabulary(BufReader::new(file), size)
            .map_err(|e| error(e.to_string()))?;
        let end = usize::from(inner.end_of_text().to_u16());
        if end + 1 != vocab_size {
            return Err(error(format!(
                "holds {} merges, which make {} tokens, but the model's vocab_size is {vocab_size}",
                end - 513,
                end + 1
            )));
        }
        Ok(Self { inner, context })
    }

    /// `<start_of_text>`, the text's tokens (as many as fit), `<end_of_text>`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut tokens = Vec::new();
        self.inner.encode(text, &mut tokens);
        tokens.truncate(self.context.saturating_sub(2));
        let ids = tokens.into_iter().map(Token::to_u16);
        std::iter::once(self.inner.start_of_text().to_u16())
            .chain(ids)
            .chain(std::iter::once(self.end_of_text() as u16))
            .map(u32::from)
            .collect()
    }

    /// Token rows of `texts`, padded to the longest with `<end_of_text>`:
    /// `(ids row-major, row width, position of each row's end-of-text token)`.
    pub fn batch(&self, texts: &[&str]) -> (Vec<i64>, usize, Vec<usize>) {
        let ids: Vec<Vec<u32>> = texts.iter().map(|t| self.encode(t)).collect();
        let width = ids.iter().map(Vec::len).max().unwrap_or(0);
        let pad = i64::from(self.end_of_text());
        let flat = ids
            .iter()
            .flat_map(|row| {
                let padding = std::iter::repeat_n(pad, width - row.len());
                row.iter().map(|&id| i64::from(id)).chain(padding)
            })
            .collect();
        let eot = ids.iter().map(|row| row.len() - 1).collect();
        (flat, width, eot)
    }

    /// The text of token ids as [`ClipTokenizer::encode`] writes them: up to
    /// `<end_of_text>` (padding after it ignored), lower-cased, words
    /// separated by single spaces; `None` if an id is outside the vocabulary.
    pub fn decode(&self, ids: &[u32]) -> Option<String> {
        let (start, end) = (self.inner.start_of_text(), self.inner.end_of_text());
        let mut tokens = Vec::new();
        for &id in ids {
            let token = u16::try_from(id)
                .ok()
                .and_then(|id| Token::from_u16(id, &self.inner))?;
            if token == end {
                break;
            }
            if token != start {
                tokens.push(token);
            }
        }
        Some(self.inner.decode(tokens).trim_end().to_string())
    }

    /// The id of `<end_of_text>`, where the text tower is read out.
    pub fn end_of_text(&self) -> u32 {
        u32::from(self.inner.end_of_text().to_u16())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference ids of `../shared/MISSION.md` (OpenAI's tokenizer).
    #[test]
    fn openai_vocabulary_gives_the_reference_ids() {
        let t = ClipTokenizer::openai(77);
        assert_eq!(t.encode("a diagram"), [49406, 320, 22697, 49407]);
        assert_eq!(
            t.encode("a humanoid robot"),
            [49406, 320, 3175, 14758, 8797, 49407]
        );
        assert_eq!(t.encode("A Humanoid   ROBOT"), t.encode("a humanoid robot"));
        let long = t.encode(&"robot ".repeat(100));
        assert_eq!(long.len(), 77);
        assert_eq!((long[0], long[76]), (49406, 49407));
    }

    #[test]
    fn decoding_gives_back_the_text_and_stops_at_its_end() {
        let t = ClipTokenizer::openai(77);
        let mut ids = t.encode("Put the red cube on the blue cube");
        ids.extend([0, 0, 0]);
        let text = t.decode(&ids).unwrap();
        assert_eq!(text, "put the red cube on the blue cube");
        assert_eq!(
            t.encode(&text),
            t.encode("put the red cube on the blue cube")
        );
        assert_eq!(t.decode(&[49406, 320, 49407, 22697]).unwrap(), "a");
        assert_eq!(t.decode(&[320, 49408]), None);
    }
}
