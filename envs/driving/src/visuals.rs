//! What a driving env looks like, for viewers ([`proprio_core::Scene`]): the
//! road or track as flat pieces with lane lines, the parking lot with its
//! bays, the cars as boxes with a cabin, and chase and bird's-eye cameras.

use crate::config::{Settings, TaskKind};
use crate::params::{LANE_WIDTH, LENGTH, WIDTH};
use crate::parking;
use crate::road::{point_on, pose_at};
use crate::state::Car;
use crate::traffic::field;
use proprio_core::{Framing, Pose, Scene, SceneCamera, Shape, Visual};

const GRASS: [f32; 4] = [0.35, 0.52, 0.28, 1.0];
const ASPHALT: [f32; 4] = [0.27, 0.27, 0.29, 1.0];
const MARKING: [f32; 4] = [0.95, 0.95, 0.92, 1.0];
const EDGE: [f32; 4] = [0.95, 0.80, 0.20, 1.0];
const EGO: [f32; 4] = [0.15, 0.35, 0.85, 1.0];
const OTHER: [f32; 4] = [0.75, 0.75, 0.78, 1.0];
const CABIN: [f32; 4] = [0.10, 0.12, 0.15, 1.0];
const GOAL: [f32; 4] = [0.15, 0.85, 0.25, 0.45];
/// Longest flat piece an arc is drawn with, m.
const PIECE: f32 = 8.0;
/// Road drawn around the ego on long roads, m either way.
const DRAWN: f32 = 200.0;

/// A car's body and cabin at `(x, y)` heading `yaw`.
fn car(x: f32, y: f32, yaw: f32, colour: [f32; 4], scene: &mut Scene) {
    let body = Shape::Cuboid {
        half_extents: [0.5 * LENGTH, 0.5 * WIDTH, 0.35],
    };
    let cabin = Shape::Cuboid {
        half_extents: [0.25 * LENGTH, 0.45 * WIDTH, 0.25],
    };
    let up = [0.0, 0.0, 1.0];
    let (s, c) = yaw.sin_cos();
    scene.bodies.push(Visual::new(
        body,
        Pose::rotated([x, y, 0.5], up, yaw),
        colour,
    ));
    let back = -0.1 * LENGTH;
    let at = [x + back * c, y + back * s, 1.1];
    scene
        .bodies
        .push(Visual::new(cabin, Pose::rotated(at, up, yaw), CABIN));
}

/// The road from arc length `from` to `to` as flat pieces, with lane lines.
fn road(c: &Car, from: f32, to: f32, scene: &mut Scene) {
    let closed = c.closed > 0.5;
    let half = 0.5 * c.lanes * LANE_WIDTH;
    for g in c.road() {
        let (start, len) = (g[5], g[4]);
        if start + len < from || start > to {
            continue;
        }
        let pieces = if g[3] == 0.0 {
            1
        } else {
            (len / PIECE).ceil() as usize
        };
        let step = len / pieces as f32;
        for k in 0..pieces {
            let (a, _) = point_on(g, k as f32 * step, 0.0);
            let (b, _) = point_on(g, (k + 1) as f32 * step, 0.0);
            let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
            let centre = [0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1]), 0.01];
            let shape = Shape::Rectangle {
                half_size: [0.5 * dx.hypot(dy) + 0.3, half],
            };
            let pose = Pose::rotated(centre, [0.0, 0.0, 1.0], dy.atan2(dx));
            scene.bodies.push(Visual::new(shape, pose, ASPHALT));
        }
    }
    // Lane lines as flat strips (which every renderer draws, unlike lines):
    // solid edges, 3 m dashes every 12 m between lanes.
    let mut s = if closed { from } else { from.max(0.0) };
    let end = if closed { to } else { to.min(c.road_length) };
    while s < end {
        let next = (s + 3.0).min(end);
        for lane in 0..=c.lanes as usize {
            let d = lane as f32 * LANE_WIDTH - half;
            let edge = lane == 0 || lane == c.lanes as usize;
            if !edge && (s / 3.0).round() as i64 % 4 != 0 {
                continue;
            }
            let (a, _) = pose_at(c.road(), c.road_length, closed, s, d);
            let (b, _) = pose_at(c.road(), c.road_length, closed, next, d);
            let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
            let strip = Shape::Rectangle {
                half_size: [0.5 * dx.hypot(dy) + 0.05, 0.08],
            };
            let centre = [0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1]), 0.02];
            let pose = Pose::rotated(centre, [0.0, 0.0, 1.0], dy.atan2(dx));
            let colour = if edge { EDGE } else { MARKING };
            scene.bodies.push(Visual::new(strip, pose, colour));
        }
        s = next;
    }
}

