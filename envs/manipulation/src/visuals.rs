//! What a manipulation env looks like, for viewers ([`proprio_core::Scene`]):
//! every collider of the rapier world as it is (the Panda's capsules and
//! cylinders, the fingers, the table, the cubes), plus the goal marker.

use crate::config::{Settings, TaskKind};
use crate::scene::{CUBE_COLOURS, MAX_CUBES, Parts};
use crate::task::{PICK_RADIUS, PUSH_RADIUS, REACH_RADIUS, TaskState};
use crate::world::Physics;
use glam::{Quat, Vec3};
use proprio_core::{Framing, Pose, Scene, SceneCamera, Shape, Visual};
use rapier3d::prelude::*;

pub(crate) const ARM: [f32; 4] = [0.92, 0.92, 0.90, 1.0];
pub(crate) const FINGER: [f32; 4] = [0.20, 0.20, 0.22, 1.0];
pub(crate) const TABLE: [f32; 4] = [0.62, 0.46, 0.30, 1.0];
const GOAL: [f32; 4] = [0.15, 0.85, 0.25, 0.45];

pub(crate) fn pose(translation: Vec3, rotation: Quat) -> Pose {
    Pose {
        translation: translation.to_array(),
        rotation: rotation.to_array(),
    }
}

/// The scene's shape of a rapier shape, with its placement in the collider's frame.
fn shape_of(shape: &dyn rapier3d::parry::shape::Shape) -> Option<(Shape, Vec3, Quat)> {
    Some(match shape.as_typed_shape() {
        TypedShape::Ball(b) => (
            Shape::Sphere { radius: b.radius },
            Vec3::ZERO,
            Quat::IDENTITY,
        ),
        TypedShape::Cuboid(c) => (
            Shape::Cuboid {
                half_extents: c.half_extents.to_array(),
            },
            Vec3::ZERO,
            Quat::IDENTITY,
        ),
        TypedShape::Capsule(c) => {
            let axis = c.segment.b - c.segment.a;
            let shape = Shape::Capsule {
                radius: c.radius,
                half_length: axis.length() / 2.0,
            };
            let turn = Quat::from_rotation_arc(Vec3::Z, axis.normalize_or(Vec3::Z));
            (shape, (c.segment.a + c.segment.b) / 2.0, turn)
        }
        TypedShape::Cylinder(c) => (
            Shape::Cylinder {
                radius: c.radius,
                half_height: c.half_height,
            },
            Vec3::ZERO,
            // parry's cylinders stand along y; the scene's along z.
            Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
        ),
        _ => return None,
    })
}

/// Draws the world `p` and the goal of task state `t`.
pub fn manipulation(s: &Settings, p: &Physics, parts: &Parts, t: &TaskState, scene: &mut Scene) {
    let bodies = p.bodies();
    for (handle, collider) in p.colliders().iter() {
        let Some((shape, offset, turn)) = shape_of(collider.shape()) else {
            continue;
        };
        let parent = collider.parent();
        let colour = if parts.fingers.contains(&handle) {
            FINGER
        } else if let Some(i) = parts
            .cubes
            .iter()
            .position(|c| c.is_some_and(|(_, col)| col == handle))
        {
            CUBE_COLOURS[i % MAX_CUBES].1
        } else if parent.is_none_or(|b| bodies[b].is_fixed()) {
            TABLE
        } else {
            ARM
        };
        // The parent body's pose, not the collider's cached one: a start drawn
        // on the host moves bodies, and colliders follow only at the next step.
        let at = match (parent, collider.position_wrt_parent()) {
            (Some(body), Some(local)) => *bodies[body].position() * *local,
            _ => *collider.position(),
        };
        let translation = at.translation + at.rotation * offset;
        scene.bodies.push(Visual::new(
            shape,
            pose(translation, at.rotation * turn),
            colour,
        ));
    }
    dress(s, t, p.tcp(parts).0, scene);
}

/// The goal marker, the instruction, the step length, the framing and the cameras (the TCP's travel with it).
pub(crate) fn dress(s: &Settings, t: &TaskState, tcp: Vec3, scene: &mut Scene) {
    let goal = Vec3::from(t.goal);
    let marker = match s.task {
        TaskKind::Reach => Some(Shape::Sphere {
            radius: REACH_RADIUS,
        }),
        TaskKind::PickCube => Some(Shape::Sphere {
            radius: PICK_RADIUS,
        }),
        TaskKind::PushCube => Some(Shape::Cylinder {
            radius: PUSH_RADIUS,
            half_height: 0.001,
        }),
        TaskKind::StackCube | TaskKind::Instruct => None,
    };
    if let Some(shape) = marker {
        let at = if s.task == TaskKind::PushCube {
            goal.with_z(0.001)
        } else {
            goal
        };
        scene
            .markers
            .push(Visual::new(shape, pose(at, Quat::IDENTITY), GOAL));
    }
    if let Some(instruction) = t.instruction {
        scene.text.push(instruction.text());
    }
    scene.step_seconds = Some(1.0 / s.control_hz as f32);
    scene.framing = Framing {
        target: [0.0, 0.0, 0.25],
        eye: [1.1, -1.1, 0.85],
        half_extent: 0.9,
    };
    scene.cameras.extend(WORKSPACE_CAMERAS);
    scene
        .cameras
        .extend(HAND_CAMERAS.map(|(name, offset)| SceneCamera {
            name,
            eye: (tcp + Vec3::from(offset)).to_array(),
            target: tcp.to_array(),
            fov_y_degrees: HAND_FOV_DEGREES,
        }));
}

/// Two views that travel with the tool centre point, as a camera on the
/// wrist would, but level: `hand` from in front of the robot, `hand-side`
/// from −y. The TCP stays at the centre, so whatever the gripper is near
/// fills the image: at 64 px a 5 cm goal ball 10 cm from the fingers spans
/// ~8 px, where the workspace views give it ~3.
const HAND_CAMERAS: [(&str, [f32; 3]); 2] = [
    ("hand", [0.25, 0.0, 0.12]),
    ("hand-side", [0.0, -0.25, 0.12]),
];
/// Vertical field of view of the hand cameras: ±0.2 m around the TCP at its distance.
const HAND_FOV_DEGREES: f32 = 75.0;

/// Centre of the volume the tasks happen in (goals, cubes, the TCP's reach), m.
const WORKSPACE: [f32; 3] = [-0.15, 0.0, 0.3];

/// Two close, orthogonal views of the workspace for pixel policies: `front`
/// (facing the robot: y across, z up) and `side` (from −y: x across, z up).
/// Together they pin down a point in 3D, which no single image does; each
/// sees ~0.9 m (table to hand), so a 5 cm goal marker spans ~3 px of a 64-px image.
const WORKSPACE_CAMERAS: [SceneCamera; 2] = [
    SceneCamera {
        name: "front",
        eye: [0.75, 0.0, 0.45],
        target: WORKSPACE,
        fov_y_degrees: 50.0,
    },
    SceneCamera {
        name: "side",
        eye: [-0.15, -0.9, 0.45],
        target: WORKSPACE,
        fov_y_degrees: 50.0,
    },
];
