//! The Panda as a reduced-coordinate articulated body, read from its URDF:
//! 9 moving joints (7 revolute, 2 prismatic fingers) in a tree, each with the
//! composite mass of the links it carries; forward kinematics, the joint-space
//! mass matrix (composite-rigid-body, via body Jacobians) and the velocity
//! bias (recursive Newton–Euler with zero joint acceleration), all in `f32`.

use super::collide::Motion;
use crate::panda::PANDA_URDF;
use crate::panda::{ARM_GAINS, BASE, FINGER_GAINS, MOVING_JOINTS};
use glam::{Mat3, Quat, Vec3};
use proprio_core::Shape;

/// Moving joints (and bodies) of the arm.
pub const DOF: usize = 9;
/// Collision spheres standing in for the arm's capsules and cylinders.
pub const MAX_SPHERES: usize = 32;
/// Collision boxes of the arm: the hand, then the two fingers.
pub const BOXES: usize = 3;

/// A box attached to a body: its pose in the body frame and half extents.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BodyBox {
    /// The body carrying the box.
    pub body: usize,
    /// Centre in the body frame, m.
    pub centre: Vec3,
    /// Orientation in the body frame.
    pub rotation: Quat,
    /// Half extents, m.
    pub half: Vec3,
}

/// A sphere attached to a body.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BodySphere {
    /// The body carrying the sphere.
    pub body: usize,
    /// Centre in the body frame, m.
    pub centre: Vec3,
    /// Radius, m.
    pub radius: f32,
}

/// Constant description of the arm.
#[derive(Debug, Clone, PartialEq)]
pub struct Arm {
    /// Parent body of each body (`None`: the fixed base, `panda_link0`).
    pub parent: [Option<usize>; DOF],
    /// Joint frame in the parent body frame (rotation, translation).
    pub origin: [(Quat, Vec3); DOF],
    /// Unit joint axis in the joint frame.
    pub axis: [Vec3; DOF],
    /// Revolute (else prismatic).
    pub revolute: [bool; DOF],
    /// Mass of each body, its fixed children included, kg.
    pub mass: [f32; DOF],
    /// Centre of mass in the body frame, m.
    pub com: [Vec3; DOF],
    /// Inertia about the centre of mass, body frame, kg·m².
    pub inertia: [Mat3; DOF],
    /// Position limits (rad or m).
    pub limits: [(f32, f32); DOF],
    /// Effort limits (N·m or N).
    pub effort: [f32; DOF],
    /// Speed limits (rad/s or m/s), enforced by the solver as a PhysX articulation does.
    pub speed: [f32; DOF],
    /// PD gains (stiffness, damping) of each joint's drive.
    pub gains: [(f32, f32); DOF],
    /// Whether joint `k` moves body `b` (`ancestor[b][k]`).
    pub ancestor: [[bool; DOF]; DOF],
    /// The hand and the two fingers.
    pub boxes: [BodyBox; BOXES],
    /// Spheres covering the links' capsules and cylinders.
    pub spheres: [BodySphere; MAX_SPHERES],
    /// Spheres in use.
    pub sphere_count: usize,
    /// The hand body and the hand frame in it (for the TCP).
    pub hand: (usize, Quat, Vec3),
    /// Every collision shape as the URDF gives it, for drawing: body (`None`: the base), centre, orientation.
    pub visuals: Vec<(Option<usize>, Vec3, Quat, Shape)>,
}

/// World-frame kinematics of every body at one configuration.
#[derive(Debug, Clone, Copy)]
pub struct Kinematics {
    /// Body orientation.
    pub rotation: [Quat; DOF],
    /// Joint origin (body frame origin), m.
    pub origin: [Vec3; DOF],
    /// Joint axis, world frame.
    pub axis: [Vec3; DOF],
    /// Centre of mass, m.
    pub com: [Vec3; DOF],
}

fn urdf_pose(pose: &urdf_rs::Pose) -> (Quat, Vec3) {
    let [roll, pitch, yaw] = pose.rpy.map(|v| v as f32);
    let rotation = Quat::from_euler(glam::EulerRot::ZYX, yaw, pitch, roll);
    (rotation, Vec3::from_array(pose.xyz.map(|v| v as f32)))
}

