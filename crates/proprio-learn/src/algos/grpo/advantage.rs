//! Group-relative advantages and loss weights, on the host.

use super::config::{AdvantageMode, LossAggregation};
use crate::base::error::{LearnError, Result};

/// Added to the group's standard deviation (TRL's `1e-4`).
pub const STD_EPS: f64 = 1e-4;

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len().max(1) as f64
}

/// Sample standard deviation (divisor n − 1, as `torch.std`).
fn sample_std(x: &[f64]) -> f64 {
    let m = mean(x);
    let n = x.len();
    (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n.max(2) - 1) as f64).sqrt()
}

fn check_group(len: usize) -> Result<()> {
    if len < 2 {
        return Err(LearnError::Config(format!(
            "a group needs at least 2 rollouts to compare, got {len}; set group_size >= 2 (or advantage=gae for PPO)"
        )));
    }
    Ok(())
}

/// Advantages of one group's outcome rewards under `mode` (not `gae`).
pub fn group_advantages(rewards: &[f64], mode: AdvantageMode) -> Result<Vec<f64>> {
    check_group(rewards.len())?;
    let m = mean(rewards);
    let g = rewards.len() as f64;
    Ok(match mode {
        AdvantageMode::Std => {
            let s = sample_std(rewards) + STD_EPS;
            rewards.iter().map(|r| (r - m) / s).collect()
        }
        AdvantageMode::None => rewards.iter().map(|r| r - m).collect(),
        AdvantageMode::LeaveOneOut => rewards
            .iter()
            .map(|r| r - (m * g - r) / (g - 1.0))
            .collect(),
        AdvantageMode::Gae => {
            return Err(LearnError::Config(
                "gae advantages come from a value function, not from the group".into(),
            ));
        }
    })
}

/// Process supervision: each step reward normalised within the group, and a
/// step's advantage the discounted sum of those from it on. `pooled`: against
/// all step rewards of the group (DeepSeekMath §4.1.3); otherwise against the
/// same step of the other rollouts (the group baseline taken per position, so
/// an answer's easy first token and hard last one are not compared with each
/// other; a step only one rollout reached gets 0). `steps[i]` holds rollout
/// i's step rewards; the result has the same shape.
pub fn step_advantages(
    steps: &[Vec<f64>],
    mode: AdvantageMode,
    gamma: f64,
    pooled: bool,
) -> Result<Vec<Vec<f64>>> {
    check_group(steps.len())?;
    let scale = |x: &[f64]| match mode {
        AdvantageMode::Std => Ok(sample_std(x) + STD_EPS),
        AdvantageMode::None => Ok(1.0),
        other => Err(LearnError::Config(format!(
            "per-step rewards take advantage std or none, not {other:?}"
        ))),
    };
    let longest = steps.iter().map(Vec::len).max().unwrap_or(0);
    let mut baselines = Vec::with_capacity(longest);
    if pooled {
        let all: Vec<f64> = steps.iter().flatten().copied().collect();
        baselines.resize(longest, Some((mean(&all), scale(&all)?)));
    } else {
        for t in 0..longest {
            let at: Vec<f64> = steps.iter().filter_map(|r| r.get(t).copied()).collect();
            baselines.push(if at.len() < 2 {
                None
            } else {
                Some((mean(&at), scale(&at)?))
            });
        }
    }
    Ok(steps
        .iter()
        .map(|rollout| {
            let mut to_go = 0.0;
            let mut out: Vec<f64> = rollout
                .iter()
                .zip(&baselines)
                .rev()
                .map(|(r, baseline)| {
                    let normalised = baseline.map_or(0.0, |(m, s)| (r - m) / s);
                    to_go = normalised + gamma * to_go;
                    to_go
                })
                .collect();
            out.reverse();
            out
        })
        .collect())
}

/// True if every reward of the group is the same (no signal: DAPO drops such groups).
pub fn all_equal(rewards: &[f64]) -> bool {
    rewards
        .iter()
        .all(|r| (r - rewards[0]).abs() <= 1e-9 * rewards[0].abs().max(1.0))
}

/// The weight of each unit of rollout `i` in the batch loss, for rollouts of
/// `units[i]` units: the loss is `Σ weight · unit loss`.
pub fn unit_weights(units: &[usize], mode: LossAggregation, constant: f64) -> Vec<f64> {
    let rollouts = units.len().max(1) as f64;
    let total: usize = units.iter().sum();
    units
        .iter()
        .map(|&n| match mode {
            LossAggregation::Token => 1.0 / total.max(1) as f64,
            LossAggregation::Sequence => 1.0 / (rollouts * n.max(1) as f64),
            LossAggregation::Constant => 1.0 / (rollouts * constant),
        })
        .collect()
}
