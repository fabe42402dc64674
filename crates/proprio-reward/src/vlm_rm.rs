//! VLM-RM's reward (Rocamonde et al. 2024): the similarity of an image
//! embedding `s` to a goal text's `g`, sharpened by projecting onto the
//! direction from a baseline text `b` to the goal:
//!
//! `d = g − b`, `P = d dᵀ/‖d‖²`, `M = αP + (1−α)I`, `r = 1 − ½‖M(s − g)‖²`.
//!
//! With α = 0 and unit vectors this is the cosine similarity `s·g`; with
//! α = 1 only the component of `s − g` along `d` counts.

use crate::wrapper::{RewardHead, StepFrames};
use crate::{Result, RewardError};
use std::collections::BTreeMap;

/// The goal-baseline projection of one goal, precomputed so a batch of image
/// embeddings is scored with two dot products per image and no allocation.
#[derive(Debug, Clone, PartialEq)]
pub struct VlmRm {
    goal: Vec<f32>,
    /// `d/‖d‖`, the unit direction from the baseline to the goal (zero when α = 0).
    direction: Vec<f32>,
    alpha: f32,
}

impl VlmRm {
    /// The reward of goal `g` against baseline `b` (unit embeddings of the
    /// same length) with projection strength `alpha ∈ [0, 1]`.
    pub fn new(goal: &[f32], baseline: &[f32], alpha: f32) -> Result<Self> {
        if !(0.0..=1.0).contains(&alpha) {
            return Err(RewardError::Input(format!(
                "alpha must lie in [0, 1], not {alpha}"
            )));
        }
        if goal.is_empty() || goal.len() != baseline.len() {
            return Err(RewardError::Input(format!(
                "goal and baseline embeddings must have the same non-zero length, not {} and {}",
                goal.len(),
                baseline.len()
            )));
        }
        let d: Vec<f32> = goal.iter().zip(baseline).map(|(g, b)| g - b).collect();
        let norm = d.iter().map(|x| x * x).sum::<f32>().sqrt();
        if alpha > 0.0 && norm < 1e-6 {
            return Err(RewardError::Input(
                "the goal and baseline texts embed to the same vector: the projection (alpha > 0) needs them apart".into(),
            ));
        }
        let direction = if alpha > 0.0 {
            d.iter().map(|x| x / norm).collect()
        } else {
            vec![0.0; d.len()]
        };
        Ok(Self {
            goal: goal.to_vec(),
            direction,
            alpha,
        })
    }

    /// Embedding length this reward scores.
    pub fn dim(&self) -> usize {
        self.goal.len()
    }

    /// `r = 1 − ½‖M(s − g)‖²` of one image embedding `s`.
    ///
    /// With `e = s − g` and `p = e·u` (`u` the unit direction),
    /// `M e = (1−α) e + α p u`, so `‖M e‖² = (1−α)²‖e‖² + (2α(1−α) + α²) p²`.
    pub fn score(&self, image: &[f32]) -> f32 {
        let (mut ee, mut p) = (0.0f32, 0.0f32);
        for ((s, g), u) in image.iter().zip(&self.goal).zip(&self.direction) {
            let e = s - g;
            ee += e * e;
            p += e * u;
        }
        let a = self.alpha;
        let norm2 = (1.0 - a).powi(2) * ee + (2.0 * a * (1.0 - a) + a * a) * p * p;
        1.0 - 0.5 * norm2
    }

    /// Scores a batch of image embeddings (rows of `self.dim()` values) into `out`.
    pub fn score_batch(&self, images: &[f32], out: &mut [f32]) {
        for (row, r) in images.chunks_exact(self.dim()).zip(out) {
            *r = self.score(row);
        }
    }
}

impl RewardHead for VlmRm {
    fn rewards(&mut self, step: &StepFrames, out: &mut [f32]) -> Result<()> {
        self.score_batch(&step.embeddings.values, out);
        Ok(())
    }

    fn restart(&mut self, _env: usize) {}
}

/// VLM-RM with a goal caption per instruction, for an env whose episodes
/// each draw one: each env's frame is scored against its own episode's
/// caption (embedded by the wrapper in the instruction's place), with one
/// baseline for all.
pub struct InstructedVlmRm {
    goals: BTreeMap<String, String>,
    /// The baseline's unit embedding; without one each goal is its own (α = 0).
    baseline: Option<Vec<f32>>,
    alpha: f32,
    /// A scorer per instruction, in the wrapper's order of first sight.
    scorers: Vec<VlmRm>,
}

impl InstructedVlmRm {
    /// Scores each env against its instruction's caption in `goals`.
    pub fn new(
        goals: BTreeMap<String, String>,
        baseline: Option<Vec<f32>>,
        alpha: f32,
    ) -> Result<Self> {
        if alpha > 0.0 && baseline.is_none() {
            return Err(RewardError::Input(format!(
                "alpha = {alpha} projects onto goal − baseline: give a baseline too (or alpha = 0)"
            )));
        }
        Ok(Self {
            goals,
            baseline,
            alpha,
            scorers: Vec::new(),
        })
    }
}

impl RewardHead for InstructedVlmRm {
    fn rewards(&mut self, step: &StepFrames, out: &mut [f32]) -> Result<()> {
        let (captions, rows) = step.captions()?;
        for row in self.scorers.len()..captions.len() {
            let goal = captions.row(row);
            let baseline = self.baseline.as_deref().unwrap_or(goal);
            self.scorers.push(VlmRm::new(goal, baseline, self.alpha)?);
        }
        for (k, (&row, r)) in rows.iter().zip(out).enumerate() {
            *r = self.scorers[row].score(step.embeddings.row(k));
        }
        Ok(())
    }

