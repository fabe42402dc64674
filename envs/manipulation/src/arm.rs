//! The Panda in a rapier3d world: a multibody loaded from its URDF, on a
//! table, driven by PD position motors on every joint.

use crate::robot::{Chain, PANDA_URDF, TCP_OFFSET};
use glam::DVec3;
use rapier3d::prelude::*;
use rapier3d_urdf::{UrdfLoaderOptions, UrdfMultibodyOptions, UrdfRobot};

/// Physics step, s (500 Hz).
pub const DT: f32 = 1.0 / 500.0;
/// PD gains of the arm joints (stiffness N·m/rad, damping N·m·s/rad), torque
/// capped at each joint's effort limit: holds a pose against gravity within
/// about 0.006 rad without gravity compensation.
pub const ARM_GAINS: (f32, f32) = (4000.0, 400.0);
/// PD gains of the finger joints (N/m, N·s/m).
pub const FINGER_GAINS: (f32, f32) = (2000.0, 100.0);
/// Half extents of the table top, m; its surface is the plane z = 0.
pub const TABLE_HALF: [f32; 3] = [0.8, 0.6, 0.02];
/// Where the robot base stands on the table, m.
pub const BASE: [f32; 3] = [-0.615, 0.0, 0.0];
/// The usual rest pose: gripper down above the table centre.
pub const READY: [f32; 7] = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785];

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

/// Why the arm world cannot be built.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the arm: {0}")]
pub struct ArmError(pub String);

/// A table with the Panda on it.
pub struct ArmWorld {
    world: PhysicsWorld,
    /// Multibody joint of each moving joint: 7 arm joints, then the 2 fingers.
    joints: Vec<MultibodyJointHandle>,
    /// Effort limit of each moving joint (N·m or N), from the URDF.
    efforts: [f32; 9],
    hand: RigidBodyHandle,
}

impl ArmWorld {
    /// Builds the world with the arm in `READY` and the fingers open.
    pub fn new() -> Result<Self, ArmError> {
        let options = UrdfLoaderOptions {
            create_colliders_from_collision_shapes: true,
            make_roots_fixed: true,
            apply_imported_mass_props: true,
            ..Default::default()
        };
        let (mut robot, urdf) = UrdfRobot::from_str(PANDA_URDF, options, std::path::Path::new("."))
            .map_err(|e| ArmError(e.to_string()))?;
        let names: Vec<&str> = robot
            .joints
            .iter()
            .map(|j| {
                urdf.joints
                    .get(j.urdf_joint_index)
                    .map_or("", |u| u.name.as_str())
            })
            .collect();
        let mut world = PhysicsWorld::new();
        world.integration_parameters.dt = DT;
        robot.append_transform(&Pose::from_translation(Vector::from_array(BASE)));
        let handles = robot.insert_using_multibody_joints(
            &mut world.bodies,
            &mut world.colliders,
            &mut world.multibody_joints,
            UrdfMultibodyOptions::empty(),
        );
        let table = world.insert_body(RigidBodyBuilder::fixed().translation(Vector::new(
            0.0,
            0.0,
            -TABLE_HALF[2],
        )));
        world.insert_collider(
            ColliderBuilder::cuboid(TABLE_HALF[0], TABLE_HALF[1], TABLE_HALF[2]),
            Some(table),
        );
        let find = |name: &str| {
            names
                .iter()
                .position(|n| *n == name)
                .map(|i| &handles.joints[i])
                .ok_or_else(|| ArmError(format!("the URDF has no joint '{name}'")))
        };
        let mut joints = Vec::with_capacity(9);
        let mut efforts = [0.0; 9];
        for (k, name) in MOVING_JOINTS.into_iter().enumerate() {
            efforts[k] = urdf
                .joints
                .iter()
                .find(|j| j.name == name)
                .map_or(0.0, |j| j.limit.effort as f32);
            let joint = find(name)?;
            joints.push(
                joint
                    .joint
                    .ok_or_else(|| ArmError(format!("joint '{name}' was not inserted")))?,
            );
        }
        let hand = find("panda_finger_joint1")?.link1;
        let mut arm = Self {
            world,
            joints,
            efforts,
            hand,
        };
        let mut targets = [0.0; 9];
        targets[..7].copy_from_slice(&READY);
        targets[7] = 0.04;
        targets[8] = 0.04;
        arm.set_targets(&targets);
        Ok(arm)
    }

    /// Sets the PD position targets: 7 arm joints (rad), then each finger's opening (m).
    pub fn set_targets(&mut self, targets: &[f32; 9]) {
        // A resting arm falls asleep; new targets must wake it.
        self.world.wake_up(self.hand, true);
        for (k, ((handle, target), effort)) in self
            .joints
            .iter()
            .zip(targets)
            .zip(self.efforts)
            .enumerate()
        {
            let (axis, (kp, kd)) = if k < 7 {
                (JointAxis::AngX, ARM_GAINS)
            } else {
                (JointAxis::LinX, FINGER_GAINS)
            };
            if let Some((multibody, link)) = self.world.multibody_joints.get_mut(*handle)
                && let Some(link) = multibody.link_mut(link)
            {
                link.joint
                    .data
                    .set_motor_model(axis, MotorModel::ForceBased)
                    .set_motor_position(axis, *target, kp, kd)
                    .set_motor_max_force(axis, effort);
            }
        }
    }

    /// Advances one physics step.
    pub fn step(&mut self) {
        self.world.step();
    }

    /// Joint positions: 7 arm joints (rad), 2 finger openings (m).
    pub fn positions(&self) -> [f32; 9] {
        let mut q = [0.0; 9];
        for (k, handle) in self.joints.iter().enumerate() {
            if let Some((multibody, link)) = self.world.multibody_joints.get(*handle)
                && let Some(link) = multibody.link(link)
            {
                q[k] = link.joint.coords()[if k < 7 { 3 } else { 0 }];
            }
        }
        q
    }

    /// The tool centre point in the world frame, from the simulated hand link.
    pub fn tcp(&self) -> DVec3 {
        let pose = self.world.bodies[self.hand].position();
        let offset = pose.rotation * Vector::new(0.0, 0.0, TCP_OFFSET.z as f32);
        let p = pose.translation + offset;
        DVec3::new(p.x.into(), p.y.into(), p.z.into())
    }

    /// The tool centre point predicted by the URDF chain at the simulated joint positions.
    pub fn tcp_by_kinematics(&self, chain: &Chain) -> DVec3 {
        let q = self.positions();
        let q: Vec<f64> = q[..7].iter().map(|v| f64::from(*v)).collect();
        chain.forward(&q).translation + DVec3::new(BASE[0].into(), BASE[1].into(), BASE[2].into())
    }
}
