//! Collecting groups: G rollouts from one snapshot, for every group of a batch.

use crate::base::error::{LearnError, Result};
use crate::nets::actor::Actor;
use proprio::{EnvRng, VecEnv};

/// Steps an episode may take when its env sets no time limit, before collection gives up.
pub const MAX_UNLIMITED_STEPS: usize = 10_000;

/// One rollout: an episode of one env of the batch.
#[derive(Debug, Clone, PartialEq)]
pub struct Rollout {
    /// First row of its steps in [`Groups`].
    pub first_row: usize,
    /// Steps taken.
    pub steps: usize,
    /// Reward of every step.
    pub rewards: Vec<f64>,
    /// `info.success` of its last step, for envs that report it.
    pub success: Option<bool>,
    /// Tokens answered, summed over steps (steps for control envs).
    pub response_len: usize,
}

impl Rollout {
    /// Undiscounted return: the outcome reward.
    pub fn outcome(&self) -> f64 {
        self.rewards.iter().sum()
    }
}

/// A batch of groups, rows laid out rollout by rollout, rollouts group by group.
#[derive(Debug, Clone, Default)]
pub struct Groups {
    /// Observation of every step `[rows × obs_dim]`.
    pub obs: Vec<f32>,
    /// Stored action of every step `[rows × stored_width]`.
    pub stored: Vec<f32>,
    /// Sampling log-probability of every unit `[rows × units]`.
    pub logp: Vec<f32>,
    /// The rollouts, `group_size` per group.
    pub rollouts: Vec<Rollout>,
}

impl Groups {
    /// Rows (env steps) in the batch.
    pub fn rows(&self) -> usize {
        self.rollouts.iter().map(|r| r.steps).sum()
    }

    /// At most `limit` of the groups (`group_size` rollouts each) that `keep`
    /// accepts, in order, with their rows.
    pub fn select(
        &self,
        group_size: usize,
        limit: usize,
        keep: impl Fn(&[Rollout]) -> bool,
    ) -> Self {
        let rows = self.rows().max(1);
        let (o, s, u) = (
            self.obs.len() / rows,
            self.stored.len() / rows,
            self.logp.len() / rows,
        );
        let mut out = Self::default();
        for group in self
            .rollouts
            .chunks(group_size)
            .filter(|g| keep(g))
            .take(limit)
        {
            for r in group {
                let (a, b) = (r.first_row, r.first_row + r.steps);
                out.rollouts.push(Rollout {
                    first_row: out.rows(),
                    ..r.clone()
                });
                out.obs.extend_from_slice(&self.obs[a * o..b * o]);
                out.stored.extend_from_slice(&self.stored[a * s..b * s]);
                out.logp.extend_from_slice(&self.logp[a * u..b * u]);
            }
        }
        out
    }

    /// Appends `other`'s groups after this batch's.
    pub fn append(&mut self, other: Self) {
        let base = self.rows();
        self.rollouts
            .extend(other.rollouts.into_iter().map(|r| Rollout {
                first_row: base + r.first_row,
                ..r
            }));
        self.obs.extend(other.obs);
        self.stored.extend(other.stored);
        self.logp.extend(other.logp);
    }
}

struct Trace {
    obs: Vec<f32>,
    stored: Vec<f32>,
    logp: Vec<f32>,
    rewards: Vec<f64>,
    success: Option<bool>,
    response_len: usize,
}

/// Starts every group from one state: env `g·G` of each group draws a new
/// episode (all envs on the first call, under `seed`), and its snapshot is
/// restored into the other G − 1 envs of the group.
pub fn start_groups(venv: &mut dyn VecEnv, group_size: usize, seed: Option<u64>) -> Result<()> {
    let n = venv.num_envs();
    match seed {
        Some(seed) => venv.reset(Some(seed), None)?,
        None => {
            let leaders: Vec<bool> = (0..n).map(|i| i % group_size == 0).collect();
            venv.reset_envs(&leaders, None)?;
        }
    }
    for leader in (0..n).step_by(group_size) {
        let state = venv.snapshot(leader)?;
        let followers: Vec<usize> = (leader + 1..leader + group_size).collect();
        venv.restore(&state, &followers)?;
    }
    Ok(())
}

/// Runs every env of `venv` (next-step autoreset) to the end of its episode
/// with `actor`, sampling at `temperature` from `rng` (with the actor's
/// cache between steps unless `kv_cache` is off). Finished envs are
/// stepped with their last action until all are done; those steps are not kept.
pub fn collect<A: Actor>(
    venv: &mut dyn VecEnv,
    actor: &A,
    temperature: f32,
    kv_cache: bool,
    rng: &mut EnvRng,
) -> Result<Groups> {
    let n = venv.num_envs();
    let dim = venv.spec().observation_space.flat_dim();
    let action_dim = venv.spec().action_space.flat_dim();
    let (s, u) = (actor.stored_width(), actor.units());
    let limit = venv
        .spec()
        .max_episode_steps
        .map_or(MAX_UNLIMITED_STEPS, |l| l as usize);
    let mut traces: Vec<Trace> = (0..n)
        .map(|_| Trace {
            obs: Vec::new(),
            stored: Vec::new(),
            logp: Vec::new(),
            rewards: Vec::new(),
            success: None,
            response_len: 0,
        })
        .collect();
    let mut active: Vec<usize> = (0..n).collect();
    let mut actions = vec![0.0; n * action_dim];
    let mut obs: Vec<f32> = Vec::with_capacity(n * dim);
    // What the policy read in earlier steps, per env: each step reads only what is new.
    let mut cache = if kv_cache {
        A::Cache::default()
    } else {
        A::no_cache()
    };
    for _ in 0..limit {
        if active.is_empty() {
            break;
        }
        obs.clear();
        for &i in &active {
            obs.extend_from_slice(venv.batch().obs(i));
        }
        let sampled = actor.sample_in(&obs, &active, &mut cache, temperature, false, rng)?;
        for (k, &i) in active.iter().enumerate() {
            let t = &mut traces[i];
            t.obs.extend_from_slice(&obs[k * dim..(k + 1) * dim]);
            let stored = &sampled.stored[k * s..(k + 1) * s];
            t.stored.extend_from_slice(stored);
            t.response_len += actor.response_len(stored);
            t.logp.extend_from_slice(&sampled.logp[k * u..(k + 1) * u]);
            actions[i * action_dim..(i + 1) * action_dim]
                .copy_from_slice(&sampled.actions[k * action_dim..(k + 1) * action_dim]);
        }
        venv.step(&actions)?;
        let b = venv.batch();
        for &i in &active {
            let t = &mut traces[i];
            t.rewards.push(f64::from(b.reward[i]));
            if b.done(i) {
                t.success = b.infos[i].get("success").map(|v| v > 0.0);
            }
        }
        active.retain(|&i| !b.done(i));
    }
    if !active.is_empty() {
        return Err(LearnError::Config(format!(
            "{} episodes did not end within {limit} steps; give the env a time limit (max_episode_steps)",
            active.len()
        )));
    }
    let mut groups = Groups::default();
    for t in traces {
        groups.rollouts.push(Rollout {
            first_row: groups.obs.len() / dim.max(1),
            steps: t.rewards.len(),
            rewards: t.rewards,
            success: t.success,
            response_len: t.response_len,
        });
        groups.obs.extend(t.obs);
        groups.stored.extend(t.stored);
        groups.logp.extend(t.logp);
    }
    Ok(groups)
}
