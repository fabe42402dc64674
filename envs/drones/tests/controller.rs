//! The scripted cascaded controller flies every task: the physics is flyable.

use proprio_core::ActMode;
use proprio_core::serde_json::{Value, json};
use proprio_core::{AutoresetMode, Registry, VecEnv, VecOptions};

fn registry() -> Registry {
    let mut r = Registry::new();
    proprio_drones::register(&mut r);
    r
}

/// Runs `n` episodes to their end with the scripted controller; returns the final infos' (success, distance).
fn episodes(id: &str, config: Value, n: usize) -> Vec<(bool, f64, f64)> {
    let registry = registry();
    let options = VecOptions {
        autoreset: AutoresetMode::Disabled,
        threads: Some(2),
        ..VecOptions::default()
    };
    let mut venv = registry.make_vec(id, n, &config, options).unwrap();
    let mut controller = registry.scripted(id, venv.spec()).unwrap();
    venv.reset(Some(2024), None).unwrap();
    let mut actions = vec![0.0; n * 4];
    let mut result = vec![None; n];
    while result.iter().any(Option::is_none) {
        controller
            .act(&venv.batch().obs, &mut actions, ActMode::Deterministic)
            .unwrap();
        venv.step(&actions).unwrap();
        let b = venv.batch();
        let mut mask = vec![false; n];
        for i in 0..n {
            if b.done(i) {
                let info = &b.infos[i];
                result[i].get_or_insert((
                    info.get("success") == Some(1.0),
                    info.get("distance").unwrap(),
                    info.get("crash").unwrap(),
                ));
                mask[i] = true;
            }
        }
        // Finished envs start another (unrecorded) episode while the others finish.
        if mask.iter().any(|m| *m) {
            venv.reset_envs(&mask, None).unwrap();
        }
    }
    result.into_iter().map(Option::unwrap).collect()
}

fn report(id: &str, results: &[(bool, f64, f64)]) -> f64 {
    let ok = results.iter().filter(|r| r.0).count() as f64 / results.len() as f64;
    let crashes = results.iter().filter(|r| r.2 != 0.0).count();
    eprintln!("{id}: success {ok:.2}, crashes {crashes}");
    ok
}

#[test]
fn hover_from_100_random_starts_ends_within_10_cm() {
    let results = episodes("drones/hover-v0", Value::Null, 100);
    for (i, (success, distance, crash)) in results.iter().enumerate() {
        assert!(
            *success && *distance < 0.1 && *crash == 0.0,
            "episode {i}: success {success}, {distance} m from the target, crash {crash}"
        );
    }
}

#[test]
fn hover_recovers_from_upside_down_starts_with_randomised_parameters_and_wind() {
    // The baseline is a PD without integral: mass or thrust randomisation
    // would leave a steady height offset, so only the dynamics are randomised here.
    let config = json!({
        "start": {"upside_down": true, "position": 0.3},
        "target": [0.0, 0.0, 2.0],
        "randomize": {"inertia": 0.2, "torque": 0.2, "motor_tau": 0.3},
        "wind": {"speed": 0.5, "gust": 0.3},
    });
    let results = episodes("drones/hover-v0", config, 100);
    assert!(report("upside-down hover", &results) >= 0.9);
}

#[test]
fn thrust_and_rate_actions_hover_too() {
    let results = episodes("drones/hover-v0", json!({"action": "thrust_rates"}), 100);
    assert!(report("thrust_rates hover", &results) >= 0.95);
}

#[test]
fn waypoints_and_gates_are_flyable() {
    let w = episodes("drones/waypoints-v0", Value::Null, 100);
    assert!(report("waypoints", &w) >= 0.95);
    let g = episodes("drones/gates-v0", Value::Null, 100);
    assert!(report("gates", &g) >= 0.9);
}
