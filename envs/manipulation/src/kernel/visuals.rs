//! What a kernel-physics env looks like, for viewers: the arm's URDF shapes
//! where the kernel's kinematics put them, the table, the cubes, and the
//! goal and cameras the rapier physics draws too.

use super::{Arm, Sim};
use crate::config::Settings;
use crate::panda::{BASE, CUBE_HALF, TABLE_HALF};
use crate::task::TaskState;
use crate::visuals::{ARM, FINGER, cube_colour, dress, pose, table_colour};
use glam::{Quat, Vec3};
use proprio_core::{Scene, Shape, Visual};

/// Draws the kernel's arm (its URDF shapes), the table and the cubes of `sim`, and the goal.
pub fn scene(s: &Settings, arm: &Arm, sim: &Sim, t: &TaskState, scene: &mut Scene) {
    let k = arm.kinematics(&sim.q);
    for (body, centre, rotation, shape) in &arm.visuals {
        let (r, o) = match body {
            Some(b) => (k.rotation[*b], k.origin[*b]),
            None => (Quat::IDENTITY, Vec3::from(BASE)),
        };
        let colour = match shape {
            Shape::Cuboid { .. } if body.is_some_and(|b| b >= 7) => FINGER,
            _ => ARM,
        };
        scene.bodies.push(Visual::new(
            *shape,
            pose(o + r * *centre, r * *rotation),
            colour,
        ));
    }
    scene.bodies.push(Visual::new(
        Shape::Cuboid {
            half_extents: TABLE_HALF,
        },
        pose(Vec3::new(0.0, 0.0, -TABLE_HALF[2]), Quat::IDENTITY),
        table_colour(s),
    ));
    for i in 0..s.cubes {
        let c = &sim.cubes[i];
        scene.bodies.push(Visual::new(
            Shape::Cuboid {
                half_extents: [CUBE_HALF; 3],
            },
            pose(
                Vec3::new(c[0], c[1], c[2]),
                Quat::from_xyzw(c[3], c[4], c[5], c[6]),
            ),
            cube_colour(s, i),
        ));
    }
    dress(s, t, arm.tcp(&k).0, scene);
}