fn compose(a: (Quat, Vec3), b: (Quat, Vec3)) -> (Quat, Vec3) {
    (a.0 * b.0, a.1 + a.0 * b.1)
}

/// Inertia of a body of mass `m` about its own centre, moved to a point `d` away (parallel axes).
fn shifted(inertia: Mat3, m: f32, d: Vec3) -> Mat3 {
    inertia + m * (Mat3::from_diagonal(Vec3::splat(d.length_squared())) - outer(d, d))
}

/// The scene's shape of a URDF geometry (capsules and cylinders along z, as in URDF).
fn visual(geometry: &urdf_rs::Geometry) -> Option<Shape> {
    Some(match *geometry {
        urdf_rs::Geometry::Box { ref size } => Shape::Cuboid {
            half_extents: size.map(|v| v as f32 / 2.0),
        },
        urdf_rs::Geometry::Capsule { radius, length } => Shape::Capsule {
            radius: radius as f32,
            half_length: length as f32 / 2.0,
        },
        urdf_rs::Geometry::Cylinder { radius, length } => Shape::Cylinder {
            radius: radius as f32,
            half_height: length as f32 / 2.0,
        },
        _ => return None,
    })
}

fn outer(a: Vec3, b: Vec3) -> Mat3 {
    Mat3::from_cols(a * b.x, a * b.y, a * b.z)
}

impl Arm {
    /// The Panda of `assets/robots/panda.urdf`, its base at [`BASE`].
    pub fn panda() -> Result<Self, String> {
        Self::from_urdf(PANDA_URDF)
    }

    /// The arm of a URDF with the Panda's joint names.
    pub fn from_urdf(urdf: &str) -> Result<Self, String> {
        let robot = urdf_rs::read_from_string(urdf).map_err(|e| e.to_string())?;
        // Each link: the body carrying it and the link frame in the body frame.
        let mut links: Vec<(String, Option<usize>, (Quat, Vec3))> =
            vec![("panda_link0".into(), None, (Quat::IDENTITY, Vec3::ZERO))];
        let mut arm = Self {
            parent: [None; DOF],
            origin: [(Quat::IDENTITY, Vec3::ZERO); DOF],
            axis: [Vec3::Z; DOF],
            revolute: [true; DOF],
            mass: [0.0; DOF],
            com: [Vec3::ZERO; DOF],
            inertia: [Mat3::ZERO; DOF],
            limits: [(0.0, 0.0); DOF],
            effort: [0.0; DOF],
            speed: [0.0; DOF],
            gains: [ARM_GAINS; DOF],
            ancestor: [[false; DOF]; DOF],
            boxes: [BodyBox {
                body: 0,
                centre: Vec3::ZERO,
                rotation: Quat::IDENTITY,
                half: Vec3::ZERO,
            }; BOXES],
            spheres: [BodySphere {
                body: 0,
                centre: Vec3::ZERO,
                radius: 0.0,
            }; MAX_SPHERES],
            sphere_count: 0,
            hand: (0, Quat::IDENTITY, Vec3::ZERO),
            visuals: Vec::new(),
        };
        let mut found = [false; DOF];
        // Joints in tree order: a joint is taken once its parent link is known.
        let mut left: Vec<&urdf_rs::Joint> = robot.joints.iter().collect();
        while !left.is_empty() {
            let before = left.len();
            left.retain(|joint| {
                let Some(&(_, body, frame)) = links.iter().find(|l| l.0 == joint.parent.link)
                else {
                    return true;
                };
                let origin = compose(frame, urdf_pose(&joint.origin));
                match MOVING_JOINTS.iter().position(|n| *n == joint.name) {
                    Some(k) => {
                        arm.parent[k] = body;
                        arm.origin[k] = origin;
                        arm.axis[k] = Vec3::from_array(joint.axis.xyz.map(|v| v as f32));
                        arm.revolute[k] = joint.joint_type == urdf_rs::JointType::Revolute;
                        arm.limits[k] = (joint.limit.lower as f32, joint.limit.upper as f32);
                        arm.effort[k] = joint.limit.effort as f32;
                        arm.speed[k] = joint.limit.velocity as f32;
                        if !arm.revolute[k] {
                            arm.gains[k] = FINGER_GAINS;
                        }
                        found[k] = true;
                        links.push((
                            joint.child.link.clone(),
                            Some(k),
                            (Quat::IDENTITY, Vec3::ZERO),
                        ));
                    }
                    None => links.push((joint.child.link.clone(), body, origin)),
                }
                false
            });
            if left.len() == before {
                return Err("the URDF's joints do not form a tree from panda_link0".into());
            }
        }
        if let Some(k) = found.iter().position(|f| !f) {
            return Err(format!("the URDF has no joint '{}'", MOVING_JOINTS[k]));
        }
        if let Some(k) = arm.speed.iter().position(|v| !(*v > 0.0 && v.is_finite())) {
            return Err(format!(
                "joint '{}' needs a positive velocity limit, got {}",
                MOVING_JOINTS[k], arm.speed[k]
            ));
        }
        for k in 0..DOF {
            if arm.parent[k].is_some_and(|p| p >= k) {
                return Err("the moving joints must be listed parents first".into());
            }
            arm.ancestor[k][k] = true;
            let mut at = arm.parent[k];
            while let Some(p) = at {
                arm.ancestor[k][p] = true;
                at = arm.parent[p];
            }
        }
        arm.add_links(&robot, &links)?;
        Ok(arm)
    }

