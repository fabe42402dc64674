//! The scene every env's world is cloned from: a table, the Panda as a rapier
//! multibody driven by PD position motors, and up to four cubes, with the
//! handles to those parts.

use super::world::{Parts, WorldState};
use crate::panda::{
    BASE, CUBE_DENSITY, CUBE_HALF, GRIP_FRICTION, MAX_CUBES, MOVING_JOINTS, PANDA_URDF,
    TABLE_FRICTION, TABLE_HALF,
};
use glam::{Quat, Vec3};
use rapier3d::prelude::*;
use rapier3d_urdf::{UrdfLoaderOptions, UrdfMultibodyOptions, UrdfRobot};

/// Contact stiffness (natural frequency Hz, damping ratio). rapier's default
/// (30 Hz, ζ = 10) lets a 20 N grip sink 3 cm into a 64 g cube; this keeps it near 1 mm.
pub const CONTACT_SOFTNESS: SpringCoefficients<f32> = SpringCoefficients {
    natural_frequency: 100.0,
    damping_ratio: 1.0,
};
/// Solver substeps per physics step (rapier's default is 4): the multibody's
/// mass matrix is rebuilt every substep, the largest cost of a step, and 2
/// keep grasps and stacks steady at 60 Hz.
pub const SOLVER_SUBSTEPS: usize = 2;
const ROBOT: Group = Group::GROUP_1;
const TABLE: Group = Group::GROUP_2;
const OBJECT: Group = Group::GROUP_3;

/// Why a scene cannot be built.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the scene: {0}")]
pub struct TemplateError(pub String);

/// A template world (arm at zero joint angles, cubes parked) and its parts.
pub struct Template {
    template: WorldState,
    parts: Parts,
}

fn groups(member: Group, filter: Group) -> InteractionGroups {
    InteractionGroups::new(member, filter, InteractionTestMode::And)
}

fn joint_name(urdf: &urdf_rs::Robot, index: usize) -> &str {
    urdf.joints.get(index).map_or("", |j| j.name.as_str())
}

