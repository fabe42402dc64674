//! Frames of an env with captions of the states they show: what an in-domain
//! CLIP learns from. Envs take random actions (each from its own stream), or
//! a share of them follows the env's scripted controller, another share
//! an [`Agent`] (a trained policy: the states a learner drifts into get
//! their true captions), and a share of decoys replays the scripted envs'
//! actions in their own scenes (the motion of a success, aimed elsewhere:
//! hard negatives, so a model cannot read "the hand moved as in a success"
//! as success); every frame is rendered at the model's input size
//! from each camera asked for, and captioned by the env family's own words.

use crate::{Result, RewardError};
use proprio::render::{Frames, RenderConfig, Renderer};
use proprio::serde_json::Value;
use proprio::{ActMode, Agent, AutoresetMode, RandomActions, Scene, VecEnv, VecOptions};

/// Captioned frames: `images` `[n × side × side × 3]` u8, `labels[i]` indexes `captions`.
#[derive(Debug, Clone, PartialEq)]
pub struct Captioned {
    /// Side of the square frames, pixels.
    pub side: usize,
    /// RGB bytes, frame after frame.
    pub images: Vec<u8>,
    /// The distinct captions, sorted.
    pub captions: Vec<String>,
    /// The caption of each frame.
    pub labels: Vec<usize>,
}

impl Captioned {
    /// Number of frames.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no frames.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Frame `i`'s bytes.
    pub fn image(&self, i: usize) -> &[u8] {
        let n = self.side * self.side * 3;
        &self.images[i * n..(i + 1) * n]
    }
}

/// What to render and how many frames.
#[derive(Debug, Clone)]
pub struct Collect<'a> {
    /// Registry id.
    pub env: &'a str,
    /// Env config.
    pub config: &'a Value,
    /// Camera the frames are seen through, or several joined by commas (a
    /// frame from each, all with the state's caption).
    pub camera: &'a str,
    /// Side of the frames (the model's input size).
    pub side: u32,
    /// Frames to collect.
    pub frames: usize,
    /// Envs stepped side by side.
    pub num_envs: usize,
    /// Fraction of the envs driven by the env's scripted controller instead of
    /// random actions, so that frames of success are common enough to learn.
    pub scripted: f64,
    /// Fraction of the envs, after the scripted ones, driven by the agent (a trained policy, sampling).
    pub driven: f64,
    /// Fraction of the envs, after the driven ones, that each take one
    /// scripted env's action (needs `scripted > 0`).
    pub decoy: f64,
    /// Seed of the envs and of their random actions.
    pub seed: u64,
}

