//! Every registered env describes what it looks like, and the description
//! follows its state (what the viewer and future renderers draw).

use super::{actions_for, vec_env};
use proprio::{AutoresetMode, ResetOptions, Scene, Shape, VecEnv, Visual};

fn finite_visual(v: &Visual) -> bool {
    let pose = v.pose.translation.iter().chain(&v.pose.rotation);
    let norm: f32 = v.pose.rotation.iter().map(|q| q * q).sum();
    let size_ok = match v.shape {
        Shape::Cuboid { half_extents } => half_extents.iter().all(|h| *h > 0.0),
        Shape::Sphere { radius } => radius > 0.0,
        Shape::Capsule {
            radius,
            half_length,
        } => radius > 0.0 && half_length >= 0.0,
        Shape::Cylinder {
            radius,
            half_height,
        } => radius > 0.0 && half_height > 0.0,
        Shape::Rectangle { half_size } => half_size.iter().all(|h| *h > 0.0),
    };
    pose.into_iter().all(|x| x.is_finite()) && (norm - 1.0).abs() < 1e-3 && size_ok
}

fn describe(venv: &dyn VecEnv, env: usize) -> Scene {
    let mut scene = Scene::default();
    scene.text.push("left over from before".into());
    venv.scene(env, &mut scene).unwrap();
    scene
}

#[test]
fn every_env_draws_a_scene_that_follows_its_state() {
    for id in proprio::registry().ids() {
        let mut venv = vec_env(id, 4, AutoresetMode::NextStep, 1);
        venv.reset(Some(3), ResetOptions::default()).unwrap();
        let first = describe(&*venv, 0);
        assert!(!first.bodies.is_empty(), "{id} draws no bodies");
        assert!(!first.text.contains(&"left over from before".to_string()));
        for v in first.bodies.iter().chain(&first.markers) {
            assert!(finite_visual(v), "{id}: bad visual {v:?}");
        }
        assert!(first.framing.half_extent > 0.0);
        // Envs of different streams draw different instances (of a small
        // set, such as twenty questions' 16 hidden objects, not always pairwise).
        assert!(
            (1..4).any(|i| describe(&*venv, i) != first),
            "{id}: four envs of different streams look the same"
        );
        let mut moved = false;
        for step in 0..5 {
            venv.step(&actions_for(&*venv, step)).unwrap();
            moved |= describe(&*venv, 0) != first;
        }
        assert!(moved, "{id}: the scene did not follow five steps");
        assert!(venv.scene(4, &mut Scene::default()).is_err());
    }
}
