//! What both physics draw alike, for viewers ([`proprio_core::Scene`]): the
//! colours, the goal marker, the instruction, the framing and the cameras.

use crate::config::{Settings, TaskKind};
use crate::instruct::{Split, words};
use crate::panda::{CUBE_COLOURS, MAX_CUBES};
use crate::task::{PICK_RADIUS, PUSH_RADIUS, REACH_RADIUS, TaskState};
use glam::{Quat, Vec3};
use proprio_core::{Framing, Pose, Scene, SceneCamera, Shape, Visual};

pub(crate) const ARM: [f32; 4] = [0.92, 0.92, 0.90, 1.0];
pub(crate) const FINGER: [f32; 4] = [0.20, 0.20, 0.22, 1.0];
const TABLE: [f32; 4] = [0.62, 0.46, 0.30, 1.0];
const GOAL: [f32; 4] = [0.15, 0.85, 0.25, 0.45];
/// The vision split's table: slate instead of wood.
const VISION_TABLE: [f32; 4] = [0.36, 0.39, 0.44, 1.0];
/// The vision split's cubes: other shades of the same named colours
/// (crimson, sky blue, lime, pale yellow), so the words still name them.
const VISION_CUBES: [[f32; 4]; MAX_CUBES] = [
    [0.60, 0.05, 0.25, 1.0],
    [0.15, 0.65, 0.95, 1.0],
    [0.55, 0.80, 0.10, 1.0],
    [0.90, 0.88, 0.45, 1.0],
];

/// The colour of cube `i` in `s`'s episodes.
pub fn cube_colour(s: &Settings, i: usize) -> [f32; 4] {
    match s.split {
        Split::Vision => VISION_CUBES[i % MAX_CUBES],
        _ => CUBE_COLOURS[i % MAX_CUBES].1,
    }
}

/// The table's colour in `s`'s episodes.
pub fn table_colour(s: &Settings) -> [f32; 4] {
    match s.split {
        Split::Vision => VISION_TABLE,
        _ => TABLE,
    }
}

pub(crate) fn pose(translation: Vec3, rotation: Quat) -> Pose {
    Pose {
        translation: translation.to_array(),
        rotation: rotation.to_array(),
    }
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
        // The words observed: a typed text's own, else the table wording's.
        let typed = s.typed.filter(|_| t.phrasing == words::TYPED);
        let text = typed.and_then(|typed| words::spoken(&typed.tokens));
        scene
            .text
            .push(text.unwrap_or_else(|| instruction.words(t.phrasing)));
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
