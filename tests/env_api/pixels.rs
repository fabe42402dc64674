//! Pixel observations through the registry: the same images whatever the
//! batch size or thread count, and same-step autoreset keeping the last frame.
//! Skipped without any wgpu adapter, unless `PROPRIO_REQUIRE_GPU` is set.

use crate::actions_for;
use proprio::render::{ObsMode, ObsOptions};
use proprio::serde_json::Value;
use proprio::{AutoresetMode, Error, Space, VecEnv, VecOptions};

fn pixels(
    id: &str,
    n: usize,
    threads: usize,
    autoreset: AutoresetMode,
    mode: ObsMode,
    camera: &str,
) -> Option<Box<dyn VecEnv>> {
    let options = VecOptions {
        autoreset,
        threads: Some(threads),
        ..VecOptions::default()
    };
    let obs = ObsOptions {
        mode,
        image_size: 24,
        camera: camera.into(),
        frame_stack: 1,
    };
    match proprio::make_vec_observed(id, n, &Value::Null, options, &obs) {
        Ok(v) => Some(v),
        Err(Error::Backend(e))
            if e.starts_with("no GPU adapter")
                && std::env::var_os("PROPRIO_REQUIRE_GPU").is_none() =>
        {
            eprintln!("skipped: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn images_do_not_depend_on_batch_size_or_threads() {
    let id = "manipulation/push-cube-v0";
    let Some(mut big) = pixels(
        id,
        5,
        2,
        AutoresetMode::NextStep,
        ObsMode::RgbState,
        "default",
    ) else {
        return;
    };
    let mut small = pixels(
        id,
        2,
        1,
        AutoresetMode::NextStep,
        ObsMode::RgbState,
        "default",
    )
    .unwrap();
    assert_eq!(
        big.spec().observation_space,
        Space::Dict {
            spaces: vec![
                (
                    "image".into(),
                    Space::Image {
                        height: 24,
                        width: 24,
                        channels: 3
                    }
                ),
                (
                    "state".into(),
                    proprio::registry()
                        .spec(id, &Value::Null)
                        .unwrap()
                        .observation_space
                ),
            ]
        }
    );
    big.reset(Some(3), None).unwrap();
    small.reset(Some(3), None).unwrap();
    for step in 0..4 {
        assert_eq!(
            big.batch().obs[..2 * big.batch().obs_dim],
            small.batch().obs[..]
        );
        big.step(&actions_for(big.as_ref(), step)).unwrap();
        small.step(&actions_for(small.as_ref(), step)).unwrap();
    }
    // Different envs show different scenes (the cube starts elsewhere).
    let d = big.batch().obs_dim;
    assert_ne!(
        big.batch().obs[..24 * 24 * 3],
        big.batch().obs[d..d + 24 * 24 * 3]
    );
}

#[test]
fn same_step_autoreset_keeps_the_last_frame() {
    let id = "classic/cartpole-v1";
    let Some(mut venv) = pixels(id, 3, 1, AutoresetMode::SameStep, ObsMode::Rgb, "default") else {
        return;
    };
    let mut state = crate::vec_env(id, 3, AutoresetMode::SameStep, 1);
    venv.reset(Some(1), None).unwrap();
    state.reset(Some(1), None).unwrap();
    let mut ended = 0;
    for step in 0..200 {
        let actions = actions_for(venv.as_ref(), step);
        venv.step(&actions).unwrap();
        state.step(&actions).unwrap();
        let (b, s) = (venv.batch(), state.batch());
        assert_eq!(
            (&b.reward, &b.terminated, &b.truncated),
            (&s.reward, &s.terminated, &s.truncated)
        );
        assert_eq!(b.has_final, s.has_final);
        for i in 0..3 {
            if b.has_final[i] {
                ended += 1;
                // The last frame (pole fallen) differs from the new episode's first.
                assert_ne!(b.final_obs(i).unwrap(), b.obs(i));
                assert_eq!(b.final_infos[i], s.final_infos[i]);
            }
        }
    }
    assert!(ended > 3, "only {ended} episodes ended");
}

/// The drones' `follow` camera looks at the drone from a fixed offset
/// (0.35 m behind, 0.15 m above), so wherever it flies the centre of the
/// depth image hits the drone, about 0.38 m away (translucent markers are not
/// in depth images; the floor is metres away). The drone is about a pixel
/// tall at 24×24, so one of the four centre pixels must hit it.
#[test]
fn the_drones_follow_camera_keeps_the_drone_in_the_centre() {
    let (id, n, side) = ("drones/hover-v0", 2, 24);
    let Some(mut venv) = pixels(id, n, 1, AutoresetMode::NextStep, ObsMode::Depth, "follow") else {
        return;
    };
    venv.reset(Some(4), None).unwrap();
    for step in 0..15 {
        let actions = actions_for(venv.as_ref(), step);
        venv.step(&actions).unwrap();
        for i in 0..n {
            let depth = venv.batch().obs(i);
            let centre = [(11, 11), (12, 11), (11, 12), (12, 12)].map(|(x, y)| depth[y * side + x]);
            assert!(
                centre.iter().any(|d| (0.25..0.5).contains(d)),
                "step {step} env {i}: the centre {centre:?} misses the drone"
            );
        }
    }
}

#[test]
fn several_cameras_stack_their_images_along_the_channels() {
    let id = "manipulation/reach-v0";
    let make = |camera: &str| pixels(id, 2, 1, AutoresetMode::NextStep, ObsMode::Rgb, camera);
    let (Some(mut both), Some(mut front), Some(mut side)) =
        (make("front,side"), make("front"), make("side"))
    else {
        return;
    };
    assert_eq!(
        both.spec().observation_space,
        Space::Image {
            height: 24,
            width: 24,
            channels: 6
        }
    );
    for v in [&mut both, &mut front, &mut side] {
        v.reset(Some(3), None).unwrap();
    }
    let (b, f, s) = (
        both.batch().obs(1),
        front.batch().obs(1),
        side.batch().obs(1),
    );
    for p in 0..24 * 24 {
        assert_eq!(&b[p * 6..p * 6 + 3], &f[p * 3..p * 3 + 3], "pixel {p}");
        assert_eq!(&b[p * 6 + 3..p * 6 + 6], &s[p * 3..p * 3 + 3], "pixel {p}");
    }
    assert_ne!(f, s, "the two cameras see different images");
}