fn lot(c: &Car, scene: &mut Scene) {
    let ground = Shape::Rectangle {
        half_size: [parking::half_length(), parking::half_width()],
    };
    scene
        .bodies
        .push(Visual::new(ground, Pose::at([0.0, 0.0, 0.01]), ASPHALT));
    for k in 0..2 * parking::BAYS {
        let [x, y, _] = parking::bay(k);
        for side in [-0.5, 0.5] {
            let strip = Shape::Rectangle {
                half_size: [0.08, 0.5 * parking::BAY_DEPTH],
            };
            let at = [x + side * parking::BAY_WIDTH, y, 0.02];
            scene.bodies.push(Visual::new(strip, Pose::at(at), MARKING));
        }
    }
    let marker = Shape::Rectangle {
        half_size: [0.5 * LENGTH, 0.5 * WIDTH],
    };
    let pose = Pose::rotated([c.goal[0], c.goal[1], 0.04], [0.0, 0.0, 1.0], c.goal[2]);
    scene.markers.push(Visual::new(marker, pose, GOAL));
}

/// Behind and above the ego, looking ahead (a game's chase camera), and straight above it.
fn cameras(c: &Car, scene: &mut Scene) {
    let (s, co) = c.yaw.sin_cos();
    let [x, y] = c.pos;
    scene.cameras.push(SceneCamera {
        name: "chase",
        eye: [x - 9.0 * co, y - 9.0 * s, 4.0],
        target: [x + 6.0 * co, y + 6.0 * s, 0.8],
        fov_y_degrees: 60.0,
    });
    scene.cameras.push(SceneCamera {
        name: "bird",
        eye: [x - 0.01 * co, y - 0.01 * s, 45.0],
        target: [x, y, 0.0],
        fov_y_degrees: 60.0,
    });
}

/// Draws env state `c` of a task with settings `s`.
pub fn scene(c: &Car, s: &Settings, scene: &mut Scene) {
    let ground = Shape::Rectangle {
        half_size: [2000.0, 2000.0],
    };
    scene.bodies.push(Visual::new(
        ground,
        Pose::at([c.pos[0], c.pos[1], 0.0]),
        GRASS,
    ));
    scene.step_seconds = Some(s.step_seconds());
    cameras(c, scene);
    let (sn, co) = c.yaw.sin_cos();
    let follow = Framing {
        target: [c.pos[0] + 10.0 * co, c.pos[1] + 10.0 * sn, 0.0],
        eye: [c.pos[0] - 25.0 * co, c.pos[1] - 25.0 * sn, 18.0],
        half_extent: 40.0,
    };
    match s.task {
        TaskKind::Parking => {
            lot(c, scene);
            scene.framing = Framing {
                target: [0.0, 0.0, 0.0],
                eye: [0.0, -30.0, 30.0],
                half_extent: parking::half_length(),
            };
        }
        TaskKind::Racing => {
            road(c, 0.0, c.road_length, scene);
            let r = s.track_radius;
            scene.framing = Framing {
                target: [0.0, 0.0, 0.0],
                eye: [0.0, -1.6 * r, 1.8 * r],
                half_extent: 1.4 * r,
            };
        }
        _ => {
            road(c, c.s - DRAWN, c.s + DRAWN, scene);
            scene.framing = follow;
        }
    }
    for o in c.others() {
        car(o[field::X], o[field::Y], o[field::YAW], OTHER, scene);
    }
    car(c.pos[0], c.pos[1], c.yaw, EGO, scene);
}
