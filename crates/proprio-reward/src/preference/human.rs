//! A person as the labeller. Each round's pairs go to a folder as GIF clips,
//! and the run waits until the answers come back, written by
//! `proprio reward-model label DIR` (the viewer) or by hand. Files rather than
//! a socket: the run may be headless on another machine, with the folder shared.
//!
//! `DIR/round-NNNN/` holds `pair-KKK.gif` for each pair (the first segment on
//! the left, the second on the right, each segment's views stacked top to
//! bottom), then `pairs.json` (`{"pairs": K, "goal": …}`), written last, which says that
//! the round is ready. The answers come back as `labels.json`
//! (`{"labels": [1, 0, 0.5, …]}`; 1: the left clip is better, 0: the right
//! one, 0.5: equally good).

use crate::roboclip::read_video;
use crate::{Result, RewardError};
use image::codecs::gif::{GifEncoder, Repeat};
use image::{Delay, Frame, RgbImage, RgbaImage};
use proprio::serde_json::{self, Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file that says a round's pairs are ready.
pub const QUESTIONS_FILE: &str = "pairs.json";
/// The file the person's answers are written to.
pub const ANSWERS_FILE: &str = "labels.json";

/// One segment as the renderer saw it: `pixels` holds its frames one after
/// another, each frame `views` square images of `side` pixels (RGB).
#[derive(Debug, Clone, Copy)]
pub struct Clip<'a> {
    pub pixels: &'a [u8],
    pub side: usize,
    pub views: usize,
}

impl Clip<'_> {
    fn frames(&self) -> usize {
        self.pixels.len() / (self.views * self.side * self.side * 3)
    }

    /// Frame `t`'s pixel at column `x`, row `y` (views stacked top to bottom).
    fn pixel(&self, t: usize, x: usize, y: usize) -> [u8; 3] {
        let at = ((t * self.views * self.side + y) * self.side + x) * 3;
        [self.pixels[at], self.pixels[at + 1], self.pixels[at + 2]]
    }
}

/// Width of the gap between the two clips of a pair, pixels.
const GAP: usize = 4;

/// Writes two segments side by side as one looping GIF, 10 frames a second.
pub fn write_pair(path: &Path, left: Clip, right: Clip) -> Result<()> {
    let (side, height) = (left.side, left.views * left.side);
    let width = 2 * side + GAP;
    let file = std::fs::File::create(path).map_err(|e| RewardError::io(path, e))?;
    let mut encoder = GifEncoder::new_with_speed(std::io::BufWriter::new(file), 10);
    encoder
        .set_repeat(Repeat::Infinite)
        .map_err(|e| RewardError::io(path, e))?;
    for t in 0..left.frames().max(right.frames()) {
        let mut image = RgbaImage::from_pixel(width as u32, height as u32, [0, 0, 0, 255].into());
        for (clip, x0) in [(left, 0), (right, side + GAP)] {
            let t = t.min(clip.frames() - 1);
            for y in 0..height {
                for x in 0..side {
                    let [r, g, b] = clip.pixel(t, x, y);
                    image.put_pixel((x0 + x) as u32, y as u32, [r, g, b, 255].into());
                }
            }
        }
        let delay = Delay::from_saturating_duration(Duration::from_millis(100));
        encoder
            .encode_frame(Frame::from_parts(image, 0, 0, delay))
            .map_err(|e| RewardError::io(path, e))?;
    }
    Ok(())
}

/// Writes `value` to `path` through a temporary file, so a reader never sees half of it.
fn write_json(path: &Path, value: &Value) -> Result<()> {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, value.to_string()).map_err(|e| RewardError::io(&partial, e))?;
    std::fs::rename(&partial, path).map_err(|e| RewardError::io(path, e))
}

