//! A progress model as a reward head: each env's last frames (its views'
//! embeddings side by side) read under the task's instruction (or each
//! env's own, for an env whose observations carry one), every stepped env
//! in one forward pass; it pays the progress or its increase.

use super::{ProgressModel, ProgressNet};
use crate::clip::TextReading;
use crate::config::Shaping;
use crate::wrapper::{RewardHead, StepFrames};
use crate::{Result, RewardError};
use burn::prelude::*;
use std::collections::{BTreeMap, VecDeque};

/// Reads progress from each env's frames since its episode began (the newest `window`).
pub struct ProgressHead {
    net: ProgressNet,
    reading: TextReading,
    window: usize,
    dim: usize,
    text: Vec<f32>,
    /// Whether an env's own instruction, where its observation carries one, replaces `text`.
    own_instructions: bool,
    /// The model's goal captions, read in its instructions' place ([`ProgressModel::goals`]).
    goals: Option<BTreeMap<String, String>>,
    shaping: Shaping,
    /// Per env, its episode's newest frames, oldest first (at most `window`; rows reused).
    frames: Vec<VecDeque<Vec<f32>>>,
    /// Per env, the progress read after its previous step (0 before its first).
    last: Vec<f32>,
}

impl ProgressHead {
    /// `model` reading `num_envs` envs under the instruction embedded as
    /// `text`, or, with `own_instructions`, under each env's own where its
    /// observation carries one.
    pub fn new(
        model: ProgressModel,
        text: Vec<f32>,
        own_instructions: bool,
        shaping: Shaping,
        num_envs: usize,
    ) -> Result<Self> {
        if text.len() != model.text_dim {
            return Err(RewardError::Input(format!(
                "an instruction of {} values for a model that reads {}",
                text.len(),
                model.text_dim
            )));
        }
        Ok(Self {
            reading: model.config.reading(),
            net: model.net,
            window: model.config.window,
            dim: model.dim,
            text,
            own_instructions,
            goals: model.goals,
            shaping,
            frames: vec![VecDeque::new(); num_envs],
            last: vec![0.0; num_envs],
        })
    }
}

impl RewardHead for ProgressHead {
    fn rewards(&mut self, step: &StepFrames, out: &mut [f32]) -> Result<()> {
        let (count, width) = (step.envs.len(), step.views.dim);
        if count == 0 {
            return Ok(());
        }
        if step.views.len() * width != count * self.dim {
            return Err(RewardError::Input(format!(
                "the progress model reads frames of {} values; the camera gives {} views of {width}",
                self.dim,
                step.views.len() / count
            )));
        }
        let views = self.dim / width;
        let (window, dim) = (self.window, self.dim);
        let mut batch = Vec::with_capacity(count * window * dim);
        for (k, &env) in step.envs.iter().enumerate() {
            let history = &mut self.frames[env];
            let mut row = match history.len() == window {
                true => history.pop_front().unwrap_or_default(),
                false => Vec::with_capacity(dim),
            };
            row.clear();
            row.extend((0..views).flat_map(|v| step.views.row(v * count + k).iter().copied()));
            history.push_back(row);
            // The first frame repeated in front of those the episode lacks (as `samples::pad`).
            let missing = window - history.len();
            for slot in 0..window {
                batch.extend_from_slice(&history[slot.saturating_sub(missing)]);
            }
        }
        let device = Device::flex();
        let frames = Tensor::<3>::from_data(TensorData::new(batch, [count, window, dim]), &device);
        let own = step.instructions.filter(|_| self.own_instructions);
        if let Some((embedded, _)) = own.filter(|(e, _)| e.dim != self.text.len()) {
            return Err(RewardError::Input(format!(
                "the env's instructions embed to {} values; the progress model reads {}",
                embedded.dim,
                self.text.len()
            )));
        }
        let texts: Vec<f32> = (0..count)
            .flat_map(|k| match own {
                Some((embedded, rows)) => embedded.row(rows[k]),
                None => &self.text,
            })
            .copied()
            .collect();
        let texts =
            Tensor::<2>::from_data(TensorData::new(texts, [count, self.text.len()]), &device);
        let progress = self
            .net
            .forward(frames, texts)
            .slice([0..count, window - 1..window])
            .into_data()
            .try_into_vec::<f32>()
            .map_err(crate::clip::backend)?;
        for (k, &env) in step.envs.iter().enumerate() {
            out[k] = self.shaping.pay(progress[k], &mut self.last[env]);
        }
        Ok(())
    }

    fn restart(&mut self, env: usize) {
        self.frames[env].clear();
        self.last[env] = 0.0;
    }

    fn text_reading(&self) -> TextReading {
        self.reading
    }

