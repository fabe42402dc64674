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