/// Reads a round's answers, checking there is one per pair and each is 0, 0.5 or 1.
fn read_answers(path: &Path, pairs: usize) -> Result<Vec<f32>> {
    let text = std::fs::read_to_string(path).map_err(|e| RewardError::io(path, e))?;
    let bad = |why: String| RewardError::io(path, why);
    let value: Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let labels = value["labels"]
        .as_array()
        .ok_or_else(|| bad("no \"labels\" array".into()))?;
    if labels.len() != pairs {
        return Err(bad(format!("{} labels for {pairs} pairs", labels.len())));
    }
    labels
        .iter()
        .map(|l| match l.as_f64() {
            Some(v) if v == 0.0 || v == 0.5 || v == 1.0 => Ok(v as f32),
            _ => Err(bad(format!(
                "a label must be 1 (left better), 0 (right) or 0.5 (equal), not {l}"
            ))),
        })
        .collect()
}

/// The run's side: asks a round of questions and waits for the answers.
#[derive(Debug)]
pub struct HumanDesk {
    dir: PathBuf,
    goal: Option<String>,
    round: usize,
    poll: Duration,
}

impl HumanDesk {
    /// A desk in `dir` (created if missing), numbering its rounds after any
    /// already there; `goal` is shown to the person with every pair.
    pub fn new(dir: &Path, goal: Option<String>) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| RewardError::io(dir, e))?;
        let round = rounds(dir)?.last().map_or(0, |(n, _)| n + 1);
        Ok(Self {
            dir: dir.to_path_buf(),
            goal,
            round,
            poll: Duration::from_millis(200),
        })
    }

    /// Writes `pairs` as one round and blocks until its answers arrive.
    pub fn ask(&mut self, pairs: &[(Clip, Clip)]) -> Result<Vec<f32>> {
        let round = self.dir.join(format!("round-{:04}", self.round));
        std::fs::create_dir(&round).map_err(|e| RewardError::io(&round, e))?;
        for (k, (left, right)) in pairs.iter().enumerate() {
            write_pair(&round.join(format!("pair-{k:03}.gif")), *left, *right)?;
        }
        let questions = json!({"pairs": pairs.len(), "goal": self.goal});
        write_json(&round.join(QUESTIONS_FILE), &questions)?;
        eprintln!(
            "waiting for {} preference labels in {} (`proprio reward-model label {}`)",
            pairs.len(),
            round.display(),
            self.dir.display()
        );
        let answers = round.join(ANSWERS_FILE);
        while !answers.exists() {
            std::thread::sleep(self.poll);
        }
        self.round += 1;
        read_answers(&answers, pairs.len())
    }
}

/// The numbered round folders in `dir`, in order.
fn rounds(dir: &Path) -> Result<Vec<(usize, PathBuf)>> {
    let entries = std::fs::read_dir(dir).map_err(|e| RewardError::io(dir, e))?;
    let mut found: Vec<(usize, PathBuf)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?;
            Some((name.strip_prefix("round-")?.parse().ok()?, p))
        })
        .collect();
    found.sort();
    Ok(found)
}

/// The person's side: a round whose pairs are ready and not yet answered.
#[derive(Debug, Clone)]
pub struct OpenRound {
    /// The round's folder.
    pub dir: PathBuf,
    /// Its pair clips, in order.
    pub pairs: Vec<PathBuf>,
    /// What the run is after, if its config says.
    pub goal: Option<String>,
}

impl OpenRound {
    /// The oldest unanswered round in `dir`, if any.
    pub fn oldest(dir: &Path) -> Result<Option<Self>> {
        for (_, round) in rounds(dir)? {
            let questions = round.join(QUESTIONS_FILE);
            if !questions.exists() || round.join(ANSWERS_FILE).exists() {
                continue;
            }
            let text =
                std::fs::read_to_string(&questions).map_err(|e| RewardError::io(&questions, e))?;
            let value: Value = serde_json::from_str(&text)
                .map_err(|e| RewardError::io(&questions, e.to_string()))?;
            let count = value["pairs"]
                .as_u64()
                .ok_or_else(|| RewardError::io(&questions, "no \"pairs\" count".to_string()))?;
            let pairs = (0..count)
                .map(|k| round.join(format!("pair-{k:03}.gif")))
                .collect();
            let goal = value["goal"].as_str().map(str::to_owned);
            return Ok(Some(Self {
                dir: round,
                pairs,
                goal,
            }));
        }
        Ok(None)
    }

