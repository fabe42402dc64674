//! One env's rapier3d world. [`WorldState`] is everything that evolves (what a
//! snapshot saves, bit for bit) with the queries tasks ask of it; [`World`]
//! adds the pipeline workspaces that do not.

use crate::panda::{ARM_GAINS, BodyState, FINGER_GAINS, MAX_CUBES, TCP_OFFSET, TOUCH};
use glam::{Quat, Vec3};
use rapier3d::prelude::*;
use serde::{Deserialize, Serialize};

/// Handles to the parts of a scene, the same in every clone of it.
#[derive(Debug, Clone, Copy)]
pub struct Parts {
    /// Multibody joint of each moving joint: 7 arm joints, then the 2 fingers.
    pub(crate) joints: [MultibodyJointHandle; 9],
    /// Link index of each moving joint in the arm's multibody.
    pub(crate) links: [usize; 9],
    /// Effort limit of each moving joint (N·m or N), from the URDF.
    pub(crate) efforts: [f32; 9],
    /// Speed limit of each moving joint (rad/s or m/s), from the URDF.
    pub(crate) speeds: [f32; 9],
    pub(crate) hand: RigidBodyHandle,
    pub(crate) fingers: [ColliderHandle; 2],
    pub(crate) cubes: [Option<(RigidBodyHandle, ColliderHandle)>; MAX_CUBES],
    /// Number of bodies and colliders in the scene.
    pub(crate) bodies: usize,
    pub(crate) colliders: usize,
}

/// Everything that evolves in one world: restoring it continues bit-identically.
#[derive(Clone, Serialize, Deserialize)]
pub struct WorldState {
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
    /// The drives' targets, re-aimed before every step.
    #[serde(default)]
    drives: Option<Drives>,
}

/// The arm's joint drives: where each is headed and how fast its joint may move.
#[derive(Clone, Copy, Serialize, Deserialize)]
struct Drives {
    joint: MultibodyJointHandle,
    links: [usize; 9],
    efforts: [f32; 9],
    speeds: [f32; 9],
    targets: [f32; 9],
}

/// One env's world: its physics plus the workspaces that step it.
pub struct World {
    physics: WorldState,
    pipeline: PhysicsPipeline,
    ccd: CCDSolver,
}

impl World {
    /// A world that continues from `physics`.
    pub fn from_physics(physics: WorldState) -> Self {
        Self {
            physics,
            pipeline: PhysicsPipeline::new(),
            ccd: CCDSolver::new(),
        }
    }

    /// What a snapshot saves.
    pub fn physics(&self) -> &WorldState {
        &self.physics
    }

    /// What a snapshot saves, mutably (to set targets or push a cube).
    pub fn physics_mut(&mut self) -> &mut WorldState {
        &mut self.physics
    }

    /// Starts a new episode from `other` (which gets this world's old state), with
    /// fresh workspaces: kept across episodes, they would ratchet up to the largest
    /// contact set any episode ever had, and memory would creep up for hours.
    pub fn restart(&mut self, other: &mut WorldState) {
        std::mem::swap(&mut self.physics, other);
        self.pipeline = PhysicsPipeline::new();
        self.ccd = CCDSolver::new();
    }

    /// Advances one physics step, the drives re-aimed first.
    pub fn step(&mut self) {
        self.physics.aim();
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
        self.physics.clamp_speeds();
    }

    /// Whether rapier disabled a body in the last step because its state went non-finite.
    pub fn blew_up(&self) -> bool {
        !self.pipeline.quarantine().bodies().is_empty()
            || !self.pipeline.quarantine().colliders().is_empty()
    }
}

impl WorldState {
    /// An empty world with this gravity and these solver parameters.
    pub(crate) fn empty(gravity: Vector, params: IntegrationParameters) -> Self {
        Self {
            gravity,
            params,
            islands: IslandManager::new(),
            broad_phase: BroadPhaseBvh::default(),
            narrow_phase: NarrowPhase::new(),
            bodies: RigidBodySet::new(),
            colliders: ColliderSet::new(),
            impulse_joints: ImpulseJointSet::new(),
            multibody_joints: MultibodyJointSet::new(),
            soft_bodies: SoftBodySet::new(),
            drives: None,
        }
    }

    /// The sets a scene is built into.
    pub(crate) fn sets_mut(
        &mut self,
    ) -> (&mut RigidBodySet, &mut ColliderSet, &mut MultibodyJointSet) {
        (
            &mut self.bodies,
            &mut self.colliders,
            &mut self.multibody_joints,
        )
    }

