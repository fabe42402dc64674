//! Recording demonstrations on a learner's env stack: the scripted expert's
//! own successful episodes (with DART's noise), or the episodes a learner
//! acts in with the expert labelling every state it visits (DAgger, Ross et
//! al. 2011): the cure for a clone's compounding error when the expert is a
//! program that can be asked anywhere.

use super::demos::{
    DEMO_ENVS, DaggerRound, DemoHeader, Demonstrations, StateAgent, obs_rows, perturb,
};
use crate::base::error::{LearnError, Result};
use crate::base::seeds::learner_rng;
use crate::env::{EnvSource, base};
use crate::nets::encoder::ObsLayout;
use proprio::rand::RngExt;
use proprio::render::ObsMode;
use proprio::{ActMode, AutoresetMode, Space, VecOptions};
use std::collections::BTreeMap;

/// An instruction counts as seen once this many finished episodes per known
/// instruction brought no new one (with 14 instructions drawn template-uniformly
/// the rarest is missed with probability below 1e-4).
const QUIET_EPISODES_PER_INSTRUCTION: usize = 20;

/// Who acts while the expert's actions are recorded.
enum Acting {
    /// The expert, its actions plus Gaussian noise of this standard
    /// deviation; only successful episodes are kept.
    Expert(f32),
    /// The learner, on the stack's whole observation, except that each step
    /// acts the expert's action with chance `beta`; every episode is kept.
    Learner {
        policy: Box<dyn proprio::Agent>,
        round: DaggerRound,
    },
}

/// Runs `source`'s scripted expert until every instruction it draws has
/// `per_instruction` successful episodes (an env without an instruction:
/// `per_instruction` episodes in all), from env streams of `seed`. With
/// `noise` > 0 the envs act the expert's action plus Gaussian noise while
/// the expert's own is recorded (DART, Laskey et al. 2017): the
/// demonstrations then show how the expert recovers from the drift a
/// cloned policy makes, not only its ideal path.
pub fn collect(
    source: &EnvSource,
    per_instruction: usize,
    noise: f32,
    seed: u64,
) -> Result<Demonstrations> {
    if !(noise.is_finite() && noise >= 0.0) {
        return Err(LearnError::Config(format!(
            "noise must be a non-negative number, got {noise}"
        )));
    }
    record(source, None, Acting::Expert(noise), per_instruction, seed)
}

/// One DAgger round: `policy` (which reads the whole observation of
/// `source`'s stack) acts — or, at each step with chance `beta`, the expert
/// — until every instruction has `per_instruction` episodes, successful or
/// not, and every state visited is labelled with `expert`'s action (`None`:
/// the env's scripted expert; either reads the env's raw state). `name`
/// says which policy it was in the file's header.
pub fn dagger(
    source: &EnvSource,
    policy: Box<dyn proprio::Agent>,
    expert: Option<Box<dyn proprio::Agent>>,
    name: &str,
    beta: f32,
    per_instruction: usize,
    seed: u64,
) -> Result<Demonstrations> {
    if !(0.0..=1.0).contains(&beta) {
        return Err(LearnError::Config(format!(
            "beta is a chance, from 0 to 1; got {beta}"
        )));
    }
    let round = DaggerRound {
        policy: name.to_string(),
        beta,
        seed,
        episodes: 0,
        successes: 0,
    };
    record(
        source,
        expert,
        Acting::Learner { policy, round },
        per_instruction,
        seed,
    )
}

