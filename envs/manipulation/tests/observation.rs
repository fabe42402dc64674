//! The observation encodes one hand orientation one way: the hand's
//! quaternion is continuous around the hand pointing down, where it works.

use proprio_core::rand::RngExt;
use proprio_core::serde_json::json;
use proprio_core::{AutoresetMode, Registry, VecEnv, VecOptions};

/// Where the hand's quaternion (x, y, z, w) sits: after q, q̇ (9 each) and the TCP.
const HAND_X: usize = 21;

#[test]
fn the_hand_pointing_down_is_observed_with_one_sign_on_both_physics() {
    let mut registry = Registry::new();
    proprio_manipulation::register(&mut registry);
    for physics in ["kernel", "rapier"] {
        let config = json!({"physics": physics, "control": "pd_ee_delta_pos"});
        let options = VecOptions {
            autoreset: AutoresetMode::NextStep,
            threads: Some(1),
            ..VecOptions::default()
        };
        let mut v: Box<dyn VecEnv> = registry
            .make_vec("manipulation/pick-cube-v0", 32, &config, options)
            .unwrap();
        v.reset(Some(5), None).unwrap();
        let mut actions = vec![0.0f32; 32 * 4];
        for t in 0..30 {
            let b = v.batch();
            for (i, o) in b.obs.chunks_exact(b.obs_dim).enumerate() {
                // The rest pose's hand is a half turn about x: w ≈ 0, so w ≥ 0 alone would flip x's sign at random.
                assert!(
                    o[HAND_X] > 0.5,
                    "{physics}: env {i} at step {t} observes the hand as {:?}",
                    &o[HAND_X..HAND_X + 4]
                );
            }
            for (i, a) in actions.chunks_exact_mut(4).enumerate() {
                let mut rng = proprio_core::episode_rng(3, i as u64, t);
                a.iter_mut().for_each(|c| *c = rng.random_range(-1.0..=1.0));
            }
            v.step(&actions).unwrap();
        }
    }
}

/// Rotation `q` in the table (up to sign).
fn in_table(q: glam::Quat) -> bool {
    use proprio_manipulation::task::CUBE_SYMMETRIES;
    CUBE_SYMMETRIES
        .iter()
        .any(|s| glam::Quat::from_array(*s).dot(q).abs() > 1.0 - 1e-5)
}

#[test]
fn the_cube_symmetries_are_24_distinct_rotations_closed_under_composition() {
    use proprio_manipulation::task::CUBE_SYMMETRIES;
    let table: Vec<glam::Quat> = CUBE_SYMMETRIES
        .iter()
        .map(|s| glam::Quat::from_array(*s))
        .collect();
    for (i, a) in table.iter().enumerate() {
        assert!(
            (a.length() - 1.0).abs() < 1e-6,
            "entry {i} is not a unit quaternion"
        );
        for (j, b) in table.iter().enumerate() {
            assert!(
                i == j || a.dot(*b).abs() < 0.99,
                "entries {i} and {j} are one rotation"
            );
            assert!(in_table(*a * *b), "{i} then {j} leaves the table");
            // Each maps the cube's axes onto its axes.
            let x = (*a * *b) * glam::Vec3::X;
            assert!(x.abs().max_element() > 1.0 - 1e-5, "{i}·{j} turns x to {x}");
        }
    }
}

#[test]
fn a_cube_is_observed_by_its_rotation_closest_to_the_world_axes() {
    use proprio_manipulation::task::cube_symmetric;
    let yaw = |q: [f32; 4]| 2.0 * q[2].atan2(q[3]);
    // An upright cube's yaw is folded into ±45°: 80° reads as −10°, −50° as 40°.
    let q = cube_symmetric(glam::Quat::from_rotation_z(80f32.to_radians()));
    assert!((yaw(q) - (-10f32).to_radians()).abs() < 1e-5, "{q:?}");
    let q = cube_symmetric(glam::Quat::from_rotation_z((-50f32).to_radians()));
    assert!((yaw(q) - 40f32.to_radians()).abs() < 1e-5, "{q:?}");
    // A cube tipped onto a side and turned 20° reads as upright, turned 20°.
    let tipped = glam::Quat::from_rotation_z(0.35)
        * glam::Quat::from_rotation_x(std::f32::consts::FRAC_PI_2);
    let q = glam::Quat::from_array(cube_symmetric(tipped));
    assert!(
        q.angle_between(glam::Quat::from_rotation_z(0.35)) < 1e-4,
        "{q:?}"
    );
    // Any rotation: an equivalent one (q⁻¹ r in the table), no farther from the axes than any other.
    let mut rng = proprio_core::episode_rng(8, 0, 0);
    for _ in 0..200 {
        let axis = glam::Vec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        );
        let q = glam::Quat::from_axis_angle(
            axis.normalize_or(glam::Vec3::Z),
            rng.random_range(-3.1..3.1),
        );
        let r = glam::Quat::from_array(cube_symmetric(q));
        assert!(r.w >= 0.0 && in_table(q.inverse() * r), "{q:?} → {r:?}");
        assert!(
            proprio_manipulation::task::CUBE_SYMMETRIES
                .iter()
                .all(|s| (q * glam::Quat::from_array(*s)).w.abs() <= r.w + 1e-6)
        );
    }
}
