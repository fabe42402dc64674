//! One env's rapier3d world: a table, the Panda as a multibody driven by PD
//! position motors, and up to two cubes.
//!
//! [`Physics`] is everything that evolves (what a snapshot saves, bit for
//! bit); [`World`] adds the pipeline workspaces that do not; [`Scene`] is the
//! template every env's world is cloned from, with the handles to its parts.

use crate::robot::{PANDA_URDF, TCP_OFFSET};
use glam::{Quat, Vec3};
use rapier3d::prelude::*;
use rapier3d_urdf::{UrdfLoaderOptions, UrdfMultibodyOptions, UrdfRobot};
use serde::{Deserialize, Serialize};

/// PD gains of the arm joints (stiffness N·m/rad, damping N·m·s/rad), torque
/// capped at each joint's effort limit.
pub const ARM_GAINS: (f32, f32) = (4000.0, 400.0);
/// PD gains of the finger joints (N/m, N·s/m), force capped at the URDF's 70 N.
pub const FINGER_GAINS: (f32, f32) = (1000.0, 30.0);
/// Half extents of the table top, m; its surface is the plane z = 0.
pub const TABLE_HALF: [f32; 3] = [0.8, 0.6, 0.02];
/// Where the robot base stands on the table, m.
pub const BASE: [f32; 3] = [-0.615, 0.0, 0.0];
/// The usual rest pose: gripper down above the table centre.
pub const READY: [f32; 7] = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785];
/// Half the edge of every cube, m (ManiSkill's 4 cm cubes).
pub const CUBE_HALF: f32 = 0.02;
/// Cube density, kg/m³ (water): a 4 cm cube weighs 64 g.
pub const CUBE_DENSITY: f32 = 1000.0;
/// Friction coefficient of cubes and fingertips (rubber pads on wood).
pub const GRIP_FRICTION: f32 = 1.0;
/// Friction coefficient of the table top.
pub const TABLE_FRICTION: f32 = 0.5;
/// Contact stiffness (natural frequency Hz, damping ratio). rapier's default
/// (30 Hz, ζ = 10) lets a 20 N grip sink 3 cm into a 64 g cube; this keeps it near 1 mm.
pub const CONTACT_SOFTNESS: SpringCoefficients<f32> = SpringCoefficients {
    natural_frequency: 100.0,
    damping_ratio: 1.0,
};
/// Solver substeps per physics step (rapier's default is 4): the multibody's
/// mass matrix is rebuilt every substep, the largest cost of a step, and 2
/// already keeps grasps and stacks steady at 100 Hz.
pub const SOLVER_SUBSTEPS: usize = 2;
/// Contact points closer than this count as touching, m.
pub const TOUCH: f32 = 0.002;
/// Most cubes in a scene.
pub const MAX_CUBES: usize = 2;

/// The moving joints, in the order of targets and positions.
pub const MOVING_JOINTS: [&str; 9] = [
    "panda_joint1",
    "panda_joint2",
    "panda_joint3",
    "panda_joint4",
    "panda_joint5",
    "panda_joint6",
    "panda_joint7",
    "panda_finger_joint1",
    "panda_finger_joint2",
];

const ROBOT: Group = Group::GROUP_1;
const TABLE: Group = Group::GROUP_2;
const OBJECT: Group = Group::GROUP_3;

/// Why a scene cannot be built.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the scene: {0}")]
pub struct SceneError(pub String);

/// Everything that evolves in one world: restoring it continues bit-identically.
#[derive(Clone, Serialize, Deserialize)]
pub struct Physics {
    gravity: Vector,
    params: IntegrationParameters,
    islands: IslandManager,
    broad_phase: BroadPhaseBvh,
    narrow_phase: NarrowPhase,
    bodies: RigidBodySet,
    colliders: ColliderSet,
    impulse_joints: ImpulseJointSet,
    multibody_joints: MultibodyJointSet,
    soft_bodies: SoftBodySet,
}

