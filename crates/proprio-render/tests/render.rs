//! The renderer draws what the projection predicts: silhouettes to a pixel,
//! depth to a millimetre, each env its own scene, the same bytes whatever the
//! batch. Skipped on a machine without any wgpu adapter, unless
//! `PROPRIO_REQUIRE_GPU` is set (CI installs lavapipe and sets it).

use proprio_core::{Pose, Scene, SceneCamera, Shape, Texture, Visual};
use proprio_render::{Frames, RenderConfig, RenderError, Renderer};

const RED: [f32; 4] = [1.0, 0.0, 0.0, 1.0];
const BLUE: [f32; 4] = [0.0, 0.0, 1.0, 1.0];

fn renderer(width: u32, height: u32) -> Option<Renderer> {
    let config = RenderConfig {
        width,
        height,
        floor: false,
    };
    match Renderer::new(config) {
        Ok(r) => Some(r),
        Err(RenderError::NoAdapter(e)) if std::env::var_os("PROPRIO_REQUIRE_GPU").is_none() => {
            eprintln!("skipped: no wgpu adapter ({e})");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// A scene with one camera `eye` looking at `target` with a 45° vertical field of view.
fn looking(eye: [f32; 3], target: [f32; 3]) -> Scene {
    let mut scene = Scene::default();
    scene.cameras.push(SceneCamera {
        name: "test",
        eye,
        target,
        fov_y_degrees: 45.0,
    });
    scene
}

fn cube_at(x: f32, colour: [f32; 4]) -> Visual {
    let shape = Shape::Cuboid {
        half_extents: [0.5; 3],
    };
    Visual::new(shape, Pose::at([x, 0.0, 0.0]), colour)
}

/// True where a pixel is mostly red (the cube), not the grey-blue background.
fn red(frames: &Frames, i: usize, x: usize, y: usize) -> bool {
    let w = frames.width as usize;
    let p = &frames.rgb(i)[(y * w + x) * 3..(y * w + x) * 3 + 3];
    p[0] > 100 && p[1] < 40 && p[2] < 40
}

#[test]
fn a_unit_cube_covers_the_pixels_the_projection_predicts() {
    let Some(mut r) = renderer(64, 48) else {
        return;
    };
    let mut scene = looking([0.0, -4.0, 0.0], [0.0; 3]);
    scene.bodies.push(cube_at(0.0, RED));
    let mut frames = Frames::default();
    r.render(&[scene], "test", false, &mut frames).unwrap();
    // Straight on, only the front face (y = -0.5, 3.5 m away) shows: a square
    // of half side f·0.5/3.5 pixels, f = (h/2)/tan(22.5°), around the centre.
    let f = 24.0 / 22.5f64.to_radians().tan();
    let half = f * 0.5 / 3.5;
    let (cx, cy) = (32.0, 24.0);
    let mut checked = 0;
    for y in 0..48 {
        for x in 0..64 {
            let (px, py) = (x as f64 + 0.5, y as f64 + 0.5);
            let inside = ((px - cx).abs() - half).max((py - cy).abs() - half);
            if inside < -1.0 {
                assert!(red(&frames, 0, x, y), "({x}, {y}) should show the cube");
                checked += 1;
            } else if inside > 1.0 {
                assert!(!red(&frames, 0, x, y), "({x}, {y}) should be background");
            }
        }
    }
    assert!(checked > 150, "only {checked} cube pixels checked");
}

#[test]
fn depth_of_a_plane_at_a_known_distance_is_exact_to_a_millimetre() {
    let Some(mut r) = renderer(32, 32) else {
        return;
    };
    for distance in [0.5f32, 2.0, 7.25] {
        let mut scene = looking([0.3, -0.2, distance], [0.3, -0.2, 0.0]);
        let floor = Shape::Rectangle {
            half_size: [100.0, 100.0],
        };
        scene
            .bodies
            .push(Visual::new(floor, Pose::IDENTITY, [0.5; 4]));
        let mut frames = Frames::default();
        r.render(&[scene], "test", true, &mut frames).unwrap();
        for &d in frames.depth(0) {
            assert!(
                (d - distance).abs() < 1e-3,
                "depth {d}, plane at {distance}"
            );
        }
    }
    // Nothing hit reads 0.
    let mut frames = Frames::default();
    r.render(
        &[looking([0.0; 3], [1.0, 0.0, 0.0])],
        "test",
        true,
        &mut frames,
    )
    .unwrap();
    assert!(frames.depth(0).iter().all(|&d| d == 0.0));
}

#[test]
fn each_env_in_a_batch_shows_its_own_scene() {
    let Some(mut r) = renderer(32, 32) else {
        return;
    };
    let mut left = looking([0.0, -4.0, 0.0], [0.0; 3]);
    left.bodies.push(cube_at(-1.0, RED));
    let mut right = looking([0.0, -4.0, 0.0], [0.0; 3]);
    right.bodies.push(cube_at(1.0, BLUE));
    let mut both = Frames::default();
    r.render(&[left.clone(), right.clone()], "test", true, &mut both)
        .unwrap();
    let mut alone = Frames::default();
    r.render(&[left], "test", true, &mut alone).unwrap();
    assert_eq!(both.rgb(0), alone.rgb(0));
    assert_eq!(both.depth(0), alone.depth(0));
    r.render(&[right], "test", true, &mut alone).unwrap();
    assert_eq!(both.rgb(1), alone.rgb(0));
    assert_ne!(both.rgb(0), both.rgb(1));
    // The red cube is left of centre, the blue one right of it.
    assert!(red(&both, 0, 8, 16) && !red(&both, 0, 24, 16));
    let blue =
        |x: usize| both.rgb(1)[(16 * 32 + x) * 3 + 2] > 100 && both.rgb(1)[(16 * 32 + x) * 3] < 40;
    assert!(blue(24) && !blue(8));
}

/// 700 × 700 tiles: four fit in a 2048² target layer and the renderer keeps
/// at most four layers, so 18 envs take two windows of passes and copies.
#[test]
fn a_batch_larger_than_the_targets_is_drawn_in_windows() {
    let Some(mut r) = renderer(700, 700) else {
        return;
    };
    let scenes: Vec<Scene> = (0..18)
        .map(|k| {
            let mut s = looking([0.0, -4.0, 0.0], [0.0; 3]);
            s.bodies.push(cube_at(0.1 * k as f32 - 0.9, RED));
            s
        })
        .collect();
    let mut batch = Frames::default();
    r.render(&scenes, "test", true, &mut batch).unwrap();
    let mut one = Frames::default();
    for env in [0, 3, 4, 15, 16, 17] {
        r.render_envs(&scenes, [env].into_iter(), "test", true, &mut one)
            .unwrap();
        assert_eq!(one.rgb(0), batch.rgb(env), "env {env}");
        assert_eq!(one.depth(0), batch.depth(env), "env {env}");
    }
    for env in 1..18 {
        assert_ne!(batch.rgb(env - 1), batch.rgb(env), "env {env}");
    }
}

#[test]
fn images_do_not_depend_on_the_batch_size_or_order() {
    let Some(mut r) = renderer(40, 24) else {
        return;
    };
    let scenes: Vec<Scene> = (0..7)
        .map(|k| {
            let mut s = looking([0.2 * k as f32, -3.0, 1.0], [0.0; 3]);
            s.bodies.push(cube_at(0.3 * k as f32 - 1.0, RED));
            s.markers.push(Visual::new(
                Shape::Sphere { radius: 0.3 },
                Pose::at([0.0, -1.0, 0.2 * k as f32]),
                [0.0, 1.0, 0.0, 0.5],
            ));
            s
        })
        .collect();
    let mut batch = Frames::default();
    r.render(&scenes, "test", true, &mut batch).unwrap();
    let mut some = Frames::default();
    r.render_envs(&scenes, [6, 2, 4].into_iter(), "test", true, &mut some)
        .unwrap();
    for (k, env) in [6, 2, 4].into_iter().enumerate() {
        assert_eq!(some.rgb(k), batch.rgb(env), "env {env}");
        assert_eq!(some.depth(k), batch.depth(env), "env {env}");
    }
    let mut one = Frames::default();
    for (env, scene) in scenes.iter().enumerate() {
        r.render(std::slice::from_ref(scene), "test", true, &mut one)
            .unwrap();
        assert_eq!(one.rgb(0), batch.rgb(env), "env {env}");
    }
}

#[test]
fn a_texture_shows_on_its_card() {
    let Some(mut r) = renderer(32, 32) else {
        return;
    };
    // Left half red, right half blue, facing the camera above it.
    let rgba: Vec<u8> = (0..4 * 4)
        .flat_map(|i| {
            if i % 4 < 2 {
                [255, 0, 0, 255]
            } else {
                [0, 0, 255, 255]
            }
        })
        .collect();
    let mut scene = looking([0.0, 0.0, 3.0], [0.0; 3]);
    let card = Shape::Rectangle {
        half_size: [1.0, 1.0],
    };
    let mut visual = Visual::new(card, Pose::IDENTITY, [1.0; 4]);
    visual.texture = Texture::new(4, 4, rgba);
    scene.bodies.push(visual);
    let mut frames = Frames::default();
    r.render(&[scene], "test", false, &mut frames).unwrap();
    // Looking down with +y up in the image: texture column 0 is world -x, image left.
    assert!(red(&frames, 0, 12, 16), "left of centre should be red");
    let p = &frames.rgb(0)[(16 * 32 + 20) * 3..(16 * 32 + 20) * 3 + 3];
    assert!(
        p[2] > 100 && p[0] < 40,
        "right of centre should be blue: {p:?}"
    );
}

#[test]
fn an_unknown_camera_is_a_clear_error() {
    let Some(mut r) = renderer(16, 16) else {
        return;
    };
    let err = r
        .render(
            &[looking([0.0; 3], [1.0; 3])],
            "wrist",
            false,
            &mut Frames::default(),
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no camera 'wrist' in this env (it has: default, top, test)"
    );
    assert!(matches!(
        Renderer::new(RenderConfig {
            width: 4,
            height: 64,
            floor: true
        }),
        Err(RenderError::Size { .. })
    ));
}
