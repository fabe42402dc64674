//! A third-party agent: depends only on `proprio` (the registry, which
//! re-exports `proprio-core`), implements the one acting trait, `Agent`,
//! with its own random policy, steps a batch of envs with it and prints
//! every episode's return.
//!
//! ```sh
//! cargo run --example random_agent -- classic/pendulum-v1 16 1000
//! ```

use proprio::rand::{RngExt, SeedableRng};
use proprio::wrappers::RecordEpisodeStatistics;
use proprio::{ActMode, Agent, EnvRng, Space, VecEnv, VecOptions};

/// Uniform random actions of `space`, drawn from the agent's own generator.
struct RandomPolicy {
    space: Space,
    rng: EnvRng,
}

impl Agent for RandomPolicy {
    fn act(&mut self, _obs: &[f32], actions: &mut [f32], _: ActMode) -> proprio::Result<()> {
        match &self.space {
            Space::Discrete { n, start } => actions.iter_mut().for_each(|a| {
                *a = (*start as i64 + i64::from(self.rng.random_range(0..*n))) as f32
            }),
            Space::Box { low, high } => {
                for row in actions.chunks_exact_mut(low.len()) {
                    for ((a, lo), hi) in row.iter_mut().zip(low).zip(high) {
                        *a = lo + (hi - lo) * self.rng.random::<f32>();
                    }
                }
            }
            other => {
                // Any other space: its own sampler.
                let dim = other.flat_dim();
                actions
                    .chunks_exact_mut(dim)
                    .for_each(|row| other.sample(&mut self.rng, row));
            }
        }
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let id = args.next().unwrap_or_else(|| "classic/cartpole-v1".into());
    let num_envs: usize = args.next().map_or(Ok(8), |s| s.parse())?;
    let steps: usize = args.next().map_or(Ok(2000), |s| s.parse())?;

    let venv = proprio::make_vec(
        &id,
        num_envs,
        &proprio::serde_json::Value::Null,
        VecOptions::default(),
    )?;
    let mut venv = RecordEpisodeStatistics::new(venv, 100);
    let space = venv.spec().action_space.clone();
    let mut actions = vec![0.0; num_envs * space.flat_dim()];
    let mut policy = RandomPolicy {
        space,
        rng: EnvRng::seed_from_u64(42),
    };

    venv.reset(Some(0), None)?;
    for _ in 0..steps {
        policy.act(&venv.batch().obs, &mut actions, ActMode::Sampled)?;
        venv.step(&actions)?;
        for (i, info) in venv.batch().infos.iter().enumerate() {
            if let (Some(ret), Some(len)) = (info.get("episode.return"), info.get("episode.length"))
            {
                println!("env {i:>3}: episode return {ret:>9.2} over {len} steps");
            }
        }
    }
    let recent = venv.recent();
    let mean = recent.iter().map(|(r, _)| r).sum::<f64>() / recent.len().max(1) as f64;
    println!(
        "{id}: {} episodes, mean return of the last {} = {mean:.2}",
        venv.episodes(),
        recent.len()
    );
    Ok(())
}
