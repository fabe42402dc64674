//! What a progress model learns from: episodes as frame embeddings, and the
//! windows drawn from them with their progress targets (ReWiND's
//! augmentations: rewound demonstrations, mismatched instructions, failures),
//! and a batch of windows as the tensors the network reads.

use super::ProgressConfig;
use crate::{Result, RewardError};
use burn::prelude::*;
use proprio::EnvRng;
use proprio::rand::RngExt;
use proprio::rand::seq::SliceRandom;

/// What an episode shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EpisodeKind {
    /// A successful demonstration: progress `t / (T − 1)` at frame `t` of `T`.
    Demo,
    /// A failed or random-action episode: progress 0 (from
    /// [`Episode::unscored`] on).
    Failure,
}

/// One episode's frames as unit embeddings, in time order.
#[derive(Debug, Clone, PartialEq)]
pub struct Episode {
    /// `[len × dim]` frame embeddings.
    pub frames: Vec<f32>,
    /// Its instruction, an index into [`ProgressData::texts`].
    pub text: usize,
    /// A demonstration or a failure.
    pub kind: EpisodeKind,
    /// Frames before this one carry no target: a learner's failure is only
    /// known to be stalled or drifting once a demonstration would have
    /// finished, and before that it may look like one on its way (0 for
    /// demonstrations and random play).
    pub unscored: usize,
}

impl Episode {
    /// Frames in the episode.
    pub fn len(&self, dim: usize) -> usize {
        self.frames.len() / dim.max(1)
    }

    /// The progress frame `t` of this episode shows.
    pub fn progress(&self, t: usize, dim: usize) -> f32 {
        match self.kind {
            EpisodeKind::Failure => 0.0,
            EpisodeKind::Demo => {
                let last = self.len(dim).saturating_sub(1);
                if last == 0 {
                    1.0
                } else {
                    t as f32 / last as f32
                }
            }
        }
    }
}

/// Episodes and the embeddings of their instructions.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressData {
    /// Width of a frame's embedding (its views' side by side).
    pub dim: usize,
    /// The instructions' embeddings, all of one width.
    pub texts: Vec<Vec<f32>>,
    /// The episodes.
    pub episodes: Vec<Episode>,
}

/// How a training window was drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowKind {
    /// A demonstration's frames up to a point.
    Forward,
    /// A demonstration played forward, then backward (its progress falls).
    Rewound,
    /// A demonstration's frames under another instruction (progress 0).
    Mismatched,
    /// A failed episode's frames (progress 0).
    Failed,
    /// A demonstration's frames in a random order, each its own progress.
    Scrambled,
}

/// A training window: which frames of which episode, in the order shown,
/// under which instruction, and the progress each should read as.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    /// The episode, an index into [`ProgressData::episodes`].
    pub episode: usize,
    /// Its frames' indices, oldest first (at most the model's window).
    pub frames: Vec<usize>,
    /// The instruction shown with them.
    pub text: usize,
    /// Progress targets, one a frame.
    pub targets: Vec<f32>,
    /// Each target's weight in the loss: 0 where the frame carries none.
    pub weights: Vec<f32>,
    /// How it was drawn.
    pub kind: WindowKind,
}