    /// Masses, inertias and collision shapes of every link, merged into the bodies carrying them.
    fn add_links(
        &mut self,
        robot: &urdf_rs::Robot,
        links: &[(String, Option<usize>, (Quat, Vec3))],
    ) -> Result<(), String> {
        let mut parts: [Vec<(f32, Vec3, Mat3)>; DOF] = Default::default();
        for link in &robot.links {
            let Some(&(_, body, frame)) = links.iter().find(|l| l.0 == link.name) else {
                continue;
            };
            for c in &link.collision {
                let (rot, centre) = compose(frame, urdf_pose(&c.origin));
                if let Some(shape) = visual(&c.geometry) {
                    self.visuals.push((body, centre, rot, shape));
                }
            }
            let Some(body) = body else { continue };
            let i = &link.inertial;
            let (rot, at) = compose(frame, urdf_pose(&i.origin));
            let local = Mat3::from_cols_array(
                &[
                    i.inertia.ixx,
                    i.inertia.ixy,
                    i.inertia.ixz,
                    i.inertia.ixy,
                    i.inertia.iyy,
                    i.inertia.iyz,
                    i.inertia.ixz,
                    i.inertia.iyz,
                    i.inertia.izz,
                ]
                .map(|v| v as f32),
            );
            let r = Mat3::from_quat(rot);
            parts[body].push((i.mass.value as f32, at, r * local * r.transpose()));
            if link.name == "panda_hand" {
                self.hand = (body, frame.0, frame.1);
            }
            for c in &link.collision {
                let (rot, centre) = compose(frame, urdf_pose(&c.origin));
                self.add_shape(body, rot, centre, &c.geometry, &link.name)?;
            }
        }
        for (body, list) in parts.iter().enumerate() {
            let mass: f32 = list.iter().map(|p| p.0).sum();
            if mass <= 0.0 {
                return Err(format!(
                    "the body moved by {} has no mass",
                    MOVING_JOINTS[body]
                ));
            }
            let com = list.iter().map(|p| p.0 * p.1).sum::<Vec3>() / mass;
            self.mass[body] = mass;
            self.com[body] = com;
            self.inertia[body] = list
                .iter()
                .map(|p| shifted(p.2, p.0, p.1 - com))
                .fold(Mat3::ZERO, |a, b| a + b);
        }
        Ok(())
    }