impl Template {
    /// The table, the arm and `cubes` cubes (at most [`MAX_CUBES`]), stepped every `dt` seconds.
    pub fn new(cubes: usize, dt: f32) -> Result<Self, TemplateError> {
        if cubes > MAX_CUBES {
            return Err(TemplateError(format!(
                "at most {MAX_CUBES} cubes, not {cubes}"
            )));
        }
        let options = UrdfLoaderOptions {
            create_colliders_from_collision_shapes: true,
            make_roots_fixed: true,
            apply_imported_mass_props: true,
            collider_blueprint: ColliderBuilder::default()
                .density(0.0)
                .collision_groups(groups(ROBOT, TABLE | OBJECT))
                .friction(GRIP_FRICTION),
            ..Default::default()
        };
        let (mut robot, urdf) = UrdfRobot::from_str(PANDA_URDF, options, std::path::Path::new("."))
            .map_err(|e| TemplateError(e.to_string()))?;
        let names: Vec<&str> = robot
            .joints
            .iter()
            .map(|j| joint_name(&urdf, j.urdf_joint_index))
            .collect();
        let mut params = IntegrationParameters {
            dt,
            ..Default::default()
        };
        params.contact_softness = CONTACT_SOFTNESS;
        params.num_solver_iterations = SOLVER_SUBSTEPS;
        let mut physics = WorldState::empty(Vector::new(0.0, 0.0, -9.81), params);
        let (bodies, colliders, multibodies) = physics.sets_mut();
        robot.append_transform(&Pose::from_translation(Vector::from_array(BASE)));
        let handles = robot.insert_using_multibody_joints(
            bodies,
            colliders,
            multibodies,
            UrdfMultibodyOptions::DISABLE_SELF_CONTACTS,
        );
        // The Panda's own controller compensates gravity, as ManiSkill's does.
        // Nothing sleeps: a sleeping pair keeps stale contacts, and RL scenes rarely rest.
        for link in &handles.links {
            if let Some(body) = bodies.get_mut(link.body) {
                body.set_gravity_scale(0.0, false);
                *body.activation_mut() = RigidBodyActivation::cannot_sleep();
            }
        }
        let find = |name: &str| {
            names
                .iter()
                .position(|n| *n == name)
                .map(|i| &handles.joints[i])
                .ok_or_else(|| TemplateError(format!("the URDF has no joint '{name}'")))
        };
        let mut joints = [MultibodyJointHandle::invalid(); 9];
        let mut links = [0; 9];
        let mut efforts = [0.0; 9];
        let mut speeds = [0.0; 9];
        for (k, name) in MOVING_JOINTS.into_iter().enumerate() {
            let limit = urdf
                .joints
                .iter()
                .find(|j| j.name == name)
                .map(|j| &j.limit);
            efforts[k] = limit.map_or(0.0, |l| l.effort as f32);
            speeds[k] = limit.map_or(0.0, |l| l.velocity as f32);
            if !(speeds[k] > 0.0 && speeds[k].is_finite()) {
                return Err(TemplateError(format!(
                    "joint '{name}' needs a positive velocity limit, got {}",
                    speeds[k]
                )));
            }
            joints[k] = find(name)?
                .joint
                .ok_or_else(|| TemplateError(format!("joint '{name}' was not inserted")))?;
            links[k] = multibodies
                .get(joints[k])
                .map(|(_, link)| link)
                .ok_or_else(|| TemplateError(format!("joint '{name}' left the arm's multibody")))?;
        }
        let hand = find("panda_finger_joint1")?.link1;
        let mut fingers = [ColliderHandle::invalid(); 2];
        for (slot, name) in fingers.iter_mut().zip(&MOVING_JOINTS[7..]) {
            *slot = bodies[find(name)?.link2]
                .colliders()
                .first()
                .copied()
                .ok_or_else(|| {
                    TemplateError(format!("the link moved by '{name}' has no collider"))
                })?;
        }
        let table = bodies.insert(RigidBodyBuilder::fixed().translation(Vector::new(
            0.0,
            0.0,
            -TABLE_HALF[2],
        )));
        colliders.insert_with_parent(
            ColliderBuilder::cuboid(TABLE_HALF[0], TABLE_HALF[1], TABLE_HALF[2])
                .friction(TABLE_FRICTION)
                .collision_groups(groups(TABLE, ROBOT | OBJECT)),
            table,
            bodies,
        );
        let mut parked = [None; MAX_CUBES];
        for (i, slot) in parked.iter_mut().take(cubes).enumerate() {
            let body = bodies.insert(
                RigidBodyBuilder::dynamic()
                    .translation(Vector::new(0.3 + 0.1 * i as f32, 0.4, CUBE_HALF))
                    .ccd_enabled(true)
                    .can_sleep(false),
            );
            let collider = colliders.insert_with_parent(
                ColliderBuilder::cuboid(CUBE_HALF, CUBE_HALF, CUBE_HALF)
                    .density(CUBE_DENSITY)
                    .friction(GRIP_FRICTION)
                    .collision_groups(groups(OBJECT, ROBOT | TABLE | OBJECT)),
                body,
                bodies,
            );
            *slot = Some((body, collider));
        }
        let parts = Parts {
            joints,
            links,
            efforts,
            speeds,
            hand,
            fingers,
            cubes: parked,
            bodies: bodies.len(),
            colliders: colliders.len(),
        };
        Ok(Self {
            template: physics,
            parts,
        })
    }

    /// Handles to the arm and cubes.
    pub fn parts(&self) -> &Parts {
        &self.parts
    }

    /// A fresh world: the arm at `q` (7 joint angles, 2 finger openings) holding
    /// that pose, and cube `i` at `cubes[i]` (centre and yaw), at rest.
    pub fn start(&self, q: &[f32; 9], cubes: &[(Vec3, f32)]) -> WorldState {
        let mut physics = self.template.clone();
        physics.place_arm(&self.parts, q);
        for (i, (centre, yaw)) in cubes.iter().enumerate() {
            physics.place_cube(&self.parts, i, *centre, Quat::from_rotation_z(*yaw));
        }
        physics.set_targets(&self.parts, q);
        physics
    }
}
