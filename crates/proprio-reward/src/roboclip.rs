//! RoboCLIP (Sontakke et al. 2023): one reward per episode, at its end — the
//! similarity of the episode's video embedding to a single demonstration's.
//! With an image model (CLIP) the video embedding is a pooling of the frame
//! embeddings; the demonstration is a video (its frames pooled the same way)
//! or a text — one, or a caption per instruction for an env whose episodes
//! each draw one.

use crate::clip::{ClipModel, Embeddings};
use crate::config::Pooling;
use crate::wrapper::{RewardHead, StepFrames, Watch};
use crate::{Result, RewardError};
use image::{AnimationDecoder, RgbImage};
use std::collections::BTreeMap;
use std::path::Path;

/// The RoboCLIP reward head: zero on every step but an episode's last.
pub struct RoboClip {
    /// The demonstration's unit embedding (empty with `goals`).
    demo: Vec<f32>,
    /// Each instruction's caption: an env's demonstration is its own
    /// episode's, embedded by the wrapper in the instruction's place.
    goals: Option<BTreeMap<String, String>>,
    /// Embedding length.
    dim: usize,
    pooling: Pooling,
    /// Per env: the running sum (mean pooling) or the last frame's embedding.
    pooled: Vec<f32>,
}

impl RoboClip {
    /// A head comparing episodes with the unit embedding `demo`, for `num_envs` envs.
    pub fn new(demo: Vec<f32>, pooling: Pooling, num_envs: usize) -> Result<Self> {
        let norm = demo.iter().map(|x| x * x).sum::<f32>().sqrt();
        if demo.is_empty() || !(norm > 1e-6 && norm.is_finite()) {
            return Err(RewardError::Input(
                "the demonstration's embedding is empty or zero".into(),
            ));
        }
        let dim = demo.len();
        Ok(Self {
            demo: demo.iter().map(|x| x / norm).collect(),
            goals: None,
            dim,
            pooling,
            pooled: vec![0.0; num_envs * dim],
        })
    }

    /// A head comparing each env's episode with its instruction's caption in
    /// `goals`, embedded in `dim` values.
    pub fn per_instruction(
        goals: BTreeMap<String, String>,
        dim: usize,
        pooling: Pooling,
        num_envs: usize,
    ) -> Self {
        Self {
            demo: Vec::new(),
            goals: Some(goals),
            dim,
            pooling,
            pooled: vec![0.0; num_envs * dim],
        }
    }

    /// The demonstration's embedding: its frames embedded and pooled as
    /// `pooling` says, then scaled to unit length.
    pub fn embed_video(
        clip: &ClipModel,
        frames: &[RgbImage],
        pooling: Pooling,
    ) -> Result<Vec<f32>> {
        let chosen = match pooling {
            Pooling::Mean => frames,
            Pooling::Last => &frames[frames.len().saturating_sub(1)..],
        };
        let embeddings = clip.embed_images(chosen)?;
        Ok(mean_row(&embeddings))
    }
}

/// The mean of the rows of `embeddings`.
fn mean_row(embeddings: &Embeddings) -> Vec<f32> {
    let mut mean = vec![0.0; embeddings.dim];
    for k in 0..embeddings.len() {
        for (m, v) in mean.iter_mut().zip(embeddings.row(k)) {
            *m += v / embeddings.len() as f32;
        }
    }
    mean
}

/// The frames of a demonstration: an animated GIF, or a folder of PNG images
/// taken in the order of their file names.
pub fn read_video(path: &Path) -> Result<Vec<RgbImage>> {
    let frames: Vec<RgbImage> = if path.is_dir() {
        let mut files: Vec<_> = std::fs::read_dir(path)
            .map_err(|e| RewardError::io(path, e))?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("png")))
            .collect();
        files.sort();
        files
            .iter()
            .map(|f| {
                image::open(f)
                    .map(|i| i.to_rgb8())
                    .map_err(|e| RewardError::io(f, e))
            })
            .collect::<Result<_>>()?
    } else {
        let file = std::fs::File::open(path).map_err(|e| RewardError::io(path, e))?;
        let decoder = image::codecs::gif::GifDecoder::new(std::io::BufReader::new(file))
            .map_err(|e| RewardError::io(path, format!("not a GIF video: {e}")))?;
        decoder
            .into_frames()
            .map(|f| {
                f.map(|f| image::DynamicImage::ImageRgba8(f.into_buffer()).to_rgb8())
                    .map_err(|e| RewardError::io(path, e))
            })
            .collect::<Result<_>>()?
    };
    if frames.is_empty() {
        return Err(RewardError::io(
            path,
            "the demonstration has no frames (a GIF, or a folder of PNG files)",
        ));
    }
    Ok(frames)
}

impl RewardHead for RoboClip {
    fn watch(&self) -> Watch {
        match self.pooling {
            Pooling::Mean => Watch::EveryStep,
            Pooling::Last => Watch::EpisodeEnds,
        }
    }