    fn instruction_goals(&self) -> Option<&BTreeMap<String, String>> {
        self.goals.as_ref().filter(|_| self.own_instructions)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::clip::Embeddings;
    use crate::progress::{Episode, EpisodeKind, ProgressConfig, ProgressData, running_progress};

    /// A small model reading `views` views of two values, weights from `seed`.
    pub(in crate::progress) fn seeded_model(views: usize, seed: u64) -> ProgressModel {
        let cfg = ProgressConfig {
            window: 3,
            width: 8,
            heads: 2,
            ..ProgressConfig::default()
        };
        let device = Device::flex();
        ProgressModel {
            net: crate::seeded(&device, seed, || {
                ProgressNet::new(&cfg, 2 * views, 2, &device)
            }),
            config: cfg,
            dim: 2 * views,
            text_dim: 2,
            instructions: vec!["lift".into()],
            goals: None,
        }
    }

    fn model(views: usize) -> ProgressModel {
        seeded_model(views, 3)
    }

    pub(in crate::progress) fn step<'a>(
        views: &'a Embeddings,
        envs: &'a [usize],
        done: &'a [bool],
    ) -> StepFrames<'a> {
        StepFrames {
            embeddings: views,
            views,
            envs,
            done,
            task: &[0.0; 2],
            pixels: &[],
            side: 0,
            instructions: None,
        }
    }

    /// Frame `t` of a test episode: two views of two values.
    pub(in crate::progress) fn frame(t: usize) -> [f32; 4] {
        let x = t as f32 * 0.3;
        [x.sin(), x.cos(), (2.0 * x).cos(), -x]
    }

    #[test]
    fn it_pays_each_envs_progress_increase_as_the_model_reads_its_episode() {
        let text = vec![0.6, -0.8];
        let mut head =
            ProgressHead::new(model(2), text.clone(), false, Shaping::Increase, 2).unwrap();
        // Env 1 runs episode frames 0..5 (env 0 the same reversed, stepped beside it).
        let mut paid = Vec::new();
        for t in 0..5 {
            let (a, b) = (frame(4 - t), frame(t));
            // View-major rows: view 0 of env 0, view 0 of env 1, view 1 of env 0, view 1 of env 1.
            let values = [&a[..2], &b[..2], &a[2..], &b[2..]].concat();
            let views = Embeddings { dim: 2, values };
            let mut out = [0.0; 2];
            head.rewards(&step(&views, &[0, 1], &[false; 2]), &mut out)
                .unwrap();
            paid.push(out[1]);
        }
        let episode = ProgressData {
            dim: 4,
            texts: vec![text],
            episodes: vec![Episode {
                frames: (0..5).flat_map(frame).collect(),
                text: 0,
                kind: EpisodeKind::Demo,
                unscored: 0,
            }],
        };
        let read = running_progress(&model(2).net, &episode, 0, 3).unwrap();
        let mut before = 0.0;
        for (t, (&p, &r)) in read.iter().zip(&paid).enumerate() {
            assert!(
                (r - (p - before)).abs() < 1e-6,
                "step {t}: paid {r}, read {p} after {before}"
            );
            before = p;
        }
        // A restart forgets the episode: its first step pays the first frame's progress again.
        head.restart(1);
        let (a, b) = (frame(0), frame(0));
        let views = Embeddings {
            dim: 2,
            values: [&a[..2], &b[..2], &a[2..], &b[2..]].concat(),
        };
        let mut out = [0.0; 2];
        head.rewards(&step(&views, &[0, 1], &[false; 2]), &mut out)
            .unwrap();
        assert!((out[1] - read[0]).abs() < 1e-6);
    }

    #[test]
    fn a_camera_with_the_wrong_views_is_refused() {
        let mut head =
            ProgressHead::new(model(2), vec![1.0, 0.0], false, Shaping::Progress, 1).unwrap();
        let views = Embeddings {
            dim: 2,
            values: vec![1.0, 0.0],
        };
        let error = head
            .rewards(&step(&views, &[0], &[false]), &mut [0.0])
            .unwrap_err()
            .to_string();
        assert!(error.contains("1 views"), "{error}");
        assert!(ProgressHead::new(model(1), vec![1.0], false, Shaping::Progress, 1).is_err());
    }

    #[test]
    fn each_env_is_read_under_its_own_instruction_where_it_carries_one() {
        let texts = Embeddings {
            dim: 2,
            values: vec![0.6, -0.8, -1.0, 0.0],
        };
        let (a, b) = (frame(2), frame(3));
        let views = Embeddings {
            dim: 2,
            values: [&a[..2], &b[..2], &a[2..], &b[2..]].concat(),
        };
        let read = |text: &[f32], own: bool| {
            let mut head =
                ProgressHead::new(model(2), text.to_vec(), own, Shaping::Progress, 2).unwrap();
            let mut step = step(&views, &[0, 1], &[false; 2]);
            step.instructions = Some((&texts, &[1, 0]));
            let mut out = [0.0; 2];
            head.rewards(&step, &mut out).unwrap();
            out
        };
        let (first, second) = (read(texts.row(0), false), read(texts.row(1), false));
        assert_ne!(
            first, second,
            "the instruction changes what the model reads"
        );
        // Env 0 carries the second instruction, env 1 the first; the default text is ignored.
        assert_eq!(read(&[0.0, 1.0], true), [second[0], first[1]]);
        // Without `own_instructions` the configured text holds for every env.
        assert_eq!(read(texts.row(0), false), first);
    }
}