impl ProgressData {
    /// Checks that every episode has frames of `dim` values and a known instruction.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(RewardError::Input(m));
        let width = self.text_dim();
        if self.dim == 0 || width == 0 || self.texts.iter().any(|t| t.len() != width) {
            return bad(
                "frame and instruction embeddings need values, every instruction as many".into(),
            );
        }
        for (k, e) in self.episodes.iter().enumerate() {
            if e.frames.is_empty() || !e.frames.len().is_multiple_of(self.dim) {
                return bad(format!(
                    "episode {k} has {} values, not whole frames of {}",
                    e.frames.len(),
                    self.dim
                ));
            }
            if e.text >= self.texts.len() {
                return bad(format!(
                    "episode {k} names instruction {} of {}",
                    e.text,
                    self.texts.len()
                ));
            }
            if e.frames.iter().any(|v| !v.is_finite()) {
                return bad(format!("episode {k} has a non-finite embedding"));
            }
        }
        Ok(())
    }

    /// Width of an instruction's embedding (0 when there is none).
    pub fn text_dim(&self) -> usize {
        self.texts.first().map_or(0, Vec::len)
    }

    /// Indices of the episodes of `kind`.
    pub fn of_kind(&self, kind: EpisodeKind) -> Vec<usize> {
        (0..self.episodes.len())
            .filter(|&k| self.episodes[k].kind == kind)
            .collect()
    }

    /// A control: the demonstrations with their frames shuffled in time (the
    /// progress targets stay in order) and no failures (which would teach
    /// that frames like a start read 0). A fit to it can learn no order, so
    /// its value-order correlation on demonstrations in order is about 0.
    pub fn time_shuffled_control(&self, rng: &mut EnvRng) -> Self {
        let dim = self.dim;
        let mut data = self.clone();
        data.episodes.retain(|e| e.kind == EpisodeKind::Demo);
        for e in &mut data.episodes {
            let mut order: Vec<usize> = (0..e.len(dim)).collect();
            order.shuffle(rng);
            e.frames = order
                .iter()
                .flat_map(|&t| e.frames[t * dim..(t + 1) * dim].iter().copied())
                .collect();
        }
        data
    }

    /// One training window of `cfg.window` frames drawn from `demos` and
    /// `failures` (indices of this data's episodes): rewound, mismatched,
    /// failed and scrambled windows at `cfg`'s shares when possible,
    /// forward otherwise.
    /// Each holds a random number of real frames, the first of them repeated
    /// in front (see [`pad`]), so that no window's shape tells the time.
    pub fn draw(
        &self,
        demos: &[usize],
        failures: &[usize],
        cfg: &ProgressConfig,
        rng: &mut EnvRng,
    ) -> Window {
        let ProgressConfig {
            window,
            rewind,
            mismatch,
            failure,
            scramble,
            ..
        } = *cfg;
        let roll: f64 = rng.random();
        let real = rng.random_range(1..=window);
        let texts = self.texts.len();
        if (roll < failure && !failures.is_empty()) || demos.is_empty() {
            let episode = failures[rng.random_range(0..failures.len())];
            return self.forward(episode, (real, window), WindowKind::Failed, rng);
        }
        let episode = demos[rng.random_range(0..demos.len())];
        if roll < failure + mismatch && texts > 1 {
            let mut w = self.forward(episode, (real, window), WindowKind::Mismatched, rng);
            let other = rng.random_range(0..texts - 1);
            w.text = if other >= w.text { other + 1 } else { other };
            w.targets.fill(0.0);
            return w;
        }
        let len = self.episodes[episode].len(self.dim);
        if roll < failure + mismatch + rewind && len > 1 {
            // Forward to `top`, then back `back` frames; the newest `real` kept.
            let top = rng.random_range(1..len);
            let back = rng.random_range(1..=top);
            let path: Vec<usize> = (0..=top).chain((top - back..top).rev()).collect();
            let frames = pad(&path[path.len().saturating_sub(real)..], window);
            return self.window(episode, frames, WindowKind::Rewound);
        }
        if roll < failure + mismatch + rewind + scramble {
            let mut frames: Vec<usize> = (0..len).collect();
            frames.shuffle(rng);
            frames.truncate(real);
            return self.window(episode, pad(&frames, window), WindowKind::Scrambled);
        }
        self.forward(episode, (real, window), WindowKind::Forward, rng)
    }

    /// The newest `real` frames up to a frame drawn uniformly, padded to `window`.
    fn forward(
        &self,
        episode: usize,
        (real, window): (usize, usize),
        kind: WindowKind,
        rng: &mut EnvRng,
    ) -> Window {
        let e = &self.episodes[episode];
        let len = e.len(self.dim);
        let end = rng.random_range(e.unscored.min(len - 1)..len);
        let frames: Vec<usize> = (end + 1 - real.min(end + 1)..=end).collect();
        self.window(episode, pad(&frames, window), kind)
    }

    fn window(&self, episode: usize, frames: Vec<usize>, kind: WindowKind) -> Window {
        let e = &self.episodes[episode];
        let targets = frames.iter().map(|&t| e.progress(t, self.dim)).collect();
        let weights = frames
            .iter()
            .map(|&t| if t < e.unscored { 0.0 } else { 1.0 })
            .collect();
        Window {
            episode,
            frames,
            text: e.text,
            targets,
            weights,
            kind,
        }
    }
}