    fn rewards(&mut self, step: &StepFrames, out: &mut [f32]) -> Result<()> {
        let dim = self.dim;
        let (embeddings, done) = (step.embeddings, step.done);
        if embeddings.dim != dim {
            return Err(RewardError::Input(format!(
                "frames embed to {} values; the demonstration to {dim}",
                embeddings.dim
            )));
        }
        let captions = match self.goals {
            Some(_) => Some(step.captions()?),
            None => None,
        };
        for (k, &i) in step.envs.iter().enumerate() {
            let pooled = &mut self.pooled[i * dim..(i + 1) * dim];
            let row = embeddings.row(k);
            match self.pooling {
                Pooling::Mean => pooled.iter_mut().zip(row).for_each(|(p, v)| *p += v),
                Pooling::Last => pooled.copy_from_slice(row),
            }
            out[k] = if done[k] {
                let demo = match captions {
                    Some((captions, rows)) => captions.row(rows[k]),
                    None => &self.demo,
                };
                let norm = pooled.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
                pooled.iter().zip(demo).map(|(p, d)| p * d).sum::<f32>() / norm
            } else {
                0.0
            };
        }
        Ok(())
    }

    fn instruction_goals(&self) -> Option<&BTreeMap<String, String>> {
        self.goals.as_ref()
    }

    fn restart(&mut self, env: usize) {
        let dim = self.dim;
        self.pooled[env * dim..(env + 1) * dim].fill(0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn embeddings(rows: &[[f32; 2]]) -> Embeddings {
        Embeddings {
            dim: 2,
            values: rows.iter().flatten().copied().collect(),
        }
    }

    /// Scores `rows` (one per env of `envs`) with `head`.
    fn score(
        head: &mut RoboClip,
        rows: &[[f32; 2]],
        envs: &[usize],
        done: &[bool],
        out: &mut [f32],
    ) {
        let embeddings = embeddings(rows);
        let task = vec![0.0; envs.len()];
        let step = StepFrames {
            embeddings: &embeddings,
            views: &embeddings,
            envs,
            done,
            task: &task,
            pixels: &[],
            side: 0,
            instructions: None,
        };
        head.rewards(&step, out).unwrap();
    }

    #[test]
    fn zero_until_the_last_step_then_the_pooled_similarity() {
        let mut head = RoboClip::new(vec![1.0, 0.0], Pooling::Mean, 2).unwrap();
        let mut out = [9.0; 2];
        score(
            &mut head,
            &[[0.0, 1.0], [1.0, 0.0]],
            &[0, 1],
            &[false, false],
            &mut out,
        );
        assert_eq!(out, [0.0, 0.0]);
        // Env 0 ends on (1, 0): its frames (0, 1) and (1, 0) pool to (0.5, 0.5),
        // whose cosine with the demo (1, 0) is 1/√2.
        score(
            &mut head,
            &[[1.0, 0.0], [0.0, 1.0]],
            &[0, 1],
            &[true, false],
            &mut out,
        );
        assert!((out[0] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        assert_eq!(out[1], 0.0);
        // Env 0 was restarted: its next episode of one frame (1, 0) scores 1.
        head.restart(0);
        score(&mut head, &[[1.0, 0.0]], &[0], &[true], &mut out);
        assert!((out[0] - 1.0).abs() < 1e-6);
    }

    #[test]
    fn last_pooling_scores_the_final_frame_only() {
        let mut head = RoboClip::new(vec![0.0, 2.0], Pooling::Last, 1).unwrap();
        let mut out = [0.0];
        score(&mut head, &[[1.0, 0.0]], &[0], &[false], &mut out);
        score(&mut head, &[[0.6, 0.8]], &[0], &[true], &mut out);
        assert!((out[0] - 0.8).abs() < 1e-6);
    }

    #[test]
    fn per_instruction_each_episode_ends_against_its_own_caption() {
        let mut head = RoboClip::per_instruction(BTreeMap::new(), 2, Pooling::Last, 2);
        let frames = embeddings(&[[0.6, 0.8], [0.6, 0.8]]);
        let captions = embeddings(&[[1.0, 0.0], [0.0, 1.0]]);
        let mut step = StepFrames {
            embeddings: &frames,
            views: &frames,
            envs: &[0, 1],
            done: &[true, true],
            task: &[0.0, 0.0],
            pixels: &[],
            side: 0,
            instructions: Some((&captions, &[1, 0])),
        };
        let mut out = [0.0; 2];
        head.rewards(&step, &mut out).unwrap();
        assert!(
            (out[0] - 0.8).abs() < 1e-6 && (out[1] - 0.6).abs() < 1e-6,
            "{out:?}"
        );
        step.instructions = None;
        assert!(head.rewards(&step, &mut out).is_err());
    }

    #[test]
    fn a_zero_demo_is_an_error() {
        assert!(RoboClip::new(vec![0.0, 0.0], Pooling::Mean, 1).is_err());
        assert!(RoboClip::new(vec![], Pooling::Mean, 1).is_err());
    }
}