/// Handles to the parts of a scene, the same in every clone of it.
#[derive(Debug, Clone, Copy)]
pub struct Parts {
    /// Multibody joint of each moving joint: 7 arm joints, then the 2 fingers.
    joints: [MultibodyJointHandle; 9],
    /// Link index of each moving joint in the arm's multibody.
    links: [usize; 9],
    /// Effort limit of each moving joint (N·m or N), from the URDF.
    efforts: [f32; 9],
    hand: RigidBodyHandle,
    fingers: [ColliderHandle; 2],
    cubes: [Option<(RigidBodyHandle, ColliderHandle)>; MAX_CUBES],
    /// Number of bodies and colliders in the scene.
    bodies: usize,
    colliders: usize,
}

/// A template world (arm at zero joint angles, cubes parked) and its parts.
pub struct Scene {
    template: Physics,
    parts: Parts,
}

/// One env's world: its physics plus the workspaces that step it.
pub struct World {
    physics: Physics,
    pipeline: PhysicsPipeline,
    ccd: CCDSolver,
}

/// Pose and velocity of a rigid body in the world frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BodyState {
    /// Position, m.
    pub position: Vec3,
    /// Orientation.
    pub rotation: Quat,
    /// Linear velocity, m/s.
    pub linvel: Vec3,
    /// Angular velocity, rad/s.
    pub angvel: Vec3,
}

fn joint_names(robot: &UrdfRobot, urdf: &urdf_rs::Robot) -> Vec<String> {
    robot
        .joints
        .iter()
        .map(|j| {
            urdf.joints
                .get(j.urdf_joint_index)
                .map_or_else(String::new, |u| u.name.clone())
        })
        .collect()
}

