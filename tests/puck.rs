//! The example family (`examples/puck/`): a third party's model and its WGSL
//! twin agree, its physics is Newton's, and it plugs into the registry like
//! any family (config errors, scripted agent, the GPU dispatch).

#[path = "../examples/puck/family.rs"]
mod family;

use proprio_core::parity::{Pair, close, noisy};
use proprio_core::serde_json::{Value, json};
use proprio_core::{ActMode, Batch, Registry, VecOptions};

fn registry() -> Registry {
    Registry::with(family::register)
}

#[test]
fn a_constant_push_without_friction_moves_the_puck_as_newton_says() {
    let mut env = registry()
        .make(
            "puck/slide-v0",
            &json!({"friction": 0.0, "physics_hz": 1000}),
        )
        .unwrap();
    let (obs, _) = env.reset(Some(1), None).unwrap();
    let (x0, v0) = (obs[0], obs[1]);
    assert_eq!(v0, 0.0, "episodes start at rest");
    // 10 control steps of 50 ms at a = 2 N / 0.5 kg = 4 m/s².
    let mut x = x0;
    for _ in 0..10 {
        let step = env.step(&[1.0]).unwrap();
        x = step.obs[0];
        if step.terminated {
            break;
        }
    }
    let t = 0.5f32;
    let exact = x0 + 0.5 * 4.0 * t * t;
    // Semi-implicit Euler overshoots ½at² by ½a·t·dt = 1 mm at dt = 1 ms.
    assert!(
        (x - exact - 0.5 * 4.0 * t * 1e-3).abs() < 1e-4,
        "x {x}, ½at² gives {exact}"
    );
}

#[test]
fn friction_brings_a_coasting_puck_to_rest_exponentially() {
    let mut env = registry()
        .make("puck/slide-v0", &json!({"friction": 1.0}))
        .unwrap();
    env.reset(Some(2), None).unwrap();
    let v1 = env.step(&[1.0]).unwrap().obs[1];
    let mut v = v1;
    for _ in 0..10 {
        let step = env.step(&[0.0]).unwrap();
        v = step.obs[1];
        if step.terminated {
            return;
        }
    }
    // v' = −(c/m) v: after 0.5 s, v1·e^(−2·0.5), within the integrator's 1%.
    let expected = v1 * (-1.0f32).exp();
    assert!(
        (v - expected).abs() < 0.01 * v1.abs(),
        "v {v}, expected {expected}"
    );
}

#[test]
fn bad_configs_and_backends_are_clear_errors() {
    let r = registry();
    let err = r
        .make("puck/slide-v0", &json!({"friction": -1.0}))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("friction must be finite and >= 0"), "{err}");
    let err = r
        .make("puck/slide-v0", &json!({"mass": 2.0}))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("unknown field"), "{err}");
    let spec = r.spec("puck/slide-v0", &Value::Null).unwrap();
    assert_eq!(
        spec.config["physics_hz"], 100,
        "the spec spells out the defaults"
    );
}

#[test]
fn the_scripted_pusher_stops_the_puck_at_its_goal() {
    let r = registry();
    let mut venv = r
        .make_vec("puck/slide-v0", 64, &Value::Null, VecOptions::default())
        .unwrap();
    let mut agent = r.scripted("puck/slide-v0", venv.spec()).unwrap();
    let mut actions = vec![0.0; 64];
    venv.reset(Some(3), None).unwrap();
    let mut successes = 0;
    for _ in 0..100 {
        agent
            .act(&venv.batch().obs, &mut actions, ActMode::Deterministic)
            .unwrap();
        venv.step(&actions).unwrap();
        successes += venv.batch().terminated.iter().filter(|&&t| t).count();
    }
    assert!(
        successes >= 64,
        "{successes} successes in 100 steps of 64 envs"
    );
}

#[test]
fn gpu_twin_matches_the_cpu_model() {
    let Some(mut pair) = Pair::new(&registry(), "puck/slide-v0", &Value::Null, 130) else {
        return;
    };
    let mut agent = registry()
        .scripted("puck/slide-v0", pair.cpu.spec())
        .unwrap();
    let (mut ends, mut worst) = (0, 0.0f32);
    let act = noisy(agent.as_mut(), 0.5);
    let flips = pair.drive(300, act, |step, cpu, gpu| {
        let (c, g) = (cpu.batch(), gpu.batch());
        // Success within rounding of its threshold may go either way.
        let flipped: Vec<usize> = (0..130)
            .filter(|&i| c.terminated[i] != g.terminated[i])
            .collect();
        for i in (0..130).filter(|i| !flipped.contains(i)) {
            for (a, b) in c.obs(i).iter().zip(g.obs(i)) {
                worst = worst.max((a - b).abs());
                assert!(
                    close(*a, *b, 1e-5),
                    "step {step}, env {i}: cpu {a}, gpu {b}"
                );
            }
            assert!(close(c.reward[i], g.reward[i], 1e-5));
            let distance = |b: &Batch| b.infos[i].get("distance").unwrap_or(f64::NAN) as f32;
            assert!(close(distance(c), distance(g), 1e-5), "env {i}'s info");
            ends += usize::from(c.has_final[i]);
        }
        flipped
    });
    eprintln!(
        "puck: 300 steps x 130 envs agree within 1e-5 (worst {worst:.1e}); {ends} episodes ended, {flips} flips re-synced"
    );
    assert!(
        ends >= 130,
        "autoreset barely exercised: {ends} episodes ended"
    );
    assert!(flips * 100 <= ends, "{flips} flips in {ends} episodes");
}
