//! # proprio-driving
//!
//! Car envs — `driving/lane-keep-v0`, `driving/racing-v0`,
//! `driving/parking-v0`, `driving/highway-v0` — on a dynamic bicycle model
//! (a mid-size saloon) with IDM/MOBIL traffic, procedural seeded roads and
//! tracks, and CaRL-style rewards. The state of one env is a fixed block of
//! floats ([`Car`]) stepped by [`DrivingModel`] on CPU threads through
//! [`proprio_core::ChunkedKernel`] and, with the `gpu` feature, in one wgpu
//! dispatch per step (`GpuKernel`), with the same contract and layout.

mod config;
pub mod controller;
#[cfg(feature = "gpu")]
mod gpu;
mod highway;
mod lane_keep;
pub mod params;
mod parking;
mod racing;
pub mod road;
mod scripted;
mod state;
pub mod task;
pub mod traffic;
pub mod vehicle;
mod visuals;

pub use config::{ActionMode, DrivingConfig, Settings, TaskKind};
#[cfg(feature = "gpu")]
pub use gpu::GpuKernel;
pub use scripted::Driver;
pub use state::{Car, LEN, MAX_OTHERS, MAX_SEGMENTS, Other, Segment};

use proprio_core::serde_json::Value;
use proprio_core::{
    Agent, Backend, ChunkedKernel, ChunkedModel, Env, EnvEntry, EnvRng, EnvSpec, Info, KernelEnv,
    KernelVecEnv, Registry, ResetOptions, Result, Scene, Space, Stepped, VecEnv, VecOptions,
    family,
};
use std::sync::Arc;

const ACTION_HANDLING: &str = "action=\"continuous\": [steer, pedal], each clipped to [-1, 1] (steer +1 full right; pedal +1 full throttle, -1 brake, reverse once stopped); action=\"meta\": 0 lane left, 1 idle, 2 lane right, 3 faster, 4 slower";

/// `driving/lane-keep-v0`.
pub const LANE_KEEP: EnvEntry = EnvEntry {
    id: "driving/lane-keep-v0",
    description: "Follow a winding two-lane road in the right lane at the speed limit until an 800 m route is done.",
    reward_range: (-1.0, 1.2),
    max_episode_steps: Some(600),
    physics_steps_per_step: 10,
    reward: "CaRL: metres gained along the route / (speed limit x step time), times soft-penalty factors for speeding, distance from the lane centre and discomfort; -1 on leaving the road",
    termination: "terminated when the route is done (success) or a wheel runs 0.3 m past the road edge; truncated after 600 steps (60 s)",
    action_handling: ACTION_HANDLING,
};

/// `driving/racing-v0`.
pub const RACING: EnvEntry = EnvEntry {
    id: "driving/racing-v0",
    description: "Lap a random closed track, 8 m wide, as fast as possible without leaving it.",
    reward_range: (-1.0, 2.4),
    max_episode_steps: Some(1200),
    physics_steps_per_step: 10,
    reward: "metres gained along the track / (20 m/s x step time) - 1 per second (the clock: faster laps pay more); -1 on leaving the track",
    termination: "terminated when the laps are done (success) or a wheel runs 0.3 m past the track's edge; truncated after 1200 steps (120 s)",
    action_handling: ACTION_HANDLING,
};

/// `driving/parking-v0`.
pub const PARKING: EnvEntry = EnvEntry {
    id: "driving/parking-v0",
    description: "Park nose-in in a goal bay of a lot among parked cars (goal-conditioned observation).",
    reward_range: (-10.0, 11.0),
    max_episode_steps: Some(300),
    physics_steps_per_step: 10,
    reward: "the goal error (distance + 2 m/rad x heading error) removed this step; +10 on success; -10 on a collision or leaving the lot",
    termination: "terminated on success (within 0.3 m and 10 degrees of the bay's pose, below 0.5 m/s), a collision or leaving the lot; truncated after 300 steps (30 s)",
    action_handling: ACTION_HANDLING,
};

/// `driving/highway-v0`.
pub const HIGHWAY: EnvEntry = EnvEntry {
    id: "driving/highway-v0",
    description: "Drive fast on a four-lane road among 20 IDM/MOBIL cars without crashing (highway-env's highway).",
    reward_range: (-1.0, 1.2),
    max_episode_steps: Some(80),
    physics_steps_per_step: 50,
    reward: "CaRL: metres gained along the road / (speed limit x step time), times soft-penalty factors for speeding, distance from a lane centre and discomfort; -1 on a collision or leaving the road",
    termination: "terminated on a collision or leaving the road; truncated after 80 steps (40 s at 2 decisions a second); success = crash-free to the time limit at a mean speed of 20 m/s or more",
    action_handling: ACTION_HANDLING,
};

/// One task's physics and rules on a [`Car`], for [`ChunkedKernel`].
pub struct DrivingModel {
    settings: Settings,
}

