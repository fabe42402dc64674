//! Gymnasium's three autoreset modes.

use crate::{actions_for, vec_env};
use proprio::{AutoresetMode, Error, VecEnv};

/// CartPole with "always push right" ends its episode in about 10 steps.
fn push_right(venv: &mut dyn VecEnv) {
    let ones = vec![1.0; venv.num_envs()];
    venv.step(&ones).unwrap();
}

fn step_until_done(venv: &mut dyn VecEnv, env: usize) -> usize {
    for t in 1..100 {
        push_right(venv);
        if venv.batch().done(env) {
            return t;
        }
    }
    panic!("episode of env {env} never ended");
}

#[test]
fn next_step_mode_resets_on_the_following_step() {
    let mut venv = vec_env("classic/cartpole-v1", 3, AutoresetMode::NextStep, 2);
    assert_eq!(venv.autoreset_mode(), AutoresetMode::NextStep);
    venv.reset(Some(1), None).unwrap();
    step_until_done(venv.as_mut(), 0);
    let terminal = venv.batch().obs(0).to_vec();
    assert!(venv.batch().terminated[0]);
    assert!(
        terminal[2].abs() > 0.2094,
        "terminal obs is past the angle limit: {terminal:?}"
    );
    assert!(
        venv.batch().final_obs(0).is_none(),
        "next-step mode keeps the terminal obs in obs"
    );

    // The reset step ignores the action and reports the new episode's first obs.
    push_right(venv.as_mut());
    let b = venv.batch();
    assert_eq!(
        (b.reward[0], b.terminated[0], b.truncated[0]),
        (0.0, false, false)
    );
    assert!(
        b.obs(0).iter().all(|v| v.abs() <= 0.05),
        "fresh start expected: {:?}",
        b.obs(0)
    );
    assert_ne!(b.obs(0), terminal.as_slice());
}

#[test]
fn same_step_mode_keeps_the_final_observation() {
    let mut next = vec_env("classic/cartpole-v1", 2, AutoresetMode::NextStep, 1);
    let mut same = vec_env("classic/cartpole-v1", 2, AutoresetMode::SameStep, 1);
    assert_eq!(same.autoreset_mode(), AutoresetMode::SameStep);
    next.reset(Some(4), None).unwrap();
    same.reset(Some(4), None).unwrap();
    let t = step_until_done(next.as_mut(), 0);
    for _ in 0..t {
        push_right(same.as_mut());
    }
    let (n, s) = (next.batch(), same.batch());
    assert!(s.terminated[0] && s.has_final[0]);
    assert_eq!(
        s.final_obs(0).unwrap(),
        n.obs(0),
        "final obs is the terminal obs of next-step mode"
    );
    assert_eq!(s.reward[0], 1.0);
    // obs already holds the next episode's start: the one next-step mode shows one step later.
    let fresh = s.obs(0).to_vec();
    push_right(next.as_mut());
    assert_eq!(fresh.as_slice(), next.batch().obs(0));
    // On the following step the flags clear and the final obs is gone.
    push_right(same.as_mut());
    assert!(!same.batch().has_final[0] && !same.batch().done(0));
}

#[test]
fn disabled_mode_waits_for_a_masked_reset() {
    let mut venv = vec_env("classic/cartpole-v1", 4, AutoresetMode::Disabled, 2);
    assert_eq!(venv.autoreset_mode(), AutoresetMode::Disabled);
    venv.reset(Some(2), None).unwrap();
    // Env 0 always pushes right and falls first; the others alternate and keep going.
    let mut done_at = None;
    for t in 0..100 {
        let alt = (t % 2) as f32;
        let actions = [1.0, alt, alt, alt];
        venv.step(&actions).unwrap();
        if venv.batch().done(0) {
            done_at = Some(t);
            break;
        }
    }
    assert!(done_at.is_some());
    let terminal = venv.batch().obs(0).to_vec();
    assert!(!venv.batch().done(1), "env 1 is still running");

    let err = venv.step(&[1.0, 0.0, 0.0, 0.0]).unwrap_err();
    assert!(matches!(err, Error::EpisodeOver { env: Some(0) }), "{err}");
    assert_eq!(
        venv.batch().obs(0),
        terminal.as_slice(),
        "a refused step changes nothing"
    );

    let running = venv.batch().obs(1).to_vec();
    let mask: Vec<bool> = (0..4).map(|i| venv.batch().done(i)).collect();
    venv.reset_envs(&mask, None).unwrap();
    assert_eq!(
        venv.batch().obs(1),
        running.as_slice(),
        "unmasked envs are untouched"
    );
    assert!(venv.batch().obs(0).iter().all(|v| v.abs() <= 0.05));
    assert!(!venv.batch().done(0));
    venv.step(&actions_for(venv.as_ref(), 0)).unwrap();

    let err = venv.reset_envs(&[true], None).unwrap_err();
    assert!(matches!(err, Error::Shape(_)), "{err}");
}

#[test]
fn truncation_autoresets_like_termination() {
    let mut venv = vec_env("classic/pendulum-v1", 2, AutoresetMode::NextStep, 1);
    venv.reset(Some(0), None).unwrap();
    for t in 1..=200 {
        venv.step(&[0.0, 0.0]).unwrap();
        assert_eq!(venv.batch().truncated[0], t == 200, "step {t}");
        assert!(!venv.batch().terminated[0]);
    }
    venv.step(&[0.0, 0.0]).unwrap();
    assert!(
        !venv.batch().truncated[0] && venv.batch().reward[0] == 0.0,
        "reset step"
    );
    venv.step(&[0.0, 0.0]).unwrap();
    assert!(venv.batch().reward[0] < 0.0, "the new episode runs");
}
