//! What the classic envs look like, for viewers ([`proprio_core::Scene`]):
//! Gymnasium's pictures in 3D, seen from the front (−y), z up.

use proprio_core::{Framing, Line, Pose, Scene, Shape, Visual};

const CART: [f32; 4] = [0.15, 0.15, 0.18, 1.0];
const POLE: [f32; 4] = [0.80, 0.60, 0.40, 1.0];
const AXLE: [f32; 4] = [0.50, 0.50, 0.80, 1.0];
const RAIL: [f32; 4] = [0.35, 0.35, 0.35, 1.0];
const LIMIT: [f32; 4] = [0.90, 0.20, 0.20, 0.35];
const ROD: [f32; 4] = [0.80, 0.30, 0.30, 1.0];
const Y_AXIS: [f32; 3] = [0.0, 1.0, 0.0];

/// Height of the cart's axle above the ground, m.
const AXLE_HEIGHT: f32 = 0.4;

/// A joint's hub: a cylinder at `at` whose axis points at the camera (y).
fn hub(at: [f32; 3], radius: f32, half_height: f32, colour: [f32; 4]) -> Visual {
    let shape = Shape::Cylinder {
        radius,
        half_height,
    };
    let pose = Pose::rotated(at, [1.0, 0.0, 0.0], std::f32::consts::FRAC_PI_2);
    Visual::new(shape, pose, colour)
}

/// A cart on a rail between the ±`x_limit` marks, its pole `2 · half_pole` long
/// leaning `theta` radians towards +x.
pub fn cartpole(x: f32, theta: f32, half_pole: f32, x_limit: f32, scene: &mut Scene) {
    let rail_z = AXLE_HEIGHT - 0.1;
    let rail = Shape::Cuboid {
        half_extents: [x_limit + 0.25, 0.02, 0.01],
    };
    scene
        .bodies
        .push(Visual::new(rail, Pose::at([0.0, 0.05, rail_z]), RAIL));
    let cart = Shape::Cuboid {
        half_extents: [0.25, 0.1, 0.15],
    };
    scene
        .bodies
        .push(Visual::new(cart, Pose::at([x, 0.0, AXLE_HEIGHT]), CART));
    let axle = [x, -0.12, AXLE_HEIGHT + 0.1];
    let (s, c) = theta.sin_cos();
    let pole_centre = [axle[0] + half_pole * s, axle[1], axle[2] + half_pole * c];
    let pole = Shape::Capsule {
        radius: 0.04,
        half_length: half_pole,
    };
    scene.bodies.push(Visual::new(
        pole,
        Pose::rotated(pole_centre, Y_AXIS, theta),
        POLE,
    ));
    scene.bodies.push(hub(axle, 0.05, 0.03, AXLE));
    for side in [-1.0, 1.0] {
        let mark = Shape::Cuboid {
            half_extents: [0.02, 0.15, 0.5],
        };
        scene.markers.push(Visual::new(
            mark,
            Pose::at([side * x_limit, 0.0, 0.5]),
            LIMIT,
        ));
    }
    scene.framing = Framing {
        target: [0.0, 0.0, 0.8],
        eye: [0.0, -6.5, 2.0],
        half_extent: x_limit + 0.6,
    };
}

/// A rod of length `length` swinging about a pivot; `theta` = 0 is upright,
/// positive angles turn it towards −x (counter-clockwise, Gymnasium's sense).
pub fn pendulum(theta: f32, length: f32, scene: &mut Scene) {
    let pivot = [0.0, 0.0, length + 0.3];
    let (s, c) = theta.sin_cos();
    let half = length / 2.0;
    let centre = [pivot[0] - half * s, pivot[1], pivot[2] + half * c];
    let rod = Shape::Capsule {
        radius: 0.05,
        half_length: half,
    };
    scene
        .bodies
        .push(Visual::new(rod, Pose::rotated(centre, Y_AXIS, -theta), ROD));
    scene.bodies.push(hub(pivot, 0.06, 0.06, CART));
    let post = Shape::Cuboid {
        half_extents: [0.03, 0.03, pivot[2] / 2.0],
    };
    scene.bodies.push(Visual::new(
        post,
        Pose::at([0.0, 0.1, pivot[2] / 2.0]),
        RAIL,
    ));
    scene.lines.push(Line {
        from: pivot,
        to: [pivot[0], pivot[1], pivot[2] + length * 1.1],
        colour: [0.2, 0.8, 0.2, 0.8],
    });
    scene.framing = Framing {
        target: [0.0, 0.0, pivot[2]],
        eye: [0.0, -4.5, pivot[2] + 0.6],
        half_extent: length + 0.5,
    };
}
