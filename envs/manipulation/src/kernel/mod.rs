//! The kernel physics: the Panda as a reduced-coordinate articulated body and
//! up to [`CUBES`] free cubes, one plain block of floats per env
//! ([`Sim`]), stepped by [`KernelModel`] through
//! [`proprio_core::ChunkedKernel`] — the layout a GPU kernel reads. Same
//! tasks, observations, rewards, controllers and scripted policies as the
//! rapier physics; `docs/envs.md` lists what it simplifies.

// Index loops mirror the WGSL twin line for line (same arithmetic, same order).
#![allow(clippy::needless_range_loop)]

mod arm;
mod collide;
mod control;
#[cfg(feature = "gpu")]
mod gpu;
mod physics;
mod state;
mod visuals;

pub use arm::{Arm, BodyBox, BodySphere, DOF, Kinematics};
pub use collide::{
    MARGIN, Motion, Obb, Point, box_box, box_plane, margin, sphere_box, sphere_plane,
};
pub use control::{IK_DAMPING, ik_step, rotation_vector};
pub use physics::{
    BAUMGARTE, GRAVITY, ITERATIONS, MAX_CONTACTS, SLOP, cube_box, cube_mass, robot_box,
};
pub use state::{CUBE_FIELDS, CUBES, SLOTS, Sim};

use crate::config::{Settings, TaskKind};
use crate::controller::ControlState;
use crate::instruct::{Instruction, Phrasing, words};
use crate::panda::BodyState;
use crate::task::{self, BlowUp, Measure, Start, TaskState};
use glam::{Quat, Vec3};
use proprio_core::{ChunkedModel, EnvRng, Family, Info, ResetOptions, Result, Scene, Stepped};

/// Solver steps per physics step: the kernel steps at twice `physics_hz`, as rapier's 2 substeps.
pub const SOLVER_STEPS: u32 = 1;

/// One manipulation task on the kernel physics.
pub struct KernelModel {
    settings: Settings,
    arm: Arm,
}

/// A kernel state as the tasks read it (the kinematics only when the TCP is asked for).
pub struct Measured<'a> {
    arm: &'a Arm,
    sim: &'a Sim,
}

impl<'a> Measured<'a> {
    /// Measures `sim`.
    pub fn new(arm: &'a Arm, sim: &'a Sim) -> Self {
        Self { arm, sim }
    }
}

impl Measure for Measured<'_> {
    fn joints(&self) -> ([f32; 9], [f32; 9]) {
        (self.sim.q, self.sim.qd)
    }

    fn tcp(&self) -> (Vec3, Quat) {
        self.arm.tcp(&self.arm.kinematics(&self.sim.q))
    }

    fn cube(&self, i: usize) -> BodyState {
        let c = &self.sim.cubes[i];
        BodyState {
            position: Vec3::new(c[0], c[1], c[2]),
            rotation: Quat::from_xyzw(c[3], c[4], c[5], c[6]),
            linvel: Vec3::new(c[7], c[8], c[9]),
            angvel: Vec3::new(c[10], c[11], c[12]),
        }
    }

    fn touches(&self, i: usize) -> bool {
        self.sim.grasp[i] > 0.5
    }
}

/// The task's side of a kernel state.
pub fn task_state(sim: &Sim) -> TaskState {
    TaskState {
        goal: sim.goal,
        held: sim.held as u32,
        control: ControlState {
            ee_position: sim.ee_position,
            ee_rotation: sim.ee_rotation,
            targets: sim.targets,
        },
        instruction: Instruction::decode(sim.instruction, CUBES),
        phrasing: sim.instruction[3] as Phrasing,
    }
}

impl KernelModel {
    /// The model of envs with `settings`.
    pub fn new(settings: Settings) -> std::result::Result<Self, String> {
        Ok(Self {
            settings,
            arm: Arm::panda()?,
        })
    }

    /// The validated settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The arm.
    pub fn arm(&self) -> &Arm {
        &self.arm
    }

    /// The state at `start`: arm at rest holding its pose, cubes at rest.
    pub fn start(&self, start: &Start) -> Sim {
        let mut sim: Sim = bytemuck::Zeroable::zeroed();
        sim.q = start.q;
        sim.targets = start.q;
        for (i, (centre, yaw)) in start.cubes.iter().enumerate().take(self.settings.cubes) {
            let r = Quat::from_rotation_z(*yaw);
            sim.cubes[i][..7].copy_from_slice(&[centre.x, centre.y, centre.z, r.x, r.y, r.z, r.w]);
        }
        sim.goal = start.goal.to_array();
        sim.instruction = start.instruction.map_or([0.0; 4], Instruction::encode);
        sim.instruction[3] = f32::from(start.phrasing);
        let (tcp, hand) = self.arm.tcp(&self.arm.kinematics(&sim.q));
        sim.ee_position = tcp.to_array();
        sim.ee_rotation = hand.to_array();
        sim
    }