/// Steps `c.num_envs` envs with random actions (the scripted controller and
/// `driver` acting for their shares) and keeps every env's frame and
/// caption after each step until `c.frames` are collected.
pub fn collect(c: &Collect, mut driver: Option<&mut dyn Agent>) -> Result<Captioned> {
    let env_error = |e: proprio::Error| RewardError::Input(e.to_string());
    let share = |f: f64| f.is_finite() && (0.0..=1.0).contains(&f);
    if ![c.scripted, c.driven, c.decoy].into_iter().all(share)
        || c.scripted + c.driven + c.decoy > 1.0
    {
        return Err(RewardError::Input(format!(
            "the scripted ({}), driven ({}) and decoy ({}) shares must lie in [0, 1] and add up to at most 1",
            c.scripted, c.driven, c.decoy
        )));
    }
    if c.driven > 0.0 && driver.is_none() {
        return Err(RewardError::Input(
            "a driven share needs a driver (a trained policy)".into(),
        ));
    }
    let registry = proprio::registry();
    let caption = registry.caption(c.env).map_err(env_error)?;
    let options = VecOptions {
        autoreset: AutoresetMode::NextStep,
        threads: Some(1),
        ..VecOptions::default()
    };
    let n = c.num_envs.clamp(1, c.frames.max(1));
    let scripted = ((c.scripted * n as f64).round() as usize).min(n);
    let driven = ((c.driven * n as f64).round() as usize).min(n - scripted);
    let decoys = ((c.decoy * n as f64).round() as usize).min(n - scripted - driven);
    if decoys > 0 && scripted == 0 {
        return Err(RewardError::Input(format!(
            "decoys replay the scripted envs' actions: give a scripted share that is \
             at least one of the {n} envs too"
        )));
    }
    let mut venv = registry
        .make_vec(c.env, n, c.config, options)
        .map_err(env_error)?;
    let mut renderer = Renderer::new(RenderConfig {
        width: c.side,
        height: c.side,
        floor: true,
    })
    .map_err(|e| RewardError::Backend(e.to_string()))?;
    let space = venv.spec().action_space.clone();
    let dim = space.flat_dim();
    let obs_dim = venv.batch().obs_dim;
    let mut controller = match scripted {
        0 => None,
        _ => Some(registry.scripted(c.env, venv.spec()).map_err(env_error)?),
    };
    let mut random = RandomActions::new(c.seed, n);
    let (mut actions, mut sampled) = (vec![0.0; n * dim], vec![0.0; n * dim]);
    let (mut scenes, mut frames) = (vec![Scene::default(); n], Frames::default());
    let mut texts: Vec<String> = Vec::with_capacity(c.frames);
    let mut images = Vec::with_capacity(c.frames * (c.side as usize).pow(2) * 3);
    venv.reset(Some(c.seed), None).map_err(env_error)?;
    while texts.len() < c.frames {
        random.sample(&space, &mut sampled);
        if let Some(controller) = controller.as_mut() {
            controller
                .act(&venv.batch().obs, &mut actions, ActMode::Deterministic)
                .map_err(env_error)?;
        }
        if let Some(driver) = driver.as_mut().filter(|_| driven > 0) {
            let obs = &venv.batch().obs[scripted * obs_dim..(scripted + driven) * obs_dim];
            let driven_actions = &mut actions[scripted * dim..(scripted + driven) * dim];
            driver
                .act(obs, driven_actions, ActMode::Sampled)
                .map_err(|e| RewardError::Input(e.to_string()))?;
        }
        replay_scripted(&mut actions, dim, scripted, scripted + driven, decoys);
        let first_random = (scripted + driven + decoys) * dim;
        actions[first_random..].copy_from_slice(&sampled[first_random..]);
        venv.step(&actions).map_err(env_error)?;
        for (i, scene) in scenes.iter_mut().enumerate() {
            venv.scene(i, scene).map_err(env_error)?;
        }
        for camera in c.camera.split(',').map(str::trim) {
            renderer
                .render(&scenes, camera, false, &mut frames)
                .map_err(|e| RewardError::Input(e.to_string()))?;
            for i in 0..n.min(c.frames - texts.len()) {
                let text = caption(venv.batch().obs(i)).ok_or_else(|| {
                    RewardError::Input(format!(
                        "{}: its captions are written for the default observation layout; \
                         fit the model on the default config",
                        c.env
                    ))
                })?;
                texts.push(text);
                images.extend_from_slice(frames.rgb(i));
            }
        }
    }
    let mut captions = texts.clone();
    captions.sort();
    captions.dedup();
    let labels = texts
        .iter()
        .map(|t| captions.binary_search(t).unwrap_or_default())
        .collect();
    Ok(Captioned {
        side: c.side as usize,
        images,
        captions,
        labels,
    })
}

/// Gives the `count` decoy envs from row `first` of `actions` (`dim` values
/// a row) the actions of the first `scripted` rows, in turn.
fn replay_scripted(actions: &mut [f32], dim: usize, scripted: usize, first: usize, count: usize) {
    for k in 0..count {
        let from = (k % scripted) * dim;
        actions.copy_within(from..from + dim, (first + k) * dim);
    }
}

#[cfg(test)]
mod tests {
    use super::replay_scripted;

    #[test]
    fn decoys_replay_the_scripted_rows_in_turn() {
        // Rows: 2 scripted, 1 driven, 3 decoys, 1 random; 2 values a row.
        let mut actions = vec![1., 2., 3., 4., 5., 6., 0., 0., 0., 0., 0., 0., 9., 9.];
        replay_scripted(&mut actions, 2, 2, 3, 3);
        assert_eq!(
            actions,
            [1., 2., 3., 4., 5., 6., 1., 2., 3., 4., 1., 2., 9., 9.]
        );
    }
}