impl DrivingModel {
    /// The model of envs with `settings`.
    pub fn new(settings: Settings) -> Self {
        Self { settings }
    }

    /// The validated settings of the envs.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }
}

impl ChunkedModel for DrivingModel {
    type State = Car;

    fn zeroed() -> Car {
        bytemuck::Zeroable::zeroed()
    }

    fn fields(state: &Car) -> &[f32] {
        state.flat()
    }

    fn fields_mut(state: &mut Car) -> &mut [f32] {
        state.flat_mut()
    }

    fn draw(&self, rng: &mut EnvRng, options: ResetOptions) -> Result<Car> {
        family::no_reset_options(
            "driving",
            " (configure the task with its config keys)",
            options,
        )?;
        Ok(task::draw(&self.settings, rng))
    }

    fn check(&self, state: &Car) -> std::result::Result<(), String> {
        state.check()
    }

    fn step(&self, state: &mut Car, action: &[f32], info: &mut Info) -> Stepped {
        let out = task::control_step(state, action, &self.settings);
        task::write_info(info, state.speed(), state.progress, Some(&out));
        Stepped::new(out.reward, out.terminated)
    }

    fn start_info(&self, state: &Car, info: &mut Info) {
        task::write_info(info, state.speed(), state.progress, None);
    }

    fn observe(&self, state: &Car, obs: &mut [f32]) {
        task::observe(state, &self.settings, obs);
    }

    fn scene(&self, state: &Car, scene: &mut Scene) {
        visuals::draw(state, &self.settings, scene);
    }
}

/// Validated settings and the spec of `entry` under a user config.
pub fn settings(
    entry: &EnvEntry,
    task: TaskKind,
    config: &Value,
) -> Result<(Settings, Arc<EnvSpec>)> {
    let (mut parsed, limit): (DrivingConfig, _) = family::parse_config(entry, config)?;
    let settings = Settings::new(task, &parsed, limit)
        .map_err(|message| family::config_error(entry, message))?;
    parsed.fill_defaults(task);
    let dim = task::obs_dim(task);
    let observation_space = Space::Box {
        low: vec![f32::NEG_INFINITY; dim],
        high: vec![f32::INFINITY; dim],
    };
    let action_space = match settings.action {
        ActionMode::Continuous => Space::Box {
            low: vec![-1.0; 2],
            high: vec![1.0; 2],
        },
        ActionMode::Meta => Space::Discrete { n: 5, start: 0 },
    };
    let spec = family::entry_spec(
        entry,
        &parsed,
        limit,
        observation_space,
        action_space,
        settings.substeps,
    )?;
    Ok((settings, spec))
}

fn make_vec(
    entry: &EnvEntry,
    task: TaskKind,
    config: &Value,
    n: usize,
    options: VecOptions,
) -> Result<Box<dyn VecEnv>> {
    let (settings, spec) = settings(entry, task, config)?;
    let model = DrivingModel::new(settings);
    match options.backend {
        Backend::Cpu => {
            let threads = options.worker_threads();
            let kernel = ChunkedKernel::new(spec, model, n, threads)?;
            Ok(Box::new(KernelVecEnv::new(kernel, options.autoreset)?))
        }
        #[cfg(feature = "gpu")]
        Backend::Gpu => {
            let kernel = GpuKernel::new(spec, model, n)?;
            Ok(Box::new(KernelVecEnv::new(kernel, options.autoreset)?))
        }
        #[cfg(not(feature = "gpu"))]
        Backend::Gpu => Err(proprio_core::Error::Backend(format!(
            "this build of proprio-driving has no GPU backend for {} (enable its `gpu` feature)",
            entry.id
        ))),
    }
}

fn make(entry: &EnvEntry, task: TaskKind, config: &Value) -> Result<Box<dyn Env>> {
    let (settings, spec) = settings(entry, task, config)?;
    let kernel = ChunkedKernel::new(spec, DrivingModel::new(settings), 1, 1)?;
    Ok(Box::new(KernelEnv::new(kernel)?))
}

fn scripted(entry: &EnvEntry, task: TaskKind, spec: &EnvSpec) -> Result<Box<dyn Agent + Send>> {
    let (settings, _) = settings(entry, task, &spec.config)?;
    Ok(Box::new(Driver::new(settings)))
}

/// Registers the four driving tasks and their scripted drivers.
pub fn register(registry: &mut Registry) {
    let tasks = [
        (LANE_KEEP, TaskKind::LaneKeep),
        (RACING, TaskKind::Racing),
        (PARKING, TaskKind::Parking),
        (HIGHWAY, TaskKind::Highway),
    ]
    .map(|(entry, task)| {
        let defaults = proprio_core::serde_json::to_value(DrivingConfig::defaults_for(task));
        (entry, task, defaults.unwrap_or(Value::Null))
    });
    let makers = family::FamilyMakers {
        make,
        make_vec,
        scripted,
    };
    family::register_family(registry, tasks, &makers);
}