impl Scene {
    /// The table, the arm and `cubes` cubes (at most [`MAX_CUBES`]), stepped every `dt` seconds.
    pub fn new(cubes: usize, dt: f32) -> Result<Self, SceneError> {
        if cubes > MAX_CUBES {
            return Err(SceneError(format!(
                "at most {MAX_CUBES} cubes, not {cubes}"
            )));
        }
        let options = UrdfLoaderOptions {
            create_colliders_from_collision_shapes: true,
            make_roots_fixed: true,
            apply_imported_mass_props: true,
            collider_blueprint: ColliderBuilder::default()
                .collision_groups(InteractionGroups::new(
                    ROBOT,
                    TABLE | OBJECT,
                    InteractionTestMode::And,
                ))
                .friction(GRIP_FRICTION),
            ..Default::default()
        };
        let (mut robot, urdf) = UrdfRobot::from_str(PANDA_URDF, options, std::path::Path::new("."))
            .map_err(|e| SceneError(e.to_string()))?;
        let names = joint_names(&robot, &urdf);
        let mut physics = Physics {
            gravity: Vector::new(0.0, 0.0, -9.81),
            params: {
                let mut p = IntegrationParameters {
                    dt,
                    ..Default::default()
                };
                p.contact_softness = CONTACT_SOFTNESS;
                p.num_solver_iterations = SOLVER_SUBSTEPS;
                p
            },
            islands: IslandManager::new(),
            broad_phase: BroadPhaseBvh::default(),
            narrow_phase: NarrowPhase::new(),
            bodies: RigidBodySet::new(),
            colliders: ColliderSet::new(),
            impulse_joints: ImpulseJointSet::new(),
            multibody_joints: MultibodyJointSet::new(),
            soft_bodies: SoftBodySet::new(),
        };
        robot.append_transform(&Pose::from_translation(Vector::from_array(BASE)));
        let handles = robot.insert_using_multibody_joints(
            &mut physics.bodies,
            &mut physics.colliders,
            &mut physics.multibody_joints,
            UrdfMultibodyOptions::empty(),
        );
        // The Panda's own controller compensates gravity, as ManiSkill's does.
        // Nothing sleeps: a sleeping pair keeps stale contacts, and RL scenes rarely rest.
        for link in &handles.links {
            if let Some(body) = physics.bodies.get_mut(link.body) {
                body.set_gravity_scale(0.0, false);
                *body.activation_mut() = RigidBodyActivation::cannot_sleep();
            }
        }
        let table = physics
            .bodies
            .insert(RigidBodyBuilder::fixed().translation(Vector::new(0.0, 0.0, -TABLE_HALF[2])));
        physics.colliders.insert_with_parent(
            ColliderBuilder::cuboid(TABLE_HALF[0], TABLE_HALF[1], TABLE_HALF[2])
                .friction(TABLE_FRICTION)
                .collision_groups(InteractionGroups::new(
                    TABLE,
                    ROBOT | OBJECT,
                    InteractionTestMode::And,
                )),
            table,
            &mut physics.bodies,
        );
        let find = |name: &str| {
            names
                .iter()
                .position(|n| n == name)
                .map(|i| &handles.joints[i])
                .ok_or_else(|| SceneError(format!("the URDF has no joint '{name}'")))
        };
        let mut joints = [MultibodyJointHandle::invalid(); 9];
        let mut efforts = [0.0; 9];
        for (k, name) in MOVING_JOINTS.into_iter().enumerate() {
            efforts[k] = urdf
                .joints
                .iter()
                .find(|j| j.name == name)
                .map_or(0.0, |j| j.limit.effort as f32);
            joints[k] = find(name)?
                .joint
                .ok_or_else(|| SceneError(format!("joint '{name}' was not inserted")))?;
        }
        let mut links = [0; 9];
        for (link, joint) in links.iter_mut().zip(joints) {
            *link = physics
                .multibody_joints
                .get(joint)
                .map(|(_, link)| link)
                .ok_or_else(|| SceneError("a joint left the arm's multibody".into()))?;
        }
        let hand = find("panda_finger_joint1")?.link1;
        let finger = |name: &str| -> Result<ColliderHandle, SceneError> {
            let body = find(name)?.link2;
            physics.bodies[body]
                .colliders()
                .first()
                .copied()
                .ok_or_else(|| SceneError(format!("the link moved by '{name}' has no collider")))
        };
        let fingers = [
            finger("panda_finger_joint1")?,
            finger("panda_finger_joint2")?,
        ];
        let mut parked = [None; MAX_CUBES];
        for (i, slot) in parked.iter_mut().take(cubes).enumerate() {
            let body = physics.bodies.insert(
                RigidBodyBuilder::dynamic()
                    .translation(Vector::new(0.3 + 0.1 * i as f32, 0.4, CUBE_HALF))
                    .ccd_enabled(true)
                    .can_sleep(false),
            );
            let collider = physics.colliders.insert_with_parent(
                ColliderBuilder::cuboid(CUBE_HALF, CUBE_HALF, CUBE_HALF)
                    .density(CUBE_DENSITY)
                    .friction(GRIP_FRICTION)
                    .collision_groups(InteractionGroups::new(
                        OBJECT,
                        ROBOT | TABLE | OBJECT,
                        InteractionTestMode::And,
                    )),
                body,
                &mut physics.bodies,
            );
            *slot = Some((body, collider));
        }
        let (bodies, colliders) = (physics.bodies.len(), physics.colliders.len());
        Ok(Self {
            template: physics,
            parts: Parts {
                joints,
                links,
                efforts,
                hand,
                fingers,
                cubes: parked,
                bodies,
                colliders,
            },
        })
    }

    /// Handles to the arm and cubes.
    pub fn parts(&self) -> &Parts {
        &self.parts
    }

