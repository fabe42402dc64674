//! What a drone env looks like, for viewers ([`proprio_core::Scene`]): the
//! Crazyflie at its true size (a 9 cm X frame, red propellers at the front),
//! its altitude line, and the task's targets, waypoints or gate frames.

use crate::config::{Settings, TaskKind};
use crate::dynamics::{add, rotate, rotation};
use crate::params::ARM;
use crate::state::Drone;
use crate::task::{FRAME_DEPTH, FRAME_WIDTH, HOVER_RADIUS, qmul};
use proprio_core::{Framing, Line, Pose, Scene, SceneCamera, Shape, Visual};

const FRAME: [f32; 4] = [0.12, 0.12, 0.14, 1.0];
const PROP_FRONT: [f32; 4] = [0.85, 0.15, 0.15, 1.0];
const PROP_BACK: [f32; 4] = [0.15, 0.15, 0.15, 1.0];
const CURRENT: [f32; 4] = [0.15, 0.85, 0.25, 0.45];
const LATER: [f32; 4] = [0.95, 0.75, 0.15, 0.30];
const DONE: [f32; 4] = [0.5, 0.5, 0.5, 0.15];
const GATE: [f32; 4] = [0.95, 0.55, 0.10, 1.0];
const GATE_NEXT: [f32; 4] = [0.15, 0.80, 0.25, 1.0];

/// A body-frame part at `offset` of the drone at `pos`, turned by `q` = `[w, x, y, z]`.
fn part(pos: [f32; 3], q: [f32; 4], offset: [f32; 3]) -> Pose {
    let [w, x, y, z] = q;
    Pose {
        translation: add(pos, rotate(&rotation(q), offset)),
        rotation: [x, y, z, w],
    }
}

/// Behind and above the drone, looking at it, at a fixed world offset (as
/// MuJoCo's tracking cameras): the drone stays centred whatever it does, and
/// the view does not spin with its yaw.
fn follow(pos: [f32; 3]) -> SceneCamera {
    SceneCamera {
        name: "follow",
        eye: [pos[0], pos[1] - 0.35, pos[2] + 0.15],
        target: pos,
        fov_y_degrees: 60.0,
    }
}

fn quadrotor(d: &Drone, scene: &mut Scene) {
    let q = d.quat;
    let hub = Shape::Cuboid {
        half_extents: [0.016, 0.016, 0.006],
    };
    scene
        .bodies
        .push(Visual::new(hub, part(d.pos, q, [0.0; 3]), FRAME));
    let arm_len = ARM * std::f32::consts::SQRT_2;
    for yaw in [std::f32::consts::FRAC_PI_4, -std::f32::consts::FRAC_PI_4] {
        let arm = Shape::Cuboid {
            half_extents: [arm_len / 2.0 + 0.004, 0.003, 0.002],
        };
        let (s, c) = (yaw / 2.0).sin_cos();
        let pose = part(d.pos, qmul(q, [c, 0.0, 0.0, s]), [0.0; 3]);
        scene.bodies.push(Visual::new(arm, pose, FRAME));
    }
    let m = ARM * std::f32::consts::FRAC_1_SQRT_2;
    for (x, y) in [(m, -m), (m, m), (-m, m), (-m, -m)] {
        let prop = Shape::Cylinder {
            radius: 0.023,
            half_height: 0.001,
        };
        let colour = if x > 0.0 { PROP_FRONT } else { PROP_BACK };
        scene
            .bodies
            .push(Visual::new(prop, part(d.pos, q, [x, y, 0.008]), colour));
    }
    scene.lines.push(Line {
        from: d.pos,
        to: [d.pos[0], d.pos[1], 0.0],
        colour: [0.3, 0.3, 0.3, 0.6],
    });
}

fn target_colour(k: usize, goal: usize) -> [f32; 4] {
    match k.cmp(&goal) {
        std::cmp::Ordering::Less => DONE,
        std::cmp::Ordering::Equal => CURRENT,
        std::cmp::Ordering::Greater => LATER,
    }
}

