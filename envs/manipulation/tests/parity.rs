//! The kernel physics on the GPU against the CPU reference: same starts, the
//! scripted policies' actions perturbed, 300 control steps of 128 envs with
//! in-kernel autoresets, for every task and controller.
//!
//! The backends round differently (fused multiply-adds, transcendental
//! functions), and the dynamics amplify the difference in velocities: the
//! arm's mass matrix spans four orders of magnitude (a 5 kg shoulder, 15 g
//! fingers), and a cube resting on four corners is statically indeterminate,
//! so how the solver splits its weight between them — and the friction
//! torques that follow — depends on rounding; a 64 g cube's tiny inertia
//! turns that into angular velocity. Positions, orientations and everything
//! else agree within 1e-4; joint and cube velocities within 1e-3, cube
//! angular velocities within 1e-2 (relative, with an absolute floor of 1).
//! An env that leaves these bounds (a contact event going the other way, a
//! drive saturating one step apart) is re-synced from the CPU and counted,
//! and the test requires that to be rare.
//!
//! Runs on any wgpu adapter (lavapipe in CI). Without one the test is skipped,
//! unless `PROPRIO_REQUIRE_GPU=1` (set by `.ci/run`) makes that a failure.

use proprio_core::parity::{Pair, close, relative};
use proprio_core::rand::RngExt;
use proprio_core::serde_json::json;
use proprio_core::{ActMode, Batch, Registry, episode_rng};
use proprio_manipulation::instruct::INSTRUCTION_TOKENS;

const STEPS: usize = 300;
const N: usize = 128;
/// Observations agree within this, relative with an absolute floor of 1 (velocities: see [`tolerance`]).
const TOLERANCE: f32 = 1e-4;

/// The tolerance of observation field `k` of a task (layout in docs/envs.md).
fn tolerance(id: &str, k: usize) -> f32 {
    if id.contains("instruct") {
        // Each cube's 13 values from 26 on: linear velocity at 7..10, angular at 10..13.
        let cube = k.checked_sub(26).filter(|&c| c < 13 * 3).map(|c| c % 13);
        return match cube {
            Some(10..13) => 1e-2,
            Some(7..10) => 1e-3,
            _ if (9..18).contains(&k) => 1e-3,
            _ => TOLERANCE,
        };
    }
    let angular = if id.contains("stack") {
        (36..39).contains(&k) || (49..52).contains(&k)
    } else {
        !id.contains("reach") && (36..39).contains(&k)
    };
    let linear = (9..18).contains(&k)
        || (!id.contains("reach") && (33..36).contains(&k))
        || (id.contains("stack") && (46..49).contains(&k));
    if angular {
        1e-2
    } else if linear {
        1e-3
    } else {
        TOLERANCE
    }
}

