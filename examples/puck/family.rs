//! `puck/slide-v0`: a third party's batched family, written outside
//! Proprio's env crates against its public API only. A 0.5 kg puck slides
//! on a line with viscous friction; the action pushes it (±2 N) and the task
//! is to stop it within 5 cm of a goal. The state is four floats
//! ([`Puck`]); [`PuckModel`] steps it on CPU threads and `shader.wgsl`, its
//! WGSL twin, on any GPU.

use bytemuck::{Pod, Zeroable};
use proprio_core::chunked::write_info;
use proprio_core::rand::RngExt;
use proprio_core::{
    ActMode, Agent, ChunkedModel, EnvEntry, EnvRng, Family, Info, Pose, Registry, ResetOptions,
    Result, Scene, Shape, Space, Stepped, Visual, family,
};
use proprio_gpu::GpuModel;
use serde::{Deserialize, Serialize};

/// The one task.
pub const SLIDE: EnvEntry = EnvEntry {
    id: "puck/slide-v0",
    description: "Push a puck along a line and stop it within 5 cm of a goal.",
    reward_range: (-2.0, 1.0),
    max_episode_steps: Some(100),
    physics_steps_per_step: 5,
    reward: "-|x - goal| per step; +1 on success",
    termination: "terminated within 5 cm of the goal below 0.1 m/s (success); truncated after 100 steps (5 s)",
    action_handling: "the push, clipped to [-1, 1], times 2 N",
};

/// Mass of the puck, kg.
pub const MASS: f32 = 0.5;
/// The largest push, N.
pub const PUSH: f32 = 2.0;
/// Success: distance to the goal, m, and speed, m/s.
pub const RADIUS: f32 = 0.05;
/// See [`RADIUS`].
pub const STILL: f32 = 0.1;

/// The user's config: every key optional.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PuckConfig {
    /// Viscous friction, N·s/m.
    pub friction: f32,
    /// Physics steps per second.
    pub physics_hz: u32,
}

impl Default for PuckConfig {
    fn default() -> Self {
        Self {
            friction: 0.5,
            physics_hz: 100,
        }
    }
}

/// One env's state: a plain block of floats.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable, Serialize, Deserialize)]
pub struct Puck {
    /// Position, m.
    pub x: f32,
    /// Velocity, m/s.
    pub v: f32,
    /// Where it should stop, m.
    pub goal: f32,
    /// The last push, in [-1, 1].
    pub push: f32,
}

/// The validated config, which is also the model.
#[derive(Debug, Clone, Copy)]
pub struct PuckModel {
    friction: f32,
    dt: f32,
    substeps: u32,
}

impl PuckModel {
    fn success(&self, p: &Puck) -> bool {
        (p.x - p.goal).abs() < RADIUS && p.v.abs() < STILL
    }
}

impl ChunkedModel for PuckModel {
    type State = Puck;

    fn draw(&self, rng: &mut EnvRng, options: ResetOptions) -> Result<Puck> {
        Pucks::no_options(options)?;
        let x = rng.random::<f32>() * 2.0 - 1.0;
        let goal = rng.random::<f32>() * 2.0 - 1.0;
        Ok(Puck {
            x,
            v: 0.0,
            goal,
            push: 0.0,
        })
    }

    fn check(&self, p: &Puck) -> std::result::Result<(), String> {
        if p.push.abs() <= 1.0 {
            Ok(())
        } else {
            Err(format!("push {} is outside [-1, 1]", p.push))
        }
    }

    fn step(&self, p: &mut Puck, action: &[f32], info: &mut Info) -> Stepped {
        p.push = action[0].clamp(-1.0, 1.0);
        for _ in 0..self.substeps {
            // Semi-implicit Euler; the shader does the same operations in the same order.
            let force = PUSH * p.push - self.friction * p.v;
            p.v += self.dt * (force / MASS);
            p.x += self.dt * p.v;
        }
        let success = self.success(p);
        let distance = (p.x - p.goal).abs();
        write_info(info, &INFO_KEYS, &[distance], Some((success, 0)));
        Stepped::new(if success { 1.0 } else { -distance }, success)
    }

    fn start_info(&self, p: &Puck, info: &mut Info) {
        write_info(info, &INFO_KEYS, &[(p.x - p.goal).abs()], None);
    }

    fn observe(&self, p: &Puck, obs: &mut [f32]) {
        obs.copy_from_slice(&[p.x, p.v, p.goal - p.x]);
    }