    fn add_shape(
        &mut self,
        body: usize,
        rot: Quat,
        centre: Vec3,
        geometry: &urdf_rs::Geometry,
        link: &str,
    ) -> Result<(), String> {
        let (radius, length) = match *geometry {
            urdf_rs::Geometry::Box { ref size } => {
                let slot = match link {
                    "panda_hand" => 0,
                    "panda_leftfinger" => 1,
                    "panda_rightfinger" => 2,
                    _ => {
                        return Err(format!(
                            "link '{link}' has a box; only the hand and fingers may"
                        ));
                    }
                };
                self.boxes[slot] = BodyBox {
                    body,
                    centre,
                    rotation: rot,
                    half: Vec3::from_array(size.map(|v| v as f32 / 2.0)),
                };
                return Ok(());
            }
            urdf_rs::Geometry::Capsule { radius, length } => (radius as f32, length as f32),
            // A cylinder is covered by the capsule of its radius shortened to its length.
            urdf_rs::Geometry::Cylinder { radius, length } => {
                (radius as f32, (length as f32 - radius as f32).max(0.0))
            }
            _ => return Err(format!("link '{link}' has an unsupported collision shape")),
        };
        // Spheres along the axis at most one radius apart leave no gap deeper than 13% of the radius.
        let n = ((length / radius).ceil() as usize + 1).max(1);
        for s in 0..n {
            let along = if n == 1 {
                0.0
            } else {
                length * (s as f32 / (n - 1) as f32 - 0.5)
            };
            if self.sphere_count == MAX_SPHERES {
                return Err(format!("more than {MAX_SPHERES} collision spheres"));
            }
            self.spheres[self.sphere_count] = BodySphere {
                body,
                centre: centre + rot * Vec3::new(0.0, 0.0, along),
                radius,
            };
            self.sphere_count += 1;
        }
        Ok(())
    }

    /// World-frame pose of every body at joint positions `q`.
    pub fn kinematics(&self, q: &[f32; DOF]) -> Kinematics {
        let base = Vec3::from_array(BASE);
        let mut k = Kinematics {
            rotation: [Quat::IDENTITY; DOF],
            origin: [Vec3::ZERO; DOF],
            axis: [Vec3::Z; DOF],
            com: [Vec3::ZERO; DOF],
        };
        for j in 0..DOF {
            let (pr, po) = match self.parent[j] {
                Some(p) => (k.rotation[p], k.origin[p]),
                None => (Quat::IDENTITY, base),
            };
            let frame = pr * self.origin[j].0;
            let at = po + pr * self.origin[j].1;
            let axis = frame * self.axis[j];
            k.axis[j] = axis;
            if self.revolute[j] {
                k.rotation[j] = frame * Quat::from_axis_angle(self.axis[j], q[j]);
                k.origin[j] = at;
            } else {
                k.rotation[j] = frame;
                k.origin[j] = at + axis * q[j];
            }
            k.com[j] = k.origin[j] + k.rotation[j] * self.com[j];
        }
        k
    }

    /// Velocity of world point `p` on body `b` per unit velocity of joint `j` (zero unless `j` moves `b`).
    pub fn point_jacobian(&self, k: &Kinematics, b: usize, p: Vec3, j: usize) -> Vec3 {
        if !self.ancestor[b][j] {
            Vec3::ZERO
        } else if self.revolute[j] {
            k.axis[j].cross(p - k.origin[j])
        } else {
            k.axis[j]
        }
    }

    /// The joint-space mass matrix `M(q)`: Σ over bodies of `Jvᵀ m Jv + Jωᵀ I Jω`.
    pub fn mass_matrix(&self, k: &Kinematics, m: &mut [[f32; DOF]; DOF]) {
        *m = [[0.0; DOF]; DOF];
        for b in 0..DOF {
            let r = Mat3::from_quat(k.rotation[b]);
            let inertia = r * self.inertia[b] * r.transpose();
            let mut jv = [Vec3::ZERO; DOF];
            let mut jw = [Vec3::ZERO; DOF];
            for j in 0..DOF {
                if self.ancestor[b][j] {
                    jv[j] = self.point_jacobian(k, b, k.com[b], j);
                    if self.revolute[j] {
                        jw[j] = k.axis[j];
                    }
                }
            }
            for i in 0..DOF {
                if !self.ancestor[b][i] {
                    continue;
                }
                let iw = inertia * jw[i];
                for j in 0..=i {
                    if self.ancestor[b][j] {
                        m[i][j] += self.mass[b] * jv[i].dot(jv[j]) + iw.dot(jw[j]);
                    }
                }
            }
        }
        for i in 0..DOF {
            for j in 0..i {
                m[j][i] = m[i][j];
            }
        }
    }