/// A square gate frame of opening `size`, flown through along heading `[cos, sin]`.
fn gate(centre: [f32; 3], dir: [f32; 2], size: f32, colour: [f32; 4], scene: &mut Scene) {
    let yaw = dir[1].atan2(dir[0]);
    let h = 0.5 * size + 0.5 * FRAME_WIDTH;
    let side = [-dir[1], dir[0]];
    let bars = [
        (
            [0.0, 0.0, h],
            [0.5 * FRAME_DEPTH, h + 0.5 * FRAME_WIDTH, 0.5 * FRAME_WIDTH],
        ),
        (
            [0.0, 0.0, -h],
            [0.5 * FRAME_DEPTH, h + 0.5 * FRAME_WIDTH, 0.5 * FRAME_WIDTH],
        ),
        (
            [0.0, h, 0.0],
            [0.5 * FRAME_DEPTH, 0.5 * FRAME_WIDTH, h - 0.5 * FRAME_WIDTH],
        ),
        (
            [0.0, -h, 0.0],
            [0.5 * FRAME_DEPTH, 0.5 * FRAME_WIDTH, h - 0.5 * FRAME_WIDTH],
        ),
    ];
    for (offset, half_extents) in bars {
        let at = [
            centre[0] + side[0] * offset[1],
            centre[1] + side[1] * offset[1],
            centre[2] + offset[2],
        ];
        let pose = Pose::rotated(at, [0.0, 0.0, 1.0], yaw);
        scene
            .bodies
            .push(Visual::new(Shape::Cuboid { half_extents }, pose, colour));
    }
}

/// Draws drone `d` of a task with settings `s`.
pub fn scene(d: &Drone, s: &Settings, scene: &mut Scene) {
    quadrotor(d, scene);
    scene.cameras.push(follow(d.pos));
    scene.step_seconds = Some(1.0 / s.control_hz as f32);
    let goal = d.goal as usize;
    let count = s.count as usize;
    match s.task {
        TaskKind::Hover => {
            let marker = Shape::Sphere {
                radius: HOVER_RADIUS,
            };
            scene
                .markers
                .push(Visual::new(marker, Pose::at(d.points[0]), CURRENT));
            scene.framing = Framing {
                target: d.points[0],
                eye: [
                    d.points[0][0] - 0.4,
                    d.points[0][1] - 1.4,
                    d.points[0][2] + 0.5,
                ],
                half_extent: 1.0,
            };
        }
        TaskKind::Waypoints => {
            for k in 0..count {
                let marker = Shape::Sphere {
                    radius: s.waypoint_radius,
                };
                let colour = target_colour(k, goal);
                scene
                    .markers
                    .push(Visual::new(marker, Pose::at(d.points[k]), colour));
                if k + 1 < count {
                    scene.lines.push(Line {
                        from: d.points[k],
                        to: d.points[k + 1],
                        colour: [colour[0], colour[1], colour[2], 0.8],
                    });
                }
            }
            scene.framing = Framing {
                target: [0.0, 0.0, 1.0],
                eye: [-1.0, -4.5, 3.0],
                half_extent: 2.5,
            };
        }
        TaskKind::Gates => {
            for k in 0..count {
                let colour = if k == goal { GATE_NEXT } else { GATE };
                gate(d.points[k], d.gate_dir[k], s.gate_size, colour, scene);
            }
            let r = s.course_radius;
            scene.framing = Framing {
                target: [0.0, 0.0, 0.8],
                eye: [-0.5 * r, -2.6 * r, 2.0 * r],
                half_extent: r + 1.0,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_turn_with_the_drone() {
        let h = std::f32::consts::FRAC_1_SQRT_2;
        // A quarter yaw: the body's x axis points along the world's y.
        let p = part([1.0, 2.0, 3.0], [h, 0.0, 0.0, h], [1.0, 0.0, 0.0]);
        let t = p.translation;
        assert!(
            (t[0] - 1.0).abs() < 1e-6 && (t[1] - 3.0).abs() < 1e-6 && (t[2] - 3.0).abs() < 1e-6
        );
        assert_eq!(p.rotation, [0.0, 0.0, h, h]);
        // Two quarter yaws make a half turn about z.
        let q = qmul([h, 0.0, 0.0, h], [h, 0.0, 0.0, h]);
        assert!((q[3] - 1.0).abs() < 1e-6 && q[0].abs() < 1e-6);
    }
}
