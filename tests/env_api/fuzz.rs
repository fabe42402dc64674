//! Property tests of the API's boundaries: random configs, action batches and
//! snapshot blobs give a typed error or run — never a panic or a NaN state.

use proprio::serde_json::{Value, json};
use proprio::{Env, VecOptions};
use proptest::prelude::*;

#[path = "../support/any_json.rs"]
mod any_json;
use any_json::any_json;

/// Steps that follow an accepted config or action batch, to reach a NaN if one hides.
const FOLLOW_UP_STEPS: usize = 5;

fn ids() -> Vec<&'static str> {
    proprio::registry().ids().collect()
}

/// A float of any class: ordinary, huge, tiny, infinite or NaN.
fn any_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        4 => -10.0f32..10.0,
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
        1 => Just(f32::MAX),
        1 => Just(-f32::MAX),
        1 => Just(f32::MIN_POSITIVE),
        1 => (0u32..6).prop_map(|k| k as f32),
    ]
}

/// Steps `env` with its own random valid actions and checks every observation is finite.
fn assert_finite_rollout(env: &mut dyn Env, seed: u64, what: &str) -> Result<(), TestCaseError> {
    let space = env.spec().action_space.clone();
    let mut rng = proprio::episode_rng(seed, 0, 0);
    let mut action = vec![0.0; space.flat_dim()];
    for _ in 0..FOLLOW_UP_STEPS {
        space.sample(&mut rng, &mut action);
        match env.step(&action) {
            Ok(step) => {
                prop_assert!(
                    step.obs.iter().all(|v| v.is_finite()) && step.reward.is_finite(),
                    "{what}: non-finite observation {:?} or reward {}",
                    step.obs,
                    step.reward
                );
                if step.terminated || step.truncated {
                    env.reset(Some(seed), None)
                        .map_err(|e| TestCaseError::fail(e.to_string()))?;
                }
            }
            Err(e) => {
                return Err(TestCaseError::fail(format!(
                    "{what}: valid action refused: {e}"
                )));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_value_for_any_config_key_is_an_error_or_a_finite_env(
        env_pick in any::<prop::sample::Index>(),
        key_pick in any::<prop::sample::Index>(),
        value in any_json(),
        seed in 0u64..1000,
    ) {
        let ids = ids();
        let id = ids[env_pick.index(ids.len())];
        let (_, defaults) = proprio::registry().entry(id).unwrap();
        let mut config = defaults.as_object().cloned().unwrap_or_default();
        let keys: Vec<String> = config.keys().cloned().chain(["max_episode_steps".into()]).collect();
        let key = keys[key_pick.index(keys.len())].clone();
        config.insert(key.clone(), value.clone());
        let what = format!("{id} with {key} = {value}");
        if let Ok(mut env) = proprio::make(id, &Value::Object(config)) {
            match env.reset(Some(seed), None) {
                Ok((obs, _)) => {
                    prop_assert!(obs.iter().all(|v| v.is_finite()), "{what}: reset gave {obs:?}");
                    assert_finite_rollout(env.as_mut(), seed, &what)?;
                }
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }
    }

    #[test]
    fn any_action_batch_is_an_error_or_a_finite_step(
        env_pick in any::<prop::sample::Index>(),
        num_envs in 1usize..5,
        actions in prop::collection::vec(any_f32(), 0..40),
        seed in 0u64..1000,
    ) {
        let ids = ids();
        let id = ids[env_pick.index(ids.len())];
        let mut venv = proprio::make_vec(id, num_envs, &Value::Null, VecOptions::default()).unwrap();
        venv.reset(Some(seed), None).unwrap();
        let before: Vec<_> = (0..num_envs).map(|i| venv.snapshot(i).unwrap()).collect();
        match venv.step(&actions) {
            Ok(()) => {
                let batch = venv.batch();
                prop_assert!(
                    batch.obs.iter().all(|v| v.is_finite()) && batch.reward.iter().all(|r| r.is_finite()),
                    "{id}: {actions:?} gave obs {:?}", batch.obs
                );
            }
            Err(e) => {
                prop_assert!(!e.to_string().is_empty());
                let after: Vec<_> = (0..num_envs).map(|i| venv.snapshot(i).unwrap()).collect();
                prop_assert_eq!(before, after, "{}: a refused batch changed the envs", id);
            }
        }
    }

    #[test]
    fn any_snapshot_blob_is_an_error_or_a_working_env(
        env_pick in any::<prop::sample::Index>(),
        other_pick in any::<prop::sample::Index>(),
        blob in any_json(),
        cut in any::<prop::sample::Index>(),
        seed in 0u64..1000,
    ) {
        let ids = ids();
        let (id, other) = (ids[env_pick.index(ids.len())], ids[other_pick.index(ids.len())]);
        let mut env = proprio::make(id, &Value::Null).unwrap();
        let (_, _) = env.reset(Some(seed), None).unwrap();
        let mut donor = proprio::make(other, &Value::Null).unwrap();
        donor.reset(Some(seed), None).unwrap();
        let foreign = proprio::serde_json::to_value(donor.snapshot().unwrap()).unwrap();
        let own = proprio::serde_json::to_string(&env.snapshot().unwrap()).unwrap();
        let truncated = &own[..cut.index(own.len())];
        let candidates = [
            json!({ "state": blob.clone() }),
            blob,
            foreign,
            proprio::serde_json::from_str(truncated).unwrap_or(Value::Null),
        ];
        let mut obs = vec![0.0; env.spec().observation_space.flat_dim()];
        for candidate in candidates {
            let Ok(state) = proprio::serde_json::from_value::<proprio::State>(candidate.clone()) else {
                continue;
            };
            if env.restore(&state, &mut obs).is_ok() {
                prop_assert!(obs.iter().all(|v| v.is_finite()), "{id}: {candidate} restored to {obs:?}");
                if env.snapshot().unwrap().phase == proprio::Phase::Running {
                    assert_finite_rollout(env.as_mut(), seed, &format!("{id} after {candidate}"))?;
                }
                env.reset(Some(seed), None).unwrap();
            }
        }
    }
}