#[test]
fn gpu_kernel_matches_the_cpu_reference() {
    let mut registry = Registry::new();
    proprio_manipulation::register(&mut registry);
    let only = std::env::var("PARITY_ONLY").unwrap_or_default();
    let cases = [
        ("manipulation/reach-v0", "pd_ee_delta_pos"),
        ("manipulation/reach-v0", "pd_joint_pos"),
        ("manipulation/reach-v0", "pd_joint_delta_pos"),
        ("manipulation/push-cube-v0", "pd_ee_delta_pos"),
        ("manipulation/pick-cube-v0", "pd_ee_delta_pose"),
        ("manipulation/stack-cube-v0", "pd_ee_delta_pose"),
        ("manipulation/stack-cube-v0", "pd_ee_delta_pos_yaw"),
        ("manipulation/instruct-v0", "pd_ee_delta_pos_yaw"),
    ];
    for (id, control) in cases {
        if !id.contains(only.as_str()) {
            continue;
        }
        // The yaw controller's case also observes the cubes modulo their symmetries.
        let symmetric = control == "pd_ee_delta_pos_yaw";
        let config = json!({"physics": "kernel", "control": control, "cube_symmetry": symmetric});
        let Some(mut pair) = Pair::new(&registry, id, &config, N) else {
            return;
        };
        // The scripted policies drive the end effector; the joint controllers get random actions.
        let scripted = control.starts_with("pd_ee");
        let ee_config = if scripted {
            config.clone()
        } else {
            json!({"physics": "kernel"})
        };
        let ee_spec = registry.spec(id, &ee_config).unwrap();
        let mut policy = registry.scripted(id, &ee_spec).unwrap();
        let dim = pair.cpu.spec().observation_space.flat_dim();
        let mut rng = episode_rng(1, 0, 0);
        let (mut ends, mut successes) = (0, 0);
        let mut worst = 0.0f32;
        let act = |batch: &Batch, actions: &mut [f32]| {
            if scripted {
                policy
                    .act(&batch.obs, actions, ActMode::Deterministic)
                    .unwrap();
            }
            for a in actions.iter_mut() {
                let noise = rng.random::<f32>() - 0.5;
                *a = if scripted {
                    (*a + 0.2 * noise).clamp(-1.0, 1.0)
                } else {
                    2.0 * noise
                };
            }
        };
        let diverged = pair.drive(STEPS, act, |step, cpu, gpu| {
            let (c, g) = (cpu.batch(), gpu.batch());
            let mut resync = Vec::new();
            for i in 0..N {
                let agree = |a: &[f32], b: &[f32]| {
                    a.iter()
                        .zip(b)
                        .enumerate()
                        .all(|(k, (x, y))| close(*x, *y, tolerance(id, k)))
                };
                let finals = match (c.final_obs(i), g.final_obs(i)) {
                    (Some(a), Some(b)) => agree(a, b),
                    (None, None) => true,
                    _ => false,
                };
                let same = agree(c.obs(i), g.obs(i))
                    && finals
                    && c.terminated[i] == g.terminated[i]
                    && c.truncated[i] == g.truncated[i]
                    && close(c.reward[i], g.reward[i], 1e-3);
                if !same {
                    resync.push(i);
                    continue;
                }
                for (k, (a, b)) in c.obs(i).iter().zip(g.obs(i)).enumerate() {
                    if tolerance(id, k) == TOLERANCE {
                        worst = worst.max(relative(*a, *b));
                    }
                }
                if c.has_final[i] {
                    ends += 1;
                    successes += usize::from(c.final_infos[i].get("success") == Some(1.0));
                    assert_eq!(
                        c.final_infos[i].get("blow_up"),
                        Some(0.0),
                        "{id}: env {i} blew up"
                    );
                    // The same info keys in the same order (instruct's template,
                    // held_out and per-template success too), the same values.
                    let (ci, gi) = (&c.final_infos[i], &g.final_infos[i]);
                    let keys = |info: &proprio_core::Info| -> Vec<&str> {
                        info.iter().map(|(key, _)| key).collect()
                    };
                    assert_eq!(keys(ci), keys(gi), "{id}: env {i}'s final info");
                    for (key, value) in ci.iter() {
                        let theirs = gi.get(key).unwrap_or(f64::NAN);
                        assert!(
                            close(value as f32, theirs as f32, 1e-3),
                            "{id}: env {i}'s {key}: cpu {value}, gpu {theirs}"
                        );
                    }
                }
            }
            if std::env::var_os("PARITY_SHOW").is_some() && !resync.is_empty() {
                let i = resync[0];
                let fields: Vec<usize> = (0..dim)
                    .filter(|&k| !close(c.obs(i)[k], g.obs(i)[k], tolerance(id, k)))
                    .collect();
                eprintln!(
                    "{id} step {step}: env {i} fields {fields:?} cpu {:?} gpu {:?}",
                    fields.iter().map(|&k| c.obs(i)[k]).collect::<Vec<_>>(),
                    fields.iter().map(|&k| g.obs(i)[k]).collect::<Vec<_>>()
                );
            }
            if step == STEPS / 2 {
                // A batch's scenes come back in one read; each is the env's own.
                let envs = [0, 3, N / 2 + 1, N - 1];
                let mut scenes = vec![proprio_core::Scene::default(); N];
                gpu.scenes(&envs, &mut scenes).unwrap();
                for &i in &envs {
                    let mut one = proprio_core::Scene::default();
                    gpu.scene(i, &mut one).unwrap();
                    assert_eq!(scenes[i], one, "{id}: env {i}'s scene");
                    assert!(!one.bodies.is_empty(), "{id}: env {i} draws nothing");
                }
                assert_eq!(
                    scenes[1],
                    proprio_core::Scene::default(),
                    "unlisted envs stay as they were"
                );
            }
            resync
        });
        eprintln!(
            "{id} ({control}): {STEPS} steps x {N} envs agree (positions within {TOLERANCE:e}, worst {worst:.1e}); {ends} episodes ended ({successes} successes), {diverged} env-steps re-synced"
        );
        assert!(
            ends >= N / 2,
            "{id}: only {ends} episodes ended: autoreset barely exercised"
        );
        // Measured on lavapipe: push (a rocking, sliding cube) diverges most, 4.4% of env-steps.
        assert!(
            diverged * 100 <= STEPS * N * 8,
            "{id} ({control}): {diverged} of {} env-steps diverged",
            STEPS * N
        );
    }
}

/// The GPU observes an instruction in the episode's own words: the
/// semantic split's paraphrases and a typed text's tokens, as the CPU does,
/// at the first reset and after autoresets.
#[test]
fn gpu_observes_every_phrasing_as_the_cpu_does() {
    let registry = Registry::with(proprio_manipulation::register);
    for config in [
        json!({"physics": "kernel", "split": "semantic"}),
        json!({"physics": "kernel", "instruction": "place green onto the red one"}),
    ] {
        let Some(mut pair) = Pair::new(&registry, "manipulation/instruct-v0", &config, 32) else {
            return;
        };
        let dim = pair.cpu.spec().observation_space.flat_dim();
        let tokens = |batch: &Batch| -> Vec<Vec<f32>> {
            batch
                .obs
                .chunks_exact(dim)
                .map(|o| o[dim - INSTRUCTION_TOKENS..].to_vec())
                .collect()
        };
        let mut rng = episode_rng(2, 0, 0);
        let (mut ends, mut words) = (0, std::collections::HashSet::new());
        pair.drive(
            160,
            |_, actions| {
                for a in actions.iter_mut() {
                    *a = 2.0 * rng.random::<f32>() - 1.0;
                }
            },
            |_, cpu, gpu| {
                let (c, g) = (cpu.batch(), gpu.batch());
                assert_eq!(tokens(c), tokens(g), "{config}");
                ends += c.has_final.iter().filter(|f| **f).count();
                words.extend(
                    tokens(c)
                        .into_iter()
                        .map(|t| t.iter().map(|v| *v as u32).collect::<Vec<_>>()),
                );
                Vec::new()
            },
        );
        assert!(ends > 0, "{config}: no autoreset exercised");
        let typed = config.get("instruction").is_some();
        assert!(
            if typed {
                words.len() == 1
            } else {
                words.len() > 10
            },
            "{config}: {} wordings",
            words.len()
        );
    }
}
