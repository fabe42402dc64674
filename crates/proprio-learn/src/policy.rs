//! `Policy`: a trained checkpoint that acts, for `proprio eval`, the viewer
//! and library users. The checkpoint's `policy.json` says which network acts
//! (written by the learner); checkpoints from before it are read through
//! [`legacy_policy_file`].

use crate::algos::bc::BcConfig;
use crate::algos::grpo::GrpoConfig;
use crate::algos::ppo::PpoConfig;
use crate::algos::td3::Td3Config;
use crate::base::device::ComputeDevice;
use crate::base::error::{LearnError, Result};
use crate::base::seeds::policy_rng;
use crate::env::{EnvSource, Evaluation, NORMALIZED_CLIP, evaluate};
use crate::nets::acting::{ActingNet, POLICY_FILE, PolicyFile, PolicyNet};
use crate::run::{Algo, RunInfo, load_run, read_json};
use proprio::serde_json::Value;
use proprio::wrappers::RunningMeanStd;
use proprio::{ActMode, Agent, EnvRng, Space};
use std::path::Path;

/// A trained policy loaded from a run directory.
pub struct Policy {
    info: RunInfo,
    net: ActingNet,
    obs_stats: Option<RunningMeanStd>,
    /// The observation components `obs_stats` describe (all but image pixels and token ids).
    normalized: Vec<usize>,
    obs_dim: usize,
    action_dim: usize,
    rng: EnvRng,
}

impl Policy {
    /// Loads the latest checkpoint of the run in `dir` (or `dir/checkpoint`).
    pub fn load(dir: &Path) -> Result<Self> {
        Self::load_on(dir, None)
    }

    /// [`Policy::load`], its networks (policy and reward model) on `device`
    /// instead of the run's when one is given: a GPU-trained run on a laptop.
    pub fn load_on(dir: &Path, device: Option<ComputeDevice>) -> Result<Self> {
        let (mut info, progress, checkpoint) = load_run(dir)?;
        info.device = device.unwrap_or(info.device);
        // Evaluation pays the reward model the checkpoint learned, frozen.
        info.env.reward_weights = Some(checkpoint.clone());
        info.env.reward_device = info.device;
        let spec = proprio::registry().spec(&info.env.id, &info.env.config)?;
        let obs_space = info.env.observation_space()?;
        let described = checkpoint.join(POLICY_FILE);
        let file = if described.exists() {
            read_json(&described)?
        } else {
            legacy_policy_file(dir, &info, &spec.action_space)?
        };
        let device = info.device.device()?;
        let net = file.load(&obs_space, &spec.action_space, &checkpoint, &device)?;
        let obs_stats = progress.stats.and_then(|s| s.obs);
        let normalized = obs_space.normalized_components();
        if let Some(stats) = obs_stats
            .as_ref()
            .filter(|s| s.mean.len() != normalized.len())
        {
            return Err(LearnError::Checkpoint {
                path: checkpoint,
                message: format!(
                    "holds statistics of {} observation values, but this observation normalises {} (before 2026-11-27 token ids were normalised too: retrain the run)",
                    stats.mean.len(),
                    normalized.len()
                ),
            });
        }
        Ok(Self {
            rng: policy_rng(info.seed),
            action_dim: spec.action_space.flat_dim(),
            obs_stats,
            normalized,
            obs_dim: obs_space.flat_dim(),
            net,
            info,
        })
    }

    /// The env the policy was trained on.
    pub fn env(&self) -> &EnvSource {
        &self.info.env
    }

    /// Evaluates and records on `backend` instead of the run's (the same physics on CPU threads or a GPU).
    pub fn set_backend(&mut self, backend: proprio::Backend) {
        self.info.env.backend = backend;
    }

    /// Evaluates with these env config keys in place of the run's (its
    /// `eval_config` included), e.g. `{"split": "held_out"}`; the observations
    /// and actions must stay as they are.
    pub fn set_eval_config(&mut self, keys: Value) -> Result<()> {
        let mut merged = self.info.env.eval_config.take().unwrap_or(Value::Null);
        match (&mut merged, keys) {
            (Value::Object(ours), Value::Object(theirs)) => ours.extend(theirs),
            (slot, keys) => *slot = keys,
        }
        self.info.env.eval_config = Some(merged);
        self.info.env.for_evaluation().map(|_| ())
    }

    /// Acts (and records) in envs with these config keys in place of the
    /// run's training ones, e.g. `{"instruction": "lift the red block"}`;
    /// the observations and actions must stay as they are.
    pub fn set_env_config(&mut self, keys: Value) -> Result<()> {
        let mut env = self.info.env.clone();
        env.eval_config = Some(keys);
        self.info.env.config = env.for_evaluation()?.config;
        Ok(())
    }

    /// What the run was.
    pub fn info(&self) -> &RunInfo {
        &self.info
    }