    /// Advances `sim` by `seconds` of physics with the current targets (for tests and tools).
    pub fn simulate(&self, sim: &mut Sim, seconds: f32) {
        self.simulate_pushed(sim, seconds, &[Vec3::ZERO; CUBES]);
    }

    /// Advances `sim` by `seconds` with each cube pushed by a constant force, N.
    pub fn simulate_pushed(&self, sim: &mut Sim, seconds: f32, force: &[Vec3; CUBES]) {
        let h = self.settings.dt / SOLVER_STEPS as f32;
        for _ in 0..(seconds / h).round() as usize {
            physics::step(&self.arm, sim, self.settings.cubes, h, force);
        }
    }

    fn blow_up(&self, sim: &Sim) -> BlowUp {
        if proprio_core::chunked::fields(sim)
            .iter()
            .any(|v| !v.is_finite())
        {
            return BlowUp::NonFinite;
        }
        let outside = sim.cubes[..self.settings.cubes]
            .iter()
            .any(|c| task::outside(Vec3::new(c[0], c[1], c[2])));
        if outside {
            BlowUp::LeftWorkspace
        } else {
            BlowUp::None
        }
    }

    /// One control step: controller, physics, reward and success.
    pub fn control_step(&self, sim: &mut Sim, action: &[f32]) -> task::StepResult {
        let s = &self.settings;
        let h = s.dt / SOLVER_STEPS as f32;
        control::apply(
            &self.arm,
            s.control,
            action,
            h * (SOLVER_STEPS * s.substeps) as f32,
            sim,
        );
        let mut failure = BlowUp::None;
        for _ in 0..s.substeps {
            for _ in 0..SOLVER_STEPS {
                physics::step(&self.arm, sim, s.cubes, h, &[Vec3::ZERO; CUBES]);
            }
            failure = self.blow_up(sim);
            if failure != BlowUp::None {
                break;
            }
        }
        let mut t = task_state(sim);
        let out = task::outcome(s, &Measured::new(&self.arm, sim), &mut t, failure);
        sim.held = t.held as f32;
        if failure == BlowUp::NonFinite {
            // Keep the state finite: the episode ends here, and a NaN must not reach a snapshot.
            for v in proprio_core::chunked::fields_mut(sim) {
                if !v.is_finite() {
                    *v = 0.0;
                }
            }
        }
        out
    }
}

impl ChunkedModel for KernelModel {
    type State = Sim;

    fn draw(&self, rng: &mut EnvRng, options: ResetOptions) -> Result<Sim> {
        crate::Manipulation::no_options(options)?;
        Ok(self.start(&task::draw_start(&self.settings, rng)))
    }

    fn check(&self, sim: &Sim) -> std::result::Result<(), String> {
        for (i, c) in sim.cubes.iter().enumerate().take(self.settings.cubes) {
            let norm = Quat::from_xyzw(c[3], c[4], c[5], c[6]).length();
            if (norm - 1.0).abs() > 1e-3 {
                return Err(format!(
                    "cube {i}'s orientation is not a unit quaternion (length {norm})"
                ));
            }
        }
        if sim.grasp.iter().any(|g| *g != 0.0 && *g != 1.0) {
            return Err("grasp flags must be 0 or 1".into());
        }
        let instruct = self.settings.task == TaskKind::Instruct;
        if instruct && Instruction::decode(sim.instruction, self.settings.cubes).is_none() {
            return Err(format!(
                "{:?} is not an instruction over {} cubes",
                sim.instruction, self.settings.cubes
            ));
        }
        if instruct {
            words::check_phrasing(sim.instruction[3], self.settings.typed.is_some())?;
        }
        if sim.held < 0.0 || sim.held.fract() != 0.0 {
            return Err(format!(
                "held must be a whole number of steps, got {}",
                sim.held
            ));
        }
        Ok(())
    }

    fn step(&self, sim: &mut Sim, action: &[f32], info: &mut Info) -> Stepped {
        let out = self.control_step(sim, action);
        let t = task_state(sim);
        task::write_info(
            info,
            &self.settings,
            &Measured::new(&self.arm, sim),
            &t,
            Some(&out),
        );
        Stepped {
            reward: out.reward,
            terminated: out.success,
            truncated: out.blow_up != BlowUp::None,
        }
    }

    fn start_info(&self, sim: &Sim, info: &mut Info) {
        task::write_info(
            info,
            &self.settings,
            &Measured::new(&self.arm, sim),
            &task_state(sim),
            None,
        );
    }

    fn observe(&self, sim: &Sim, obs: &mut [f32]) {
        task::observe(
            &self.settings,
            &Measured::new(&self.arm, sim),
            &task_state(sim),
            obs,
        );
    }

    fn scene(&self, sim: &Sim, scene: &mut Scene) {
        visuals::scene(&self.settings, &self.arm, sim, &task_state(sim), scene);
    }
}