    fn restart(&mut self, _env: usize) {}

    fn instruction_goals(&self) -> Option<&BTreeMap<String, String>> {
        Some(&self.goals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    /// `1 − ½‖M(s − g)‖²` with `M` built as a matrix, for comparison.
    fn by_matrix(s: &[f32], g: &[f32], b: &[f32], alpha: f32) -> f32 {
        let n = s.len();
        let d: Vec<f32> = g.iter().zip(b).map(|(g, b)| g - b).collect();
        let dd: f32 = d.iter().map(|x| x * x).sum();
        let e: Vec<f32> = s.iter().zip(g).map(|(s, g)| s - g).collect();
        let me: Vec<f32> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        let p = d[i] * d[j] / dd;
                        let identity = if i == j { 1.0 } else { 0.0 };
                        (alpha * p + (1.0 - alpha) * identity) * e[j]
                    })
                    .sum()
            })
            .collect();
        1.0 - 0.5 * me.iter().map(|x| x * x).sum::<f32>()
    }

    #[test]
    fn alpha_zero_is_the_cosine_similarity() {
        let g = unit(&[1.0, 2.0, -0.5, 0.3]);
        let b = unit(&[0.2, 1.0, 1.0, -1.0]);
        let s = unit(&[0.7, -0.1, 0.4, 0.9]);
        let cos: f32 = s.iter().zip(&g).map(|(a, b)| a * b).sum();
        let reward = VlmRm::new(&g, &b, 0.0).unwrap();
        assert!((reward.score(&s) - cos).abs() < 1e-6);
    }

    #[test]
    fn alpha_one_ignores_what_is_orthogonal_to_the_goal_direction() {
        // g − b = (2, 0, 0) up to scale: only the first coordinate counts.
        let g = [1.0, 0.0, 0.0];
        let b = [-1.0, 0.0, 0.0];
        let reward = VlmRm::new(&g, &b, 1.0).unwrap();
        let s1 = [0.6, 0.8, 0.0];
        let s2 = [0.6, 0.0, 0.8];
        // Hand-computed: e·u = 0.6 − 1 = −0.4, r = 1 − ½·0.16 = 0.92.
        assert!((reward.score(&s1) - 0.92).abs() < 1e-6);
        assert!((reward.score(&s2) - 0.92).abs() < 1e-6);
        assert!((reward.score(&g) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn the_closed_form_equals_the_matrix_for_every_alpha() {
        let g = unit(&[0.3, -1.0, 0.5, 0.2, 0.1]);
        let b = unit(&[0.1, 0.4, -0.7, 0.9, 0.0]);
        let s = unit(&[-0.2, 0.3, 0.8, -0.5, 0.6]);
        for alpha in [0.0, 0.25, 0.5, 0.9, 1.0] {
            let reward = VlmRm::new(&g, &b, alpha).unwrap();
            let expected = by_matrix(&s, &g, &b, alpha);
            assert!(
                (reward.score(&s) - expected).abs() < 1e-5,
                "alpha {alpha}: {} vs {expected}",
                reward.score(&s)
            );
        }
        let mut out = [0.0; 2];
        let reward = VlmRm::new(&g, &b, 0.5).unwrap();
        reward.score_batch(&[s.clone(), g.clone()].concat(), &mut out);
        assert_eq!(out[0], reward.score(&s));
        assert!((out[1] - 1.0).abs() < 1e-6, "the goal itself scores 1");
    }

    #[test]
    fn each_env_is_scored_against_its_own_instructions_goal() {
        use crate::clip::Embeddings;
        let captions = [unit(&[1.0, 0.2, 0.0]), unit(&[0.0, 1.0, 0.5])];
        let baseline = unit(&[0.3, 0.3, 1.0]);
        let frames = [
            unit(&[0.9, 0.1, 0.2]),
            unit(&[0.2, 0.8, 0.1]),
            unit(&[0.5, 0.5, 0.5]),
        ];
        let rows = [1, 0, 1];
        let (captions_e, frames_e) = (
            Embeddings {
                dim: 3,
                values: captions.concat(),
            },
            Embeddings {
                dim: 3,
                values: frames.concat(),
            },
        );
        let step = StepFrames {
            embeddings: &frames_e,
            views: &frames_e,
            envs: &[0, 1, 2],
            done: &[false; 3],
            task: &[0.0; 3],
            pixels: &[],
            side: 0,
            instructions: Some((&captions_e, &rows)),
        };
        let mut head = InstructedVlmRm::new(BTreeMap::new(), Some(baseline.clone()), 0.5).unwrap();
        let mut out = [0.0; 3];
        head.rewards(&step, &mut out).unwrap();
        for k in 0..3 {
            let expected = by_matrix(&frames[k], &captions[rows[k]], &baseline, 0.5);
            assert!((out[k] - expected).abs() < 1e-5, "env {k}: {out:?}");
        }
        assert!(InstructedVlmRm::new(BTreeMap::new(), None, 0.5).is_err());
        let no_instructions = StepFrames {
            instructions: None,
            ..step
        };
        assert!(head.rewards(&no_instructions, &mut out).is_err());
    }

    #[test]
    fn bad_parameters_are_errors() {
        let g = [1.0, 0.0];
        assert!(VlmRm::new(&g, &[0.0, 1.0], 1.5).is_err());
        assert!(VlmRm::new(&g, &[0.0, 1.0, 0.0], 0.5).is_err());
        assert!(VlmRm::new(&g, &g, 0.5).is_err());
        assert!(VlmRm::new(&g, &g, 0.0).is_ok());
    }
}
