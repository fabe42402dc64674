//! Bad input is a typed error with a clear message — never a panic or a NaN.

use crate::vec_env;
use proprio::serde_json::{Value, json};
use proprio::{ActionError, AutoresetMode, Error};

fn cartpole() -> Box<dyn proprio::Env> {
    let mut env = proprio::make("classic/cartpole-v1", &Value::Null).unwrap();
    env.reset(Some(0), None).unwrap();
    env
}

#[test]
fn nan_action_is_rejected_and_leaves_the_state_unchanged() {
    let mut env = proprio::make("classic/pendulum-v1", &Value::Null).unwrap();
    env.reset(Some(0), None).unwrap();
    let before = env.snapshot().unwrap();
    let err = env.step(&[f32::NAN]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidAction {
                reason: ActionError::NonFinite { index: 0, .. },
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "invalid action: component 0 is NaN, which is not a finite number"
    );
    assert_eq!(env.snapshot().unwrap(), before);
    assert!(env.step(&[f32::INFINITY]).is_err());
    assert!(env.step(&[0.5]).unwrap().obs.iter().all(|v| v.is_finite()));
}

#[test]
fn wrong_length_is_rejected() {
    let err = cartpole().step(&[1.0, 0.0]).unwrap_err();
    assert!(matches!(
        err,
        Error::InvalidAction {
            reason: ActionError::Length {
                expected: 1,
                got: 2
            },
            ..
        }
    ));
    assert!(cartpole().step(&[]).is_err());
}

#[test]
fn out_of_range_or_fractional_discrete_is_rejected() {
    let err = cartpole().step(&[2.0]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid action: component 0 is 2, outside the valid range 0..=1"
    );
    assert!(matches!(
        cartpole().step(&[-1.0]).unwrap_err(),
        Error::InvalidAction {
            reason: ActionError::OutOfRange { .. },
            ..
        }
    ));
    assert!(matches!(
        cartpole().step(&[0.5]).unwrap_err(),
        Error::InvalidAction {
            reason: ActionError::NotInteger { .. },
            ..
        }
    ));
}

#[test]
fn a_bad_action_in_a_batch_names_the_env_and_moves_none() {
    let mut venv = vec_env("classic/cartpole-v1", 6, AutoresetMode::NextStep, 2);
    venv.reset(Some(0), None).unwrap();
    let before = venv.batch().obs.clone();
    let err = venv.step(&[1.0, 0.0, 1.0, 0.0, 1.0, 7.0]).unwrap_err();
    assert!(
        matches!(err, Error::InvalidAction { env: Some(5), .. }),
        "{err:?}"
    );
    assert!(
        err.to_string().starts_with("invalid action for env 5:"),
        "{err}"
    );
    assert_eq!(
        venv.batch().obs,
        before,
        "no env may move when the batch is rejected"
    );
    let err = venv.step(&[1.0; 5]).unwrap_err();
    assert!(matches!(err, Error::Shape(_)), "{err:?}");
}

#[test]
fn stepping_before_reset_or_after_the_end_is_an_error() {
    let mut env = proprio::make("classic/cartpole-v1", &Value::Null).unwrap();
    assert!(matches!(
        env.step(&[1.0]).unwrap_err(),
        Error::NotReset { .. }
    ));
    env.reset(Some(0), None).unwrap();
    while !env.step(&[1.0]).unwrap().terminated {}
    assert!(matches!(
        env.step(&[1.0]).unwrap_err(),
        Error::EpisodeOver { .. }
    ));

    let mut env = proprio::make("classic/pendulum-v1", &json!({"max_episode_steps": 3})).unwrap();
    env.reset(Some(0), None).unwrap();
    for _ in 0..3 {
        env.step(&[0.0]).unwrap();
    }
    assert!(matches!(
        env.step(&[0.0]).unwrap_err(),
        Error::EpisodeOver { .. }
    ));
    let mut venv = vec_env("classic/cartpole-v1", 2, AutoresetMode::NextStep, 1);
    assert!(matches!(
        venv.step(&[1.0, 1.0]).unwrap_err(),
        Error::NotReset { env: Some(0) }
    ));
}

#[test]
fn registry_errors_are_clear() {
    let err = proprio::make("classic/cartpol-v1", &Value::Null)
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "unknown environment 'classic/cartpol-v1' (did you mean 'classic/cartpole-v1'?)"
    );
    let err = proprio::make("nothing/like-this", &Value::Null)
        .err()
        .unwrap();
    assert!(err.to_string().contains("`proprio list`"), "{err}");
    let err = proprio::make("classic/pendulum-v1", &json!({"g": "strong"}))
        .err()
        .unwrap();
    assert!(matches!(err, Error::Config { .. }), "{err:?}");
    let err = proprio::make("classic/pendulum-v1", &json!({"max_episode_steps": 0}))
        .err()
        .unwrap();
    assert!(err.to_string().contains("positive integer"), "{err}");
    let err = proprio::make("classic/pendulum-v1", &json!([1, 2]))
        .err()
        .unwrap();
    assert!(err.to_string().contains("JSON object"), "{err}");
    let options = proprio::VecOptions::default();
    assert!(proprio::make_vec("classic/pendulum-v1", 0, &Value::Null, options).is_err());
}

#[test]
fn a_gpu_backend_is_refused_clearly_where_there_is_none() {
    let options = proprio::VecOptions {
        backend: proprio::Backend::Gpu,
        ..proprio::VecOptions::default()
    };
    let err = proprio::make_vec(
        "classic/cartpole-v1",
        4,
        &proprio::serde_json::Value::Null,
        options,
    )
    .err()
    .unwrap();
    assert_eq!(
        err.to_string(),
        "classic/cartpole-v1 runs on the cpu backend only"
    );
}

#[test]
fn a_state_that_overflows_the_observation_is_refused_and_changes_nothing() {
    let mut env = proprio::make("classic/pendulum-v1", &Value::Null).unwrap();
    env.reset(Some(0), None).unwrap();
    let before = env.snapshot().unwrap();
    let huge: proprio::State =
        proprio::serde_json::from_value(json!({ "state": [0.0, 1e300] })).unwrap();
    let mut obs = vec![0.0; 3];
    let err = env.restore(&huge, &mut obs).unwrap_err();
    assert!(
        matches!(err, Error::State(_)) && err.to_string().contains("not finite"),
        "{err}"
    );
    assert_eq!(env.snapshot().unwrap(), before);
    assert!(obs.iter().all(|v| v.is_finite()), "{obs:?}");
}