    /// Puts the arm at `q` (7 joint angles, 2 finger openings), at rest.
    pub(crate) fn place_arm(&mut self, parts: &Parts, q: &[f32; 9]) {
        if let Some((multibody, _)) = self.multibody_joints.get_mut(parts.joints[0]) {
            let mut displacement = vec![0.0; multibody.ndofs()];
            for (k, link) in parts.links.iter().enumerate() {
                if let Some(link) = multibody.link(*link)
                    && let Some(slot) = displacement.get_mut(link.assembly_id())
                {
                    *slot = q[k];
                }
            }
            multibody.apply_displacements(&displacement);
            multibody.forward_kinematics(&self.bodies, true);
            multibody.update_rigid_bodies(&mut self.bodies, true);
        }
    }

    /// Puts cube `i` at `centre` with `rotation`, at rest.
    pub(crate) fn place_cube(&mut self, parts: &Parts, i: usize, centre: Vec3, rotation: Quat) {
        if let Some(Some((body, _))) = parts.cubes.get(i)
            && let Some(body) = self.bodies.get_mut(*body)
        {
            body.set_position(Pose::from_parts(centre, rotation), true);
        }
    }

    /// Sets the PD targets: 7 arm joints (rad), then each finger's opening (m).
    pub fn set_targets(&mut self, parts: &Parts, targets: &[f32; 9]) {
        self.drives = Some(Drives {
            joint: parts.joints[0],
            links: parts.links,
            efforts: parts.efforts,
            speeds: parts.speeds,
            targets: *targets,
        });
        self.aim();
    }

    /// Aims each drive at its target, but no further ahead of its joint than the
    /// lead at which the drive heads for the joint's speed limit (or pulls with
    /// its full effort, if that is more), so no drive asks for more than the
    /// limit (the lead moves with the joint).
    fn aim(&mut self) {
        let Some(d) = self.drives else { return };
        let (q, _) = self.joint_state(d.joint, &d.links);
        let Some((multibody, _)) = self.multibody_joints.get_mut(d.joint) else {
            return;
        };
        for (k, link) in d.links.iter().enumerate() {
            let (axis, (kp, kd)) = if k < 7 {
                (JointAxis::AngX, ARM_GAINS)
            } else {
                (JointAxis::LinX, FINGER_GAINS)
            };
            // The implicit drive heads for kp·lead / (kd + kp·dt): the speed limit,
            // unless the effort cap binds first (a finger's squeeze keeps its force;
            // the clamp after the step is then all that limits it).
            let lead = (d.speeds[k] * (kd + kp * self.params.dt)).max(d.efforts[k]) / kp;
            let aim = q[k] + (d.targets[k] - q[k]).clamp(-lead, lead);
            if let Some(link) = multibody.link_mut(*link) {
                link.joint
                    .data
                    .set_motor_model(axis, MotorModel::ForceBased)
                    .set_motor_position(axis, aim, kp, kd)
                    .set_motor_max_force(axis, d.efforts[k]);
            }
        }
    }

    /// Clamps each joint's velocity to its speed limit where contacts pushed it past (as PhysX does).
    fn clamp_speeds(&mut self) {
        let Some(d) = self.drives else { return };
        let Some((multibody, _)) = self.multibody_joints.get_mut(d.joint) else {
            return;
        };
        for (k, link) in d.links.iter().enumerate() {
            let Some(dof) = multibody.link(*link).map(|l| l.assembly_id()) else {
                continue;
            };
            if let Some(v) = multibody.generalized_velocity_mut().get_mut(dof) {
                *v = v.clamp(-d.speeds[k], d.speeds[k]);
            }
        }
    }

    /// Joint positions and velocities: 7 arm joints (rad, rad/s), 2 finger openings (m, m/s).
    pub fn joints(&self, parts: &Parts) -> ([f32; 9], [f32; 9]) {
        self.joint_state(parts.joints[0], &parts.links)
    }

    fn joint_state(&self, joint: MultibodyJointHandle, links: &[usize; 9]) -> ([f32; 9], [f32; 9]) {
        let mut q = [0.0; 9];
        let mut qd = [0.0; 9];
        if let Some((multibody, _)) = self.multibody_joints.get(joint) {
            for (k, link) in links.iter().enumerate() {
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

    /// The rigid bodies (for drawing).
    pub fn bodies(&self) -> &RigidBodySet {
        &self.bodies
    }

    /// The colliders (for drawing).
    pub fn colliders(&self) -> &ColliderSet {
        &self.colliders
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

impl Parts {
    /// Number of cubes in the scene.
    pub fn cube_count(&self) -> usize {
        self.cubes.iter().flatten().count()
    }
}
