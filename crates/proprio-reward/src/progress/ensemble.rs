//! A pessimistic ensemble of progress models: each reads the same frames
//! through its own CLIP, and the step pays from the lowest reading. Models
//! fitted on different CLIPs are fooled by different frames (a hand held
//! over the arm's base reads as progress to one and not to another), while
//! real progress reads high to all; the lowest reading keeps the second.

use super::ProgressHead;
use crate::clip::{ClipModel, Embeddings};
use crate::config::Shaping;
use crate::wrapper::{RewardHead, StepFrames};
use crate::{Result, RewardError};

/// One model of the ensemble: its head (paying its raw progress) and the CLIP
/// it reads frames through (`None`: the wrapper's, whose embeddings the step carries).
pub struct Member {
    /// The CLIP the model was fitted on, when it is not the wrapper's.
    pub clip: Option<ClipModel>,
    /// The model, read under one instruction, paying progress (not its increase).
    pub head: ProgressHead,
}

/// Pays from the lowest progress its members read of each env's frames.
pub struct ProgressEnsemble {
    members: Vec<Member>,
    shaping: Shaping,
    /// Per env, the lowest progress read after its previous step (0 before its first).
    last: Vec<f32>,
    /// Per member, the progress it read of each stepped env (rows reused).
    readings: Vec<Vec<f32>>,
}

impl ProgressEnsemble {
    /// `members` (at least two) scoring `num_envs` envs, paying as `shaping` says.
    pub fn new(members: Vec<Member>, shaping: Shaping, num_envs: usize) -> Result<Self> {
        if members.len() < 2 {
            return Err(RewardError::Input(
                "an ensemble of progress models needs at least two".into(),
            ));
        }
        Ok(Self {
            readings: vec![Vec::new(); members.len()],
            members,
            shaping,
            last: vec![0.0; num_envs],
        })
    }
}

impl RewardHead for ProgressEnsemble {
    fn rewards(&mut self, step: &StepFrames, out: &mut [f32]) -> Result<()> {
        if step.instructions.is_some() {
            return Err(RewardError::Input(
                "an ensemble of progress models reads every env under one instruction, and this env carries its own: use one model".into(),
            ));
        }
        let count = step.envs.len();
        let frames = step.views.len();
        for (member, reading) in self.members.iter_mut().zip(&mut self.readings) {
            reading.resize(count, 0.0);
            let own: Embeddings;
            let views = match &member.clip {
                Some(clip) => {
                    own = clip.embed_frames(step.pixels, frames, step.side, step.side, 3)?;
                    &own
                }
                None => step.views,
            };
            let seen = StepFrames { views, ..*step };
            member.head.rewards(&seen, reading)?;
        }
        for (k, &env) in step.envs.iter().enumerate() {
            let lowest = self
                .readings
                .iter()
                .map(|r| r[k])
                .fold(f32::INFINITY, f32::min);
            out[k] = self.shaping.pay(lowest, &mut self.last[env]);
        }
        Ok(())
    }

    fn restart(&mut self, env: usize) {
        for member in &mut self.members {
            member.head.restart(env);
        }
        self.last[env] = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::head::tests::{frame, seeded_model, step};

    fn head(seed: u64) -> ProgressHead {
        ProgressHead::new(
            seeded_model(2, seed),
            vec![0.6, -0.8],
            false,
            Shaping::Progress,
            2,
        )
        .unwrap()
    }

    /// Two envs' frames `a` and `b`, view-major as the wrapper hands them over.
    fn views(a: [f32; 4], b: [f32; 4]) -> Embeddings {
        Embeddings {
            dim: 2,
            values: [&a[..2], &b[..2], &a[2..], &b[2..]].concat(),
        }
    }

    #[test]
    fn it_pays_the_increase_of_the_lowest_reading() {
        let members = [3, 5].map(|seed| Member {
            clip: None,
            head: head(seed),
        });
        let mut ensemble = ProgressEnsemble::new(members.into(), Shaping::Increase, 2).unwrap();
        let (mut alone_a, mut alone_b) = (head(3), head(5));
        let (mut lowest_before, mut either_lower) = ([0.0f32; 2], [false; 2]);
        for t in 0..6 {
            let views = views(frame(5 - t), frame(t));
            let step = step(&views, &[0, 1], &[false; 2]);
            let (mut a, mut b, mut paid) = ([0.0; 2], [0.0; 2], [0.0; 2]);
            alone_a.rewards(&step, &mut a).unwrap();
            alone_b.rewards(&step, &mut b).unwrap();
            ensemble.rewards(&step, &mut paid).unwrap();
            for k in 0..2 {
                let lowest = a[k].min(b[k]);
                assert_eq!(paid[k], lowest - lowest_before[k], "step {t}, env {k}");
                lowest_before[k] = lowest;
                either_lower[usize::from(a[k] < b[k])] = true;
            }
        }
        assert_eq!(
            either_lower, [true; 2],
            "each model is the lower one somewhere"
        );
        // A restart forgets the episode: its next step pays the whole lowest reading.
        ensemble.restart(1);
        alone_a.restart(1);
        alone_b.restart(1);
        let views = views(frame(0), frame(0));
        let step = step(&views, &[0, 1], &[false; 2]);
        let (mut a, mut b, mut paid) = ([0.0; 2], [0.0; 2], [0.0; 2]);
        alone_a.rewards(&step, &mut a).unwrap();
        alone_b.rewards(&step, &mut b).unwrap();
        ensemble.rewards(&step, &mut paid).unwrap();
        assert_eq!(paid[1], a[1].min(b[1]));
    }

    #[test]
    fn one_model_and_an_env_with_its_own_instructions_are_refused() {
        let one = vec![Member {
            clip: None,
            head: head(3),
        }];
        assert!(ProgressEnsemble::new(one, Shaping::Progress, 1).is_err());
        let members = [3, 4].map(|seed| Member {
            clip: None,
            head: head(seed),
        });
        let mut ensemble = ProgressEnsemble::new(members.into(), Shaping::Progress, 2).unwrap();
        let (views, texts) = (views(frame(1), frame(2)), views(frame(3), frame(4)));
        let mut step = step(&views, &[0, 1], &[false; 2]);
        step.instructions = Some((&texts, &[0, 1]));
        let error = ensemble.rewards(&step, &mut [0.0; 2]).unwrap_err();
        assert!(error.to_string().contains("one instruction"), "{error}");
    }
}