    /// Normalises raw observations with the training statistics (as `NormalizeObservation` did).
    fn normalise(&self, obs: &[f32]) -> Vec<f32> {
        let mut x = obs.to_vec();
        if let Some(stats) = &self.obs_stats {
            stats.normalize_components(
                &mut x,
                self.obs_dim,
                &self.normalized,
                Some(NORMALIZED_CLIP),
            );
        }
        x
    }

    fn act_normalized(
        &mut self,
        obs: &[f32],
        deterministic: bool,
        actions: &mut [f32],
    ) -> Result<()> {
        let n = obs.len() / self.obs_dim.max(1);
        if obs.len() != n * self.obs_dim || actions.len() != n * self.action_dim {
            return Err(LearnError::Config(format!(
                "expected observations of {} and actions of {} values per env",
                self.obs_dim, self.action_dim
            )));
        }
        self.net.act(obs, n, deterministic, &mut self.rng, actions)
    }

    /// The action for one raw observation.
    pub fn action(&mut self, obs: &[f32], mode: ActMode) -> Result<Vec<f32>> {
        let mut action = vec![0.0; self.action_dim];
        self.act_raw(obs, mode, &mut action)?;
        Ok(action)
    }

    /// Actions for raw observations, normalised with the training statistics first.
    fn act_raw(&mut self, obs: &[f32], mode: ActMode, actions: &mut [f32]) -> Result<()> {
        let normalized = self.normalise(obs);
        self.act_normalized(&normalized, mode == ActMode::Deterministic, actions)
    }

    /// Returns of `episodes` episodes on the run's evaluation envs (fresh seed stream `seed`).
    pub fn evaluate(
        &mut self,
        episodes: usize,
        seed: u64,
        deterministic: bool,
    ) -> Result<Evaluation> {
        let source = self.info.env.clone();
        let stats = self.obs_stats.clone();
        evaluate(
            &source,
            episodes,
            seed,
            stats.as_ref(),
            &mut |obs: &[f32], actions: &mut [f32], _: ActMode| {
                Ok(self.act_normalized(obs, deterministic, actions)?)
            },
        )
    }
}

/// What a checkpoint written before `policy.json` holds, read from its run's
/// `run.json` (the algorithm and its hyper-parameters).
fn legacy_policy_file(dir: &Path, info: &RunInfo, action_space: &Space) -> Result<PolicyFile> {
    let group = info.algo == Algo::Grpo || info.config.get("advantage").is_some();
    let (net, weights) = if group {
        let cfg: GrpoConfig = from_run_json(dir, "config", &info.config)?;
        let net = match action_space {
            Space::Tokens { .. } => PolicyNet::Sequence {
                shape: cfg.shape(),
                temperature: cfg.temperature,
            },
            _ => PolicyNet::Control {
                shape: cfg.control_shape(),
                temperature: cfg.temperature,
            },
        };
        (net, "model.bpk")
    } else {
        match info.algo {
            Algo::Ppo | Algo::Grpo => {
                let cfg: PpoConfig = from_run_json(dir, "config", &info.config)?;
                (PolicyNet::ActorCritic { shape: cfg.shape() }, "model.bpk")
            }
            Algo::Sac | Algo::Dsac => {
                let hidden = &info.config["hidden"];
                let hidden = from_run_json(dir, "config.hidden", hidden)?;
                (PolicyNet::Squashed { hidden }, "actor.bpk")
            }
            Algo::Bc => {
                let cfg: BcConfig = from_run_json(dir, "config", &info.config)?;
                let net = PolicyNet::Control {
                    shape: cfg.shape(),
                    temperature: cfg.temperature,
                };
                (net, "model.bpk")
            }
            Algo::Td3 => {
                let cfg: Td3Config = from_run_json(dir, "config", &info.config)?;
                let net = PolicyNet::Deterministic {
                    hidden: cfg.hidden,
                    noise: cfg.exploration_noise,
                    activation: cfg.activation,
                };
                (net, "actor.bpk")
            }
            // Every learner since these writes policy.json with each checkpoint.
            other => {
                return Err(LearnError::Config(format!(
                    "{}: a checkpoint of {} names its policy in policy.json, and it is missing",
                    dir.display(),
                    other.name()
                )));
            }
        }
    };
    Ok(PolicyFile {
        net,
        weights: weights.into(),
    })
}

/// `value`, named `key` in the `run.json` of the run in `dir`, read as what the learner saved.
fn from_run_json<T: serde::de::DeserializeOwned>(
    dir: &Path,
    key: &str,
    value: &Value,
) -> Result<T> {
    proprio::serde_json::from_value(value.clone()).map_err(|e| LearnError::Checkpoint {
        path: dir.to_path_buf(),
        message: format!("run.json: {key}: {e}"),
    })
}

/// Acts on a batch of raw observations `[N × D]`, normalised with the
/// training statistics: the mode of its distribution when deterministic.
impl Agent for Policy {
    fn act(&mut self, obs: &[f32], actions: &mut [f32], mode: ActMode) -> proprio::Result<()> {
        Ok(self.act_raw(obs, mode, actions)?)
    }
}
