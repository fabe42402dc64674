//! A test task whose steps draw from the env's random stream, so snapshots
//! must carry the generator position to continue bit-identically.

use proprio::rand::RngExt;
use proprio::{
    EnvEntry, EnvRng, Info, NoConfig, Outcome, Registry, ResetOptions, Result, Space, Task,
};

pub struct NoisyWalk {
    position: [f64; 2],
}

impl Task for NoisyWalk {
    type Config = NoConfig;
    type State = [f64; 2];

    fn new(_: &NoConfig) -> std::result::Result<Self, String> {
        Ok(Self { position: [0.0; 2] })
    }
    fn observation_space(&self) -> Space {
        Space::uniform_box(2, f32::NEG_INFINITY, f32::INFINITY)
    }
    fn action_space(&self) -> Space {
        Space::uniform_box(2, -1.0, 1.0)
    }
    fn reset(&mut self, rng: &mut EnvRng, _: ResetOptions, _: &mut Info) -> Result<()> {
        self.position = [rng.random::<f64>(), rng.random::<f64>()];
        Ok(())
    }
    fn observe(&self, obs: &mut [f32]) {
        obs[0] = self.position[0] as f32;
        obs[1] = self.position[1] as f32;
    }
    fn step(&mut self, action: &[f32], rng: &mut EnvRng, info: &mut Info) -> Outcome {
        for (p, a) in self.position.iter_mut().zip(action) {
            *p += f64::from(*a) * 0.1 + rng.random_range(-0.05..0.05);
        }
        let distance = self.position.iter().map(|p| p * p).sum::<f64>().sqrt();
        info.set("distance", distance);
        Outcome {
            reward: -distance,
            terminated: distance > 3.0,
        }
    }
    fn state(&self) -> [f64; 2] {
        self.position
    }
    fn set_state(&mut self, state: [f64; 2]) -> Result<()> {
        self.position = state;
        Ok(())
    }
}

pub const ENTRY: EnvEntry = EnvEntry {
    id: "test/noisy-walk-v0",
    description: "A random walk whose steps use the env's random stream.",
    reward_range: (f64::NEG_INFINITY, 0.0),
    max_episode_steps: Some(40),
    physics_steps_per_step: 1,
    reward: "minus the distance to the origin",
    termination: "distance above 3; truncated after 40 steps",
    action_handling: "passed through",
};

pub fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.register_task::<NoisyWalk>(ENTRY);
    registry
}
