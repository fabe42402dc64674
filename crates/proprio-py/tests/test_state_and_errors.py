"""Snapshots, restores, and bad input reported as Python exceptions."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import proprio


def test_snapshot_restore_replays_the_same_future():
    envs = proprio.make_vec("manipulation/push-cube-v0", 3)
    envs.reset(seed=2)
    rng = np.random.default_rng(0)
    for _ in range(5):
        envs.step(rng.uniform(-1, 1, (3, 4)).astype(np.float32))
    state = pickle.loads(pickle.dumps(envs.snapshot(1)))  # plain data: picklable for Ray
    actions = [rng.uniform(-1, 1, (3, 4)).astype(np.float32) for _ in range(10)]
    future = [envs.step(a)[0][1].copy() for a in actions]
    obs = envs.restore(state, [0, 1, 2])
    assert obs.shape == (3, 49)
    for a, expected in zip(actions, future):
        # Every env restored from env 1's state, given env 1's actions, replays env 1.
        step = envs.step(np.stack([a[1]] * 3))[0]
        for i in range(3):
            np.testing.assert_array_equal(step[i], expected)


def test_single_env_snapshot():
    env = proprio.make("classic/cartpole-v1")
    env.reset(seed=0)
    state = env.snapshot()
    a = [env.step(1)[0] for _ in range(5)]
    np.testing.assert_array_equal(env.restore(state), env.restore(state))
    b = [env.step(1)[0] for _ in range(5)]
    np.testing.assert_array_equal(a, b)


def test_bad_actions_raise_and_leave_the_env_usable():
    envs = proprio.make_vec("classic/cartpole-v1", 2)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="env 1.*outside the valid range 0..=1"):
        envs.step(np.array([0, 5]))
    with pytest.raises(ValueError, match="whole numbers"):
        envs.step(np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="shape"):
        envs.step(np.array([0, 1, 1]))
    with pytest.raises(TypeError, match="numeric"):
        envs.step(np.array(["left", "right"]))
    cont = proprio.make_vec("drones/hover-v0", 2)
    cont.reset(seed=0)
    with pytest.raises(ValueError, match="not a finite number"):
        cont.step(np.array([[0, 0, 0, 0], [0, np.nan, 0, 0]], dtype=np.float32))
    # The failed calls moved nothing; the env steps on.
    obs, reward, *_ = envs.step(np.array([0, 1]))
    assert obs.shape == (2, 4) and (reward == 1).all()


def test_step_before_reset():
    with pytest.raises(RuntimeError, match="before reset"):
        proprio.make_vec("classic/cartpole-v1", 2).step(np.array([0, 1]))
    with pytest.raises(RuntimeError, match="before reset"):
        proprio.make("classic/cartpole-v1").step(0)


def test_bad_construction():
    with pytest.raises(ValueError, match="did you mean 'classic/cartpole-v1'"):
        proprio.make_vec("classic/cartpole-v2", 2)
    with pytest.raises(ValueError, match="invalid config for drones/hover-v0"):
        proprio.make_vec("drones/hover-v0", 2, config={"no_such_key": 1})
    with pytest.raises(ValueError, match="num_envs"):
        proprio.make_vec("classic/cartpole-v1", 0)
    with pytest.raises(ValueError):
        proprio.make_vec("classic/cartpole-v1", 2, autoreset_mode="sometimes")
    with pytest.raises(ValueError, match="backend"):
        proprio.make_vec("classic/cartpole-v1", 2, backend="tpu")
    with pytest.raises(ValueError, match="only apply with obs"):
        proprio.make_vec("classic/cartpole-v1", 2, image_size=32)
    with pytest.raises(ValueError, match="unknown observation mode 'infrared'"):
        proprio.make_vec("classic/cartpole-v1", 2, obs="infrared")
    with pytest.raises(ValueError, match="invalid state"):
        proprio.make_vec("classic/cartpole-v1", 2).restore({"state": "nonsense"}, [0])
