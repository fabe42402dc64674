//! The GPU kernel against the CPU reference: same starts, same actions, 600
//! control steps with in-kernel autoresets, every output within 1e-4.
//!
//! The backends round differently (fused multiply-adds, sqrt), and an
//! open-loop trajectory amplifies a rounding difference roughly as t² (a tilt
//! error turns into a position error): measured on lavapipe, the worst
//! difference reaches 1e-4 after about 1.5 s of aggressive flight. Episodes
//! here last 1 s, so the 600 steps run through six in-kernel autoresets per env.
//!
//! Runs on any wgpu adapter (lavapipe in CI). Without one the test is skipped,
//! unless `PROPRIO_REQUIRE_GPU=1` (set by `.ci/run`) makes that a failure.

use proprio_core::parity::{Pair, close, events, gpu_or_skip, noisy, relative};
use proprio_core::serde_json::{Value, json};
use proprio_core::{AutoresetMode, Family, Registry, VecEnv, family};
use proprio_drones::{DroneModel, Drones};

const STEPS: usize = 600;
const N: usize = 130;

/// Checks rows of `dim` components within 1e-4, skipping the envs in `skip`; returns the worst difference.
fn compare(what: &str, step: usize, cpu: &[f32], gpu: &[f32], dim: usize, skip: &[bool]) -> f32 {
    let mut worst = 0.0f32;
    for (k, (a, b)) in cpu.iter().zip(gpu).enumerate() {
        let skipped = skip.get(k / dim).copied().unwrap_or(false);
        if !skipped {
            worst = worst.max(relative(*a, *b));
        }
        assert!(
            skipped || close(*a, *b, 1e-4),
            "{what} differs at step {step}, env {}, component {}: cpu {a}, gpu {b}",
            k / dim,
            k % dim
        );
    }
    worst
}

#[test]
fn gpu_kernel_matches_the_cpu_reference() {
    let mut registry = Registry::new();
    proprio_drones::register(&mut registry);
    let cases = [
        (
            "drones/hover-v0",
            json!({
                "randomize": {"mass": 0.1, "inertia": 0.1, "thrust": 0.1, "torque": 0.1, "motor_tau": 0.2},
                "wind": {"speed": 1.0, "gust": 0.5, "gust_hz": 2.0},
                "max_episode_steps": 100,
            }),
        ),
        (
            "drones/hover-v0",
            json!({
                "squared_reward": {"exit": 0.3, "distance": 1.0, "rate": 0.1, "bonus": 0.5, "termination": -3.0},
                "observe_motors": true,
                "max_episode_steps": 100,
            }),
        ),
        (
            "drones/waypoints-v0",
            json!({"action": "thrust_rates", "max_episode_steps": 100}),
        ),
        (
            "drones/gates-v0",
            json!({"course_radius": 0.6, "max_episode_steps": 100}),
        ),
    ];
    for (id, config) in cases {
        let Some(mut pair) = Pair::new(&registry, id, &config, N) else {
            return;
        };
        let mut controller = registry.scripted(id, pair.cpu.spec()).unwrap();
        let dim = pair.cpu.spec().observation_space.flat_dim();
        let (mut ends, mut crashes, mut reached) = (0, 0, 0);
        let mut worst = 0.0f32;
        let mut crash_flips = 0;
        let act = noisy(controller.as_mut(), 0.1);
        let flips = pair.drive(STEPS, act, |step, cpu, gpu| {
            // A discrete event whose trigger lands within rounding of its
            // threshold (a waypoint radius, a gate plane) may go either way on
            // the two backends; such an env is re-synced from the CPU and counted.
            let (c, g) = (cpu.batch(), gpu.batch());
            let flipped: Vec<bool> = (0..N)
                .map(|i| events(c, i, ["reached", "crash"]) != events(g, i, ["reached", "crash"]))
                .collect();
            worst = worst.max(compare(id, step, &c.obs, &g.obs, dim, &flipped));
            worst = worst.max(compare(id, step, &c.reward, &g.reward, 1, &flipped));
            for i in (0..N).filter(|&i| c.has_final[i] && !flipped[i]) {
                let (cf, gf) = (c.final_obs(i).unwrap(), g.final_obs(i).unwrap());
                ends += 1;
                let crashed = c.final_infos[i].get("crash") != Some(0.0);
                crashes += usize::from(crashed);
                reached += c.final_infos[i].get("reached").unwrap_or(0.0) as usize;
                assert_eq!(
                    c.final_infos[i].get("success"),
                    g.final_infos[i].get("success")
                );
                if crashed && cf.iter().zip(gf).any(|(a, b)| !close(*a, *b, 1e-4)) {
                    // The contact was detected one physics step apart.
                    crash_flips += 1;
                    continue;
                }
                compare(id, step, cf, gf, dim, &[]);
            }
            (0..N).filter(|&i| flipped[i]).collect()
        });
        let flips = flips + crash_flips;
        eprintln!(
            "{id}: {STEPS} steps x {N} envs agree within 1e-4 (worst {worst:.1e}); {ends} episodes ended ({crashes} crashes, {reached} targets reached), {flips} threshold flips re-synced"
        );
        assert!(
            ends >= N,
            "{id}: only {ends} episodes ended: autoreset barely exercised"
        );
        assert!(
            reached > 0 || id.contains("hover"),
            "{id}: no waypoint or gate reached"
        );
        assert!(
            flips * 100 <= ends,
            "{id}: {flips} flipped events in {ends} episodes"
        );
    }
}

#[test]
fn observations_can_stay_on_the_device() {
    use proprio_core::{Kernel, KernelVecEnv};
    let entry = proprio_drones::HOVER;
    let (settings, spec) =
        family::settings::<Drones>(&entry, proprio_drones::TaskKind::Hover, &Value::Null).unwrap();
    let model = Drones::model(settings).unwrap();
    let Some(kernel) = gpu_or_skip(proprio_gpu::ChunkedGpuKernel::<DroneModel>::new(
        spec, model, 70,
    )) else {
        return;
    };
    eprintln!("adapter: {}", kernel.adapter());
    let mut venv = KernelVecEnv::new(kernel, AutoresetMode::NextStep).unwrap();
    venv.reset(Some(0), None).unwrap();
    let first = venv.batch().obs.clone();
    venv.kernel_mut().keep_obs_on_device(true);
    let hover = vec![proprio_drones::params::hover_command(); 70 * 4];
    venv.step(&hover).unwrap();
    assert_eq!(venv.batch().obs, first, "observations were not read back");
    assert!(
        venv.batch().reward.iter().all(|r| *r > 0.0),
        "rewards still are"
    );
    venv.kernel_mut().keep_obs_on_device(false);
    venv.step(&hover).unwrap();
    assert_ne!(venv.batch().obs, first);
    assert_eq!(venv.kernel().num_envs(), 70);
}