    /// A fresh world: the arm at `q` (7 joint angles, 2 finger openings) holding
    /// that pose, and cube `i` at `cubes[i]` (centre and yaw), at rest.
    pub fn start(&self, q: &[f32; 9], cubes: &[(Vec3, f32)]) -> Physics {
        let mut physics = self.template.clone();
        if let Some((multibody, _)) = physics.multibody_joints.get_mut(self.parts.joints[0]) {
            let mut displacement = vec![0.0; multibody.ndofs()];
            for (k, link) in self.parts.links.iter().enumerate() {
                if let Some(link) = multibody.link(*link)
                    && let Some(slot) = displacement.get_mut(link.assembly_id())
                {
                    *slot = q[k];
                }
            }
            multibody.apply_displacements(&displacement);
            multibody.forward_kinematics(&physics.bodies, true);
            multibody.update_rigid_bodies(&mut physics.bodies, true);
        }
        for (slot, (centre, yaw)) in self.parts.cubes.iter().zip(cubes) {
            if let Some((body, _)) = slot
                && let Some(body) = physics.bodies.get_mut(*body)
            {
                body.set_position(
                    Pose::from_parts(Vector::from(*centre), Quat::from_rotation_z(*yaw)),
                    true,
                );
            }
        }
        physics.set_targets(&self.parts, q);
        physics
    }
}

impl Parts {
    /// Number of cubes in the scene.
    pub fn cube_count(&self) -> usize {
        self.cubes.iter().flatten().count()
    }
}

impl World {
    /// A world that continues from `physics`.
    pub fn from_physics(physics: Physics) -> Self {
        Self {
            physics,
            pipeline: PhysicsPipeline::new(),
            ccd: CCDSolver::new(),
        }
    }

    /// What a snapshot saves.
    pub fn physics(&self) -> &Physics {
        &self.physics
    }

    /// What a snapshot saves, mutably (to set targets or push a cube).
    pub fn physics_mut(&mut self) -> &mut Physics {
        &mut self.physics
    }

    /// Swaps in another physical state (the other side gets this world's).
    pub fn swap_physics(&mut self, other: &mut Physics) {
        std::mem::swap(&mut self.physics, other);
    }

    /// Advances one physics step.
    pub fn step(&mut self) {
        let p = &mut self.physics;
        self.pipeline.step(
            p.gravity,
            &p.params,
            &mut p.islands,
            &mut p.broad_phase,
            &mut p.narrow_phase,
            &mut p.bodies,
            &mut p.colliders,
            &mut p.impulse_joints,
            &mut p.multibody_joints,
            &mut p.soft_bodies,
            &mut self.ccd,
            &(),
            &(),
        );
    }

    /// Whether rapier disabled a body in the last step because its state went non-finite.
    pub fn blew_up(&self) -> bool {
        !self.pipeline.quarantine().bodies().is_empty()
            || !self.pipeline.quarantine().colliders().is_empty()
    }
}

impl Physics {
    /// Sets the PD position targets: 7 arm joints (rad), then each finger's opening (m).
    pub fn set_targets(&mut self, parts: &Parts, targets: &[f32; 9]) {
        let Some((multibody, _)) = self.multibody_joints.get_mut(parts.joints[0]) else {
            return;
        };
        for (k, ((link, target), effort)) in parts
            .links
            .iter()
            .zip(targets)
            .zip(parts.efforts)
            .enumerate()
        {
            let (axis, (kp, kd)) = if k < 7 {
                (JointAxis::AngX, ARM_GAINS)
            } else {
                (JointAxis::LinX, FINGER_GAINS)
            };
            if let Some(link) = multibody.link_mut(*link) {
                link.joint
                    .data
                    .set_motor_model(axis, MotorModel::ForceBased)
                    .set_motor_position(axis, *target, kp, kd)
                    .set_motor_max_force(axis, effort);
            }
        }
    }

    /// Joint positions and velocities: 7 arm joints (rad, rad/s), 2 finger openings (m, m/s).
    pub fn joints(&self, parts: &Parts) -> ([f32; 9], [f32; 9]) {
        let mut q = [0.0; 9];
        let mut qd = [0.0; 9];
        if let Some((multibody, _)) = self.multibody_joints.get(parts.joints[0]) {
            for (k, link) in parts.links.iter().enumerate() {
                if let Some(link) = multibody.link(*link) {
                    q[k] = link.joint.coords()[if k < 7 { 3 } else { 0 }];
                    qd[k] = multibody
                        .joint_velocity(link)
                        .get(0)
                        .copied()
                        .unwrap_or(0.0);
                }
            }
        }
        (q, qd)
    }

