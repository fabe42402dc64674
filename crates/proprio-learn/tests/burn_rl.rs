//! Proprio envs through burn-rl's `Environment` trait.

use burn::rl::Environment;
use proprio::serde_json::Value;
use proprio_learn::BurnRlEnv;

#[test]
fn a_proprio_env_runs_as_a_burn_rl_environment() {
    let env = proprio::make("classic/cartpole-v1", &Value::Null).unwrap();
    let mut burn_env = BurnRlEnv::<500>::new(env, 3).unwrap();
    assert_eq!(<BurnRlEnv<500> as Environment>::MAX_STEPS, 500);
    let start = burn_env.state();
    assert_eq!(start.len(), 4);
    let mut steps = 0;
    loop {
        let result = burn_env.step(vec![1.0]);
        steps += 1;
        assert_eq!(result.reward, 1.0);
        if result.done {
            break;
        }
    }
    assert!(steps < 50, "pushing right topples the pole");
    burn_env.reset();
    assert_ne!(
        burn_env.state(),
        start,
        "the next episode has its own start"
    );
    let result = burn_env.step(vec![7.0]);
    assert!(result.done && result.reward == 0.0);
    assert!(
        burn_env
            .last_error()
            .unwrap()
            .to_string()
            .contains("outside the valid range")
    );
}