    /// How each body moves at joint velocities `qd`: its origin's velocity and its angular velocity.
    pub fn motions(&self, k: &Kinematics, qd: &[f32; DOF]) -> [Motion; DOF] {
        let mut m = [Motion::default(); DOF];
        for j in 0..DOF {
            let parent = self.parent[j].map_or(Motion::default(), |p| m[p]);
            let d = self.parent[j].map_or(Vec3::ZERO, |p| k.origin[j] - k.origin[p]);
            let motion = k.axis[j] * qd[j];
            m[j] = if self.revolute[j] {
                Motion {
                    linear: parent.at(d),
                    angular: parent.angular + motion,
                }
            } else {
                Motion {
                    linear: parent.at(d) + motion,
                    angular: parent.angular,
                }
            };
        }
        m
    }

    /// Joint forces of the velocity-product terms `C(q, q̇) q̇` (recursive
    /// Newton–Euler with q̈ = 0 and no gravity: the arm's controller cancels it).
    pub fn bias(&self, k: &Kinematics, qd: &[f32; DOF]) -> [f32; DOF] {
        let mut w = [Vec3::ZERO; DOF];
        let mut v = [Vec3::ZERO; DOF];
        let mut alpha = [Vec3::ZERO; DOF];
        let mut acc = [Vec3::ZERO; DOF];
        let mut force = [Vec3::ZERO; DOF];
        let mut torque = [Vec3::ZERO; DOF];
        for j in 0..DOF {
            let (wp, vp, ap, cp, op) = match self.parent[j] {
                Some(p) => (w[p], v[p], alpha[p], acc[p], k.origin[p]),
                None => (Vec3::ZERO, Vec3::ZERO, Vec3::ZERO, Vec3::ZERO, k.origin[j]),
            };
            let d = k.origin[j] - op;
            let motion = k.axis[j] * qd[j];
            if self.revolute[j] {
                w[j] = wp + motion;
                v[j] = vp + wp.cross(d);
                alpha[j] = ap + wp.cross(motion);
                acc[j] = cp + ap.cross(d) + wp.cross(wp.cross(d));
            } else {
                w[j] = wp;
                v[j] = vp + wp.cross(d) + motion;
                alpha[j] = ap;
                acc[j] = cp + ap.cross(d) + wp.cross(wp.cross(d)) + 2.0 * wp.cross(motion);
            }
            let r = k.com[j] - k.origin[j];
            let acc_com = acc[j] + alpha[j].cross(r) + w[j].cross(w[j].cross(r));
            let rot = Mat3::from_quat(k.rotation[j]);
            let inertia = rot * self.inertia[j] * rot.transpose();
            force[j] = self.mass[j] * acc_com;
            torque[j] = inertia * alpha[j] + w[j].cross(inertia * w[j]) + r.cross(force[j]);
        }
        let mut tau = [0.0; DOF];
        for j in (0..DOF).rev() {
            tau[j] = if self.revolute[j] {
                k.axis[j].dot(torque[j])
            } else {
                k.axis[j].dot(force[j])
            };
            if let Some(p) = self.parent[j] {
                let d = k.origin[j] - k.origin[p];
                force[p] += force[j];
                torque[p] += torque[j] + d.cross(force[j]);
            }
        }
        tau
    }

    /// The tool centre point and the hand's orientation, from the kinematics.
    pub fn tcp(&self, k: &Kinematics) -> (Vec3, Quat) {
        let (body, rot, at) = self.hand;
        let hand = k.rotation[body] * rot;
        let origin = k.origin[body] + k.rotation[body] * at;
        (
            origin + hand * Vec3::new(0.0, 0.0, crate::panda::TCP_OFFSET.z as f32),
            hand,
        )
    }
}