/// The recording loop both share: `acting` acts, the expert (`expert`, or the
/// scripted one) labels, episodes are kept per instruction.
fn record(
    source: &EnvSource,
    expert: Option<Box<dyn proprio::Agent>>,
    mut acting: Acting,
    per_instruction: usize,
    seed: u64,
) -> Result<Demonstrations> {
    if per_instruction == 0 {
        return Err(LearnError::Config(
            "per_instruction must be at least 1".into(),
        ));
    }
    if !matches!(source.obs.mode, ObsMode::State | ObsMode::RgbState) {
        return Err(LearnError::Config(
            "the scripted expert reads the env's state: demonstrations need --obs state or rgb+state".into(),
        ));
    }
    let mut rng = learner_rng(seed);
    let options = VecOptions {
        autoreset: AutoresetMode::Disabled,
        threads: None,
        backend: source.backend,
    };
    let (mut venv, _) = base(source, DEMO_ENVS, options)?;
    let mut expert = match expert {
        Some(agent) => StateAgent::new(agent, source, venv.spec())?,
        None => StateAgent::expert(source, venv.spec())?,
    };
    let obs_space = venv.spec().observation_space.clone();
    let action_space = venv.spec().action_space.clone();
    let (d, a) = (obs_space.flat_dim(), action_space.flat_dim());
    let tokens = ObsLayout::new(&obs_space)?.tokens().to_vec();
    let instruction = |row: &[f32]| -> Vec<i64> {
        tokens
            .iter()
            .flat_map(|&(at, len)| row[at..at + len].iter().map(|&t| t as i64))
            .collect()
    };
    let n = DEMO_ENVS;
    let mut actions = vec![0.0; n * a];
    let mut acted = vec![0.0; n * a];
    let mut episode: Vec<(Vec<f32>, Vec<f32>)> = vec![Default::default(); n];
    let mut kept: BTreeMap<Vec<i64>, usize> = BTreeMap::new();
    let header = DemoHeader {
        env: source.clone(),
        obs_dim: d,
        action_dim: a,
        episodes: 0,
        per_instruction,
        instructions: 0,
        expert_episodes: 0,
        expert_successes: 0,
        seed,
        noise: 0.0,
        rounds: Vec::new(),
    };
    let mut demos = Demonstrations {
        obs: obs_rows(&header)?,
        header,
        actions: Vec::new(),
        episode_rows: Vec::new(),
    };
    let mut quiet = 0;
    venv.reset(Some(seed), None)?;
    loop {
        let obs = &venv.batch().obs;
        expert.act(obs, &mut actions)?;
        match &mut acting {
            Acting::Expert(noise) => {
                acted.copy_from_slice(&actions);
                if let (Space::Box { low, high }, true) = (&action_space, *noise > 0.0) {
                    perturb(&mut acted, *noise, low, high, &mut rng);
                }
            }
            Acting::Learner { policy, round } => {
                policy.act(obs, &mut acted, ActMode::Deterministic)?;
                for (ours, theirs) in acted.chunks_exact_mut(a).zip(actions.chunks_exact(a)) {
                    if rng.random::<f32>() < round.beta {
                        ours.copy_from_slice(theirs);
                    }
                }
            }
        }
        for (i, (o, act)) in episode.iter_mut().enumerate() {
            o.extend_from_slice(&obs[i * d..(i + 1) * d]);
            act.extend_from_slice(&actions[i * a..(i + 1) * a]);
        }
        venv.step(&acted)?;
        let b = venv.batch();
        let finished: Vec<bool> = (0..n).map(|i| b.done(i)).collect();
        for i in (0..n).filter(|&i| finished[i]) {
            let (o, act) = std::mem::take(&mut episode[i]);
            let key = instruction(&o[..d]);
            quiet = if kept.contains_key(&key) {
                quiet + 1
            } else {
                0
            };
            let count = kept.entry(key).or_insert(0);
            let success = b.infos[i].get("success").unwrap_or(0.0) > 0.0;
            // The expert's episodes count whether kept or not; a learner's all are kept.
            let wanted = *count < per_instruction;
            let keep = match &mut acting {
                Acting::Expert(_) => {
                    demos.header.expert_episodes += 1;
                    demos.header.expert_successes += usize::from(success);
                    wanted && success
                }
                Acting::Learner { round, .. } => {
                    round.episodes += usize::from(wanted);
                    round.successes += usize::from(wanted && success);
                    wanted
                }
            };
            if keep {
                *count += 1;
                demos.header.episodes += 1;
                demos.episode_rows.push(act.len() / a);
                demos.obs.extend_from_slice(&o);
                demos.actions.extend_from_slice(&act);
            }
        }
        let complete = !kept.is_empty() && kept.values().all(|&c| c >= per_instruction);
        if complete && quiet >= QUIET_EPISODES_PER_INSTRUCTION * kept.len() {
            break;
        }
        let h = &demos.header;
        if h.expert_episodes > 50 * (per_instruction + QUIET_EPISODES_PER_INSTRUCTION) * kept.len()
        {
            let short = kept.values().filter(|&&c| c < per_instruction).count();
            return Err(LearnError::Config(format!(
                "the scripted expert succeeded in {} of {} episodes; {short} of {} instructions still lack {per_instruction} successful episodes",
                h.expert_successes,
                h.expert_episodes,
                kept.len()
            )));
        }
        if finished.contains(&true) {
            venv.reset_envs(&finished, None)?;
        }
    }
    demos.header.instructions = kept.len();
    match acting {
        Acting::Expert(noise) => demos.header.noise = noise,
        Acting::Learner { round, .. } => demos.header.rounds.push(round),
    }
    Ok(demos)
}