    /// The frames of pair `k`'s clip.
    pub fn frames(&self, k: usize) -> Result<Vec<RgbImage>> {
        read_video(&self.pairs[k])
    }

    /// Writes the answers (one per pair: 1 left better, 0 right, 0.5 equal).
    pub fn answer(&self, labels: &[f32]) -> Result<()> {
        if labels.len() != self.pairs.len() {
            return Err(RewardError::Input(format!(
                "{} labels for {} pairs",
                labels.len(),
                self.pairs.len()
            )));
        }
        write_json(&self.dir.join(ANSWERS_FILE), &json!({ "labels": labels }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("proprio-human-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// Waits for the oldest open round in `dir`, as the viewer does.
    fn open_round(dir: &Path) -> OpenRound {
        loop {
            if let Ok(Some(round)) = OpenRound::oldest(dir) {
                return round;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A clip of `frames` frames of two 4-px views, every pixel of frame t,
    /// view v coloured `colour(t, v)`.
    fn clip_pixels(frames: usize, colour: impl Fn(usize, usize) -> [u8; 3]) -> Vec<u8> {
        let mut out = Vec::new();
        for t in 0..frames {
            for v in 0..2 {
                out.extend(std::iter::repeat_n(colour(t, v), 16).flatten());
            }
        }
        out
    }

    #[test]
    fn a_round_is_shown_as_side_by_side_clips_and_its_answers_come_back() {
        let dir = scratch("round");
        let mut desk = HumanDesk::new(&dir, Some("the pole upright".into())).unwrap();
        let left = clip_pixels(3, |t, v| [(80 * t) as u8, 0, (200 * v) as u8]);
        let right = clip_pixels(2, |_, _| [0, 255, 0]);
        let clip = |pixels| Clip {
            pixels,
            side: 4,
            views: 2,
        };
        let person = {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let round = open_round(&dir);
                assert_eq!(round.pairs.len(), 2);
                assert_eq!(round.goal.as_deref(), Some("the pole upright"));
                let frames = round.frames(0).unwrap();
                round.answer(&[1.0, 0.5]).unwrap();
                frames
            })
        };
        let pair = (clip(&left), clip(&right));
        assert_eq!(desk.ask(&[pair, pair]).unwrap(), vec![1.0, 0.5]);
        let frames = person.join().unwrap();
        assert_eq!(frames.len(), 3, "as long as the longer clip");
        assert_eq!(frames[0].dimensions(), (2 * 4 + GAP as u32, 2 * 4));
        let near =
            |a: &image::Rgb<u8>, b: [u8; 3]| a.0.iter().zip(b).all(|(x, y)| x.abs_diff(y) < 12);
        for (t, frame) in frames.iter().enumerate() {
            let top_left = frame.get_pixel(1, 1);
            let bottom_left = frame.get_pixel(1, 6);
            assert!(
                near(top_left, [(80 * t) as u8, 0, 0]),
                "t {t}: {top_left:?}"
            );
            assert!(
                near(bottom_left, [(80 * t) as u8, 0, 200]),
                "t {t}: {bottom_left:?}"
            );
            assert!(near(frame.get_pixel(4 + GAP as u32 + 1, 6), [0, 255, 0]));
        }
        assert!(OpenRound::oldest(&dir).unwrap().is_none(), "answered");
        assert_eq!(
            HumanDesk::new(&dir, None).unwrap().round,
            1,
            "numbered after it"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn malformed_answers_are_an_error_naming_the_file() {
        let dir = scratch("bad");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(ANSWERS_FILE);
        for (text, expected) in [
            ("{\"labels\": [1, 0]}", "2 labels for 3 pairs"),
            ("{\"labels\": [1, 2, 0]}", "not 2"),
            ("{\"answers\": []}", "no \"labels\""),
            ("[1, 0", "EOF"),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = read_answers(&path, 3).unwrap_err().to_string();
            assert!(err.starts_with(&path.display().to_string()), "{err}");
            assert!(err.contains(expected), "{text}: {err}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