/// `frames` with its first repeated in front up to `window` in all: a
/// window's shape is the same at an episode's start (where the reward reads
/// fewer frames than the window) as anywhere else.
pub fn pad(frames: &[usize], window: usize) -> Vec<usize> {
    let first = frames.first().copied().unwrap_or(0);
    let mut padded = vec![first; window.saturating_sub(frames.len())];
    padded.extend_from_slice(frames);
    padded
}

/// `windows` (all of one length `l`, see [`pad`]) as tensors: frames
/// `[n, l, dim]`, instructions `[n, text_dim]`, targets and their weights
/// `[n, l]` (0 where a window carries none).
pub(super) fn batch(
    data: &ProgressData,
    windows: &[Window],
    device: &Device,
) -> (Tensor<3>, Tensor<2>, Tensor<2>, Tensor<2>) {
    let (n, dim) = (windows.len(), data.dim);
    let l = windows.first().map_or(1, |w| w.frames.len());
    debug_assert!(windows.iter().all(|w| w.frames.len() == l));
    let mut frames = Vec::with_capacity(n * l * dim);
    let mut texts = Vec::with_capacity(n * data.text_dim());
    let (mut targets, mut weights) = (vec![0.0f32; n * l], vec![0.0f32; n * l]);
    for (i, w) in windows.iter().enumerate() {
        let episode = &data.episodes[w.episode].frames;
        for &t in &w.frames {
            frames.extend_from_slice(&episode[t * dim..(t + 1) * dim]);
        }
        targets[i * l..i * l + w.targets.len()].copy_from_slice(&w.targets);
        weights[i * l..i * l + w.weights.len()].copy_from_slice(&w.weights);
        texts.extend_from_slice(&data.texts[w.text]);
    }
    (
        Tensor::from_data(TensorData::new(frames, [n, l, dim]), device),
        Tensor::from_data(TensorData::new(texts, [n, data.text_dim()]), device),
        Tensor::from_data(TensorData::new(targets, [n, l]), device),
        Tensor::from_data(TensorData::new(weights, [n, l]), device),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> ProgressData {
        let dim = 2;
        let demo = |len: usize, text| Episode {
            frames: (0..len * dim).map(|v| v as f32).collect(),
            text,
            kind: EpisodeKind::Demo,
            unscored: 0,
        };
        ProgressData {
            dim,
            texts: vec![vec![1.0, 0.0], vec![0.0, 1.0]],
            episodes: vec![
                demo(30, 0),
                demo(21, 1),
                Episode {
                    kind: EpisodeKind::Failure,
                    unscored: 10,
                    ..demo(25, 0)
                },
            ],
        }
    }

    /// Where a window's real frames start: the last of its leading repeats.
    fn padding(w: &Window) -> usize {
        w.frames.iter().take_while(|&&t| t == w.frames[0]).count() - 1
    }

    #[test]
    fn each_window_kind_carries_the_progress_its_frames_show() {
        let data = data();
        data.validate().unwrap();
        let rng = &mut proprio::episode_rng(3, 0, 0);
        let mut seen = [0usize; 5];
        let cfg = ProgressConfig {
            window: 8,
            rewind: 0.2,
            mismatch: 0.2,
            failure: 0.2,
            scramble: 0.2,
            ..ProgressConfig::default()
        };
        for _ in 0..2000 {
            let w = data.draw(&[0, 1], &[2], &cfg, rng);
            assert_eq!(w.frames.len(), 8);
            assert_eq!(w.frames.len(), w.targets.len());
            let e = &data.episodes[w.episode];
            // Only a failure's frames before its `unscored` carry no target.
            let scored: Vec<f32> = w
                .frames
                .iter()
                .map(|&t| f32::from(t >= e.unscored))
                .collect();
            assert_eq!(w.weights, scored);
            let last = (e.len(2) - 1) as f32;
            match w.kind {
                WindowKind::Forward => {
                    seen[0] += 1;
                    // The first frame repeated in front, then one frame after another.
                    let start = padding(&w);
                    assert!(w.frames[start..].windows(2).all(|p| p[1] == p[0] + 1));
                    for (&t, &y) in w.frames.iter().zip(&w.targets) {
                        assert_eq!(y, t as f32 / last);
                    }
                    assert_eq!(w.text, e.text);
                }
                WindowKind::Rewound => {
                    seen[1] += 1;
                    // After the padding, up to a peak, then strictly down: the targets fall at the end.
                    let y = &w.targets[padding(&w)..];
                    let peak = y.iter().cloned().fold(0.0, f32::max);
                    let at = y.iter().position(|&v| v == peak).unwrap();
                    assert!(y.len() == 1 || at + 1 < y.len(), "it ends below its peak");
                    assert!(y[at..].windows(2).all(|p| p[1] < p[0]));
                    assert!(y[..=at].windows(2).all(|p| p[1] > p[0]));
                }
                WindowKind::Mismatched => {
                    seen[2] += 1;
                    assert_ne!(w.text, e.text);
                    assert!(w.targets.iter().all(|&y| y == 0.0));
                }
                WindowKind::Failed => {
                    seen[3] += 1;
                    assert_eq!(e.kind, EpisodeKind::Failure);
                    assert!(w.targets.iter().all(|&y| y == 0.0));
                    assert!(*w.frames.last().unwrap() >= 10, "it ends at a scored frame");
                }
                WindowKind::Scrambled => {
                    seen[4] += 1;
                    // Distinct frames of the demonstration, each read as its own progress.
                    let real = &w.frames[padding(&w)..];
                    let mut sorted = real.to_vec();
                    sorted.sort();
                    sorted.dedup();
                    assert_eq!(sorted.len(), real.len());
                    for (&t, &y) in w.frames.iter().zip(&w.targets) {
                        assert_eq!(y, t as f32 / last);
                    }
                    assert_eq!(w.text, e.text);
                }
            }
        }
        // Each kind near its share (forward: the rest).
        for count in seen {
            assert!((300..500).contains(&count), "{seen:?}");
        }
        // Over many draws a scrambled window's real frames are out of order.
        let out_of_order = (0..200)
            .map(|_| {
                data.draw(
                    &[0],
                    &[],
                    &ProgressConfig {
                        rewind: 0.0,
                        mismatch: 0.0,
                        failure: 0.0,
                        scramble: 0.99,
                        ..cfg
                    },
                    rng,
                )
            })
            .filter(|w| w.frames[padding(w)..].windows(2).any(|p| p[1] < p[0]))
            .count();
        assert!(out_of_order > 100, "{out_of_order} of 200");
    }

    #[test]
    fn the_control_keeps_each_demonstrations_frames_in_another_order() {
        let data = data();
        let shuffled = data.time_shuffled_control(&mut proprio::episode_rng(1, 0, 0));
        let rows = |e: &Episode| {
            let mut r: Vec<Vec<u32>> = e
                .frames
                .chunks(2)
                .map(|c| c.iter().map(|v| v.to_bits()).collect())
                .collect();
            r.sort();
            r
        };
        assert_eq!(shuffled.episodes.len(), 2, "the failure is dropped");
        for (a, b) in data.episodes.iter().zip(&shuffled.episodes) {
            assert_eq!(rows(a), rows(b));
            assert_ne!(a, b);
        }
    }

    #[test]
    fn bad_episodes_are_refused_with_a_reason() {
        let mut data = data();
        data.episodes[1].frames.pop();
        assert!(
            data.validate()
                .unwrap_err()
                .to_string()
                .contains("episode 1")
        );
        let mut data = self::tests::data();
        data.episodes[0].text = 5;
        assert!(
            data.validate()
                .unwrap_err()
                .to_string()
                .contains("instruction 5")
        );
    }
}
