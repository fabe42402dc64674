//! The scripted cascaded controller flies every task: the physics is flyable.

use proprio_core::serde_json::{Value, json};
use proprio_core::{AutoresetMode, Registry, VecEnv, VecOptions};

fn registry() -> Registry {
    Registry::with(proprio_drones::register)
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
    let mut result = vec![(false, 0.0, 0.0); n];
    proprio_core::first_episodes(venv.as_mut(), controller.as_mut(), 2024, |i, _, last| {
        if let Some(info) = last {
            result[i] = (
                info.get("success") == Some(1.0),
                info.get("distance").unwrap(),
                info.get("crash").unwrap(),
            );
        }
    })
    .unwrap();
    result
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
