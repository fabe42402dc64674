//! Frame stacking over a registered env: each stack is the last k
//! observations of the same episode of an unwrapped twin, padded with the
//! episode's first observation; episodes restart it in both autoreset modes.

use crate::{actions_for, vec_env};
use proprio::wrappers::FrameStack;
use proprio::{AutoresetMode, Error, VecEnv};

/// The last `k` of `episode`'s observations, oldest first, the first repeated
/// while the episode is shorter than `k`.
fn last_k(episode: &[Vec<f32>], k: usize) -> Vec<f32> {
    (0..k)
        .flat_map(|j| episode[(episode.len() + j).saturating_sub(k)].clone())
        .collect()
}

#[test]
fn each_stack_is_the_last_observations_of_its_episode() {
    let (id, n, k) = ("classic/cartpole-v1", 3, 3);
    for mode in [AutoresetMode::NextStep, AutoresetMode::SameStep] {
        let mut plain = vec_env(id, n, mode, 1);
        let mut stacked = FrameStack::new(vec_env(id, n, mode, 1), k).unwrap();
        assert_eq!(stacked.spec().observation_space.flat_dim(), k * 4);
        plain.reset(Some(7), None).unwrap();
        stacked.reset(Some(7), None).unwrap();
        let mut episodes: Vec<Vec<Vec<f32>>> = (0..n)
            .map(|i| vec![plain.batch().obs(i).to_vec()])
            .collect();
        let mut restart_next = vec![false; n];
        let mut restarts = 0;
        for step in 0..300 {
            let actions = actions_for(plain.as_ref(), step);
            plain.step(&actions).unwrap();
            stacked.step(&actions).unwrap();
            let (b, s) = (plain.batch(), stacked.batch());
            for i in 0..n {
                if let Some(last) = b.final_obs(i) {
                    episodes[i].push(last.to_vec());
                    let want = last_k(&episodes[i], k);
                    assert_eq!(s.final_obs(i), Some(&want[..]), "{mode} env {i} final");
                    episodes[i] = vec![b.obs(i).to_vec()];
                    restarts += 1;
                } else if restart_next[i] {
                    episodes[i] = vec![b.obs(i).to_vec()];
                    restarts += 1;
                } else {
                    episodes[i].push(b.obs(i).to_vec());
                }
                restart_next[i] = mode == AutoresetMode::NextStep && b.done(i);
                assert_eq!(
                    s.obs(i),
                    &last_k(&episodes[i], k)[..],
                    "{mode} env {i} step {step}"
                );
                assert_eq!((s.reward[i], s.done(i)), (b.reward[i], b.done(i)));
            }
        }
        assert!(restarts >= 5, "{mode}: only {restarts} episodes ended");
    }
}

#[test]
fn a_reset_env_and_a_restored_env_restart_their_stacks() {
    let mut stacked = FrameStack::new(
        vec_env("classic/pendulum-v1", 2, AutoresetMode::Disabled, 1),
        4,
    )
    .unwrap();
    stacked.reset(Some(3), None).unwrap();
    let start = stacked.snapshot(0).unwrap();
    for step in 0..5 {
        let actions = actions_for(&stacked, step);
        stacked.step(&actions).unwrap();
    }
    let repeated = |s: &FrameStack<_>, i: usize| {
        let row = s.batch().obs(i);
        row.chunks_exact(3).all(|frame| frame == &row[..3])
    };
    assert!(!repeated(&stacked, 0) && !repeated(&stacked, 1));
    stacked.reset_envs(&[false, true], None).unwrap();
    assert!(!repeated(&stacked, 0) && repeated(&stacked, 1));
    stacked.restore(&start, &[0]).unwrap();
    assert!(repeated(&stacked, 0));
}

#[test]
fn zero_frames_is_a_clear_error() {
    let inner = vec_env("classic/cartpole-v1", 1, AutoresetMode::NextStep, 1);
    assert!(matches!(FrameStack::new(inner, 0), Err(Error::Options(_))));
}
