//! A rapier world as a [`proprio_core::Scene`]: every collider as it is
//! (the Panda's capsules and cylinders, the fingers, the table, the cubes),
//! dressed as both physics are (the goal marker, the cameras).

use super::world::{Parts, WorldState};
use crate::config::Settings;
use crate::task::TaskState;
use crate::visuals::{ARM, FINGER, cube_colour, dress, pose, table_colour};
use glam::{Quat, Vec3};
use proprio_core::{Scene, Shape, Visual};
use rapier3d::prelude::*;

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
pub fn manipulation(s: &Settings, p: &WorldState, parts: &Parts, t: &TaskState, scene: &mut Scene) {
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
            cube_colour(s, i)
        } else if parent.is_none_or(|b| bodies[b].is_fixed()) {
            table_colour(s)
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