    fn scene(&self, p: &Puck, scene: &mut Scene) {
        let at = |x: f32, z: f32| Pose {
            translation: [x, 0.0, z],
            rotation: [0.0, 0.0, 0.0, 1.0],
        };
        let puck = Shape::Cylinder {
            radius: 0.05,
            half_height: 0.02,
        };
        scene
            .bodies
            .push(Visual::new(puck, at(p.x, 0.02), [0.2, 0.3, 0.8, 1.0]));
        let goal = Shape::Sphere { radius: RADIUS };
        scene.markers.push(Visual::new(
            goal,
            at(p.goal, 0.02),
            [0.15, 0.85, 0.25, 0.45],
        ));
    }
}

/// The metric every step reports in `info`, besides success and crash (never).
const INFO_KEYS: [&str; 1] = ["distance"];

proprio_gpu::params! {
    /// The shader's parameter block (read-only storage, as every family's).
    struct Params {
        substeps: u32,
        _pad: u32,
        dt: f32,
        friction: f32,
        _pad1: f32,
        _pad2: f32,
    }
}

impl GpuModel for PuckModel {
    /// Info floats: distance, then success and crash (always 0).
    const INFO_KEYS: &'static [&'static str] = &INFO_KEYS;
    const NAME: &'static str = "puck";

    fn shader(&self) -> String {
        let fields = proprio_gpu::fields!(Puck: x, v, goal, push);
        let scalars = [
            ("MASS", MASS),
            ("PUSH", PUSH),
            ("RADIUS", RADIUS),
            ("STILL", STILL),
        ];
        proprio_gpu::shader::<PuckModel>(
            &fields,
            &[],
            &scalars,
            &[Params::WGSL, include_str!("shader.wgsl")],
        )
    }

    fn params(&self) -> Vec<u8> {
        Params {
            substeps: self.substeps,
            dt: self.dt,
            friction: self.friction,
            ..bytemuck::Zeroable::zeroed()
        }
        .bytes()
    }
}

/// Pushes towards the goal, braking as it nears (a PD law).
pub struct Pusher;

impl Agent for Pusher {
    fn act(&mut self, obs: &[f32], actions: &mut [f32], _: ActMode) -> Result<()> {
        for (o, a) in obs.chunks_exact(3).zip(actions.iter_mut()) {
            *a = (4.0 * o[2] - 1.5 * o[1]).clamp(-1.0, 1.0);
        }
        Ok(())
    }
}

/// The family: one entry, its config, its model and its GPU twin.
pub struct Pucks;

impl Family for Pucks {
    type Config = PuckConfig;
    type Task = ();
    type Settings = PuckModel;
    type Model = PuckModel;
    const CRATE: &'static str = "the puck example";
    const NOUN: &'static str = "puck";
    const GPU: Option<family::GpuVecEnv<PuckModel>> = Some(proprio_gpu::vec_env::<PuckModel>);

    fn entries() -> Vec<(EnvEntry, ())> {
        vec![(SLIDE, ())]
    }

    fn defaults(_: ()) -> PuckConfig {
        PuckConfig::default()
    }

    fn settings(_: (), c: &PuckConfig, _: Option<u64>) -> std::result::Result<PuckModel, String> {
        if !(c.friction.is_finite() && c.friction >= 0.0) {
            return Err(format!(
                "friction must be finite and >= 0, got {}",
                c.friction
            ));
        }
        if c.physics_hz == 0 || !c.physics_hz.is_multiple_of(20) || c.physics_hz > 2000 {
            return Err(format!(
                "physics_hz must be a multiple of the 20 Hz control rate up to 2000, got {}",
                c.physics_hz
            ));
        }
        Ok(PuckModel {
            friction: c.friction,
            dt: 1.0 / c.physics_hz as f32,
            substeps: c.physics_hz / 20,
        })
    }

    fn spaces(_: (), _: &PuckModel) -> (Space, Space) {
        let observation = Space::uniform_box(3, f32::NEG_INFINITY, f32::INFINITY);
        (observation, Space::uniform_box(1, -1.0, 1.0))
    }

    fn substeps(m: &PuckModel) -> u32 {
        m.substeps
    }

    fn model(m: PuckModel) -> Result<PuckModel> {
        Ok(m)
    }

    fn scripted(_: PuckModel) -> Result<Box<dyn Agent + Send>> {
        Ok(Box::new(Pusher))
    }
}

/// Adds `puck/slide-v0` to a registry.
pub fn register(registry: &mut Registry) {
    family::register::<Pucks>(registry);
}