    /// The tool centre point (between the fingertips) and the hand's orientation.
    pub fn tcp(&self, parts: &Parts) -> (Vec3, Quat) {
        let pose = self.bodies[parts.hand].position();
        let offset = pose.rotation * Vec3::new(0.0, 0.0, TCP_OFFSET.z as f32);
        (pose.translation + offset, pose.rotation)
    }

    /// Pose and velocity of cube `i`.
    pub fn cube(&self, parts: &Parts, i: usize) -> BodyState {
        let Some(Some((handle, _))) = parts.cubes.get(i) else {
            return BodyState {
                position: Vec3::ZERO,
                rotation: Quat::IDENTITY,
                linvel: Vec3::ZERO,
                angvel: Vec3::ZERO,
            };
        };
        let body = &self.bodies[*handle];
        BodyState {
            position: body.position().translation,
            rotation: body.position().rotation,
            linvel: body.linvel(),
            angvel: body.angvel(),
        }
    }

    /// Whether both fingers touch cube `i`: it is held.
    pub fn grasped(&self, parts: &Parts, i: usize) -> bool {
        let Some(Some((_, cube))) = parts.cubes.get(i) else {
            return false;
        };
        parts
            .fingers
            .iter()
            .all(|finger| self.in_contact(*finger, *cube))
    }

    /// Whether two colliders touch: closer than [`TOUCH`] at their current
    /// poses (rapier's contact manifolds are refreshed only now and then, so
    /// their distances can be stale).
    fn in_contact(&self, a: ColliderHandle, b: ColliderHandle) -> bool {
        let (Some(a), Some(b)) = (self.colliders.get(a), self.colliders.get(b)) else {
            return false;
        };
        rapier3d::parry::query::distance(a.position(), a.shape(), b.position(), b.shape())
            .is_ok_and(|d| d.distance < TOUCH)
    }

    /// Whether cubes `a` and `b` touch.
    pub fn touching(&self, parts: &Parts, a: usize, b: usize) -> bool {
        match (parts.cubes.get(a), parts.cubes.get(b)) {
            (Some(Some((_, a))), Some(Some((_, b)))) => self.in_contact(*a, *b),
            _ => false,
        }
    }

    /// Whether this world has every part of the scene `parts` belongs to (and nothing more).
    pub fn fits(&self, parts: &Parts) -> bool {
        let bodies_ok = parts
            .cubes
            .iter()
            .flatten()
            .all(|(b, c)| self.bodies.get(*b).is_some() && self.colliders.get(*c).is_some())
            && self.bodies.get(parts.hand).is_some()
            && parts
                .fingers
                .iter()
                .all(|c| self.colliders.get(*c).is_some());
        let arm_ok = self
            .multibody_joints
            .get(parts.joints[0])
            .is_some_and(|(multibody, _)| {
                parts.links.iter().all(|l| multibody.link(*l).is_some())
                    && parts
                        .joints
                        .iter()
                        .all(|j| self.multibody_joints.get(*j).is_some())
            });
        bodies_ok
            && arm_ok
            && self.bodies.len() == parts.bodies
            && self.colliders.len() == parts.colliders
    }

    /// Whether every body pose and velocity is finite.
    pub fn is_finite(&self) -> bool {
        self.bodies.iter().all(|(_, b)| {
            b.position().translation.is_finite()
                && b.position().rotation.is_finite()
                && b.linvel().is_finite()
                && b.angvel().is_finite()
        })
    }

    /// Sets cube `i`'s velocity: a push from outside, e.g. a perturbation test.
    pub fn set_cube_velocity(&mut self, parts: &Parts, i: usize, linvel: Vec3, angvel: Vec3) {
        if let Some(Some((handle, _))) = parts.cubes.get(i)
            && let Some(body) = self.bodies.get_mut(*handle)
        {
            body.set_linvel(linvel, true);
            body.set_angvel(angvel, true);
        }
    }
}
