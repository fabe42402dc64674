//! The tasks on a rapier world: an episode's start built as a world, the
//! world measured for rewards and observations, one control step.

use super::template::Template;
use super::world::{Parts, World, WorldState};
use crate::config::Settings;
use crate::controller::ArmController;
use crate::panda::BodyState;
use crate::task::{BlowUp, Measure, Start, StepResult, TaskState, draw_start, outcome, outside};
use glam::{Quat, Vec3};
use proprio_core::EnvRng;

/// Draws the start of an episode as a rapier world.
pub fn draw(
    s: &Settings,
    scene: &Template,
    controller: &ArmController,
    rng: &mut EnvRng,
) -> (WorldState, TaskState) {
    let Start {
        q,
        cubes,
        goal,
        instruction,
        phrasing,
    } = draw_start(s, rng);
    let physics = scene.start(&q, &cubes[..s.cubes]);
    let tcp = physics.tcp(scene.parts());
    let task = TaskState {
        goal: goal.to_array(),
        held: 0,
        control: controller.start(&q, tcp),
        instruction,
        phrasing,
    };
    (physics, task)
}

/// A rapier world and the handles of its scene, measured.
pub struct Rapier<'a>(pub &'a WorldState, pub &'a Parts);

impl Measure for Rapier<'_> {
    fn joints(&self) -> ([f32; 9], [f32; 9]) {
        self.0.joints(self.1)
    }
    fn tcp(&self) -> (Vec3, Quat) {
        self.0.tcp(self.1)
    }
    fn cube(&self, i: usize) -> BodyState {
        self.0.cube(self.1, i)
    }
    fn touches(&self, i: usize) -> bool {
        self.0.grasped(self.1, i)
    }
}

fn blow_up(world: &World, parts: &Parts) -> BlowUp {
    let p = world.physics();
    if world.blew_up() || !p.is_finite() {
        return BlowUp::NonFinite;
    }
    if (0..parts.cube_count()).any(|i| outside(p.cube(parts, i).position)) {
        BlowUp::LeftWorkspace
    } else {
        BlowUp::None
    }
}

/// One control step: the controller sets targets, `substeps` physics steps, then reward and success.
pub fn control_step(
    s: &Settings,
    parts: &Parts,
    controller: &ArmController,
    world: &mut World,
    task: &mut TaskState,
    action: &[f32],
) -> StepResult {
    let (q, _) = world.physics().joints(parts);
    let (tcp, _) = world.physics().tcp(parts);
    let period = s.dt * s.substeps as f32;
    let targets = controller.apply(s.control, action, &q, tcp, period, &mut task.control);
    world.physics_mut().set_targets(parts, &targets);
    let mut failure = BlowUp::None;
    for _ in 0..s.substeps {
        world.step();
        failure = blow_up(world, parts);
        if failure != BlowUp::None {
            break;
        }
    }
    outcome(s, &Rapier(world.physics(), parts), task, failure)
}
