"""Gymnasium's own checkers and registration, on every registered env."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import proprio

IDS = proprio.env_ids()


def test_every_family_is_exposed():
    families = {id.split("/")[0] for id in IDS}
    assert {"classic", "drones", "manipulation", "driving", "language"} <= families


@pytest.mark.parametrize("id", IDS)
def test_check_env(id):
    env = proprio.make(id)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a checker warning is a failure, but for
        # unbounded Box observations and Pendulum's [-2, 2] torque, which
        # Gymnasium's own MuJoCo envs and Pendulum-v1 warn about too.
        warnings.filterwarnings("ignore", message=".*(minimum|maximum) value is -?infinity")
        warnings.filterwarnings("ignore", message=".*symmetric and normalized space")
        check_env(env, skip_render_check=True)


@pytest.mark.parametrize("id", IDS)
def test_vector_env_spaces_and_outputs(id):
    envs = proprio.make_vec(id, num_envs=3, threads=1)
    assert envs.observation_space == gym.vector.utils.batch_space(envs.single_observation_space, 3)
    obs, info = envs.reset(seed=5)
    assert envs.observation_space.contains(obs), id
    assert isinstance(info, dict)
    envs.action_space.seed(0)
    for _ in range(5):
        obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())
        assert envs.observation_space.contains(obs), id
        assert reward.shape == (3,) and reward.dtype == np.float32
        assert np.all(np.isfinite(reward))
        assert terminated.shape == truncated.shape == (3,)
        assert terminated.dtype == truncated.dtype == np.bool_
        for key, value in info.items():
            assert value.shape[0] == 3, key
    envs.close()


def test_gymnasium_make_and_make_vec():
    env = gym.make("proprio-classic/cartpole-v1")
    obs, _ = env.reset(seed=0)
    assert obs.shape == (4,)
    assert env.unwrapped.proprio_spec["id"] == "classic/cartpole-v1"
    envs = gym.make_vec("proprio-classic/cartpole-v1", num_envs=4, vectorization_mode="vector_entry_point")
    obs, _ = envs.reset(seed=0)
    assert obs.shape == (4, 4)
    # Config reaches the env: a shorter time limit truncates sooner.
    env = gym.make("proprio-classic/pendulum-v1", config={"max_episode_steps": 3})
    env.reset(seed=0)
    truncated = [env.step(np.zeros(1, dtype=np.float32))[3] for _ in range(3)]
    assert truncated == [False, False, True]


def test_ids_round_trip():
    for id in IDS:
        assert proprio.proprio_id(proprio.gym_id(id)) == id
        assert gym.spec(proprio.gym_id(id)) is not None


def test_single_env_matches_env_zero_of_a_batch():
    env = proprio.make("drones/hover-v0")
    envs = proprio.make_vec("drones/hover-v0", num_envs=2)
    obs, _ = env.reset(seed=11)
    batch, _ = envs.reset(seed=11)
    np.testing.assert_array_equal(obs, batch[0])
    action = np.full(4, 0.1, dtype=np.float32)
    for _ in range(20):
        obs, reward, *_ = env.step(action)
        batch, rewards, *_ = envs.step(np.stack([action, action]))
        np.testing.assert_array_equal(obs, batch[0])
        assert reward == pytest.approx(float(rewards[0]), rel=1e-6)


def test_structured_spaces_decode():
    # The language tasks' token observations and discrete actions.
    envs = proprio.make_vec("language/guess-number-v0", num_envs=2)
    obs, _ = envs.reset(seed=0)
    assert envs.single_observation_space.contains(obs[0])
    assert obs.dtype == np.int64


def test_frame_stack_of_states():
    envs = proprio.make_vec("classic/cartpole-v1", 2, frame_stack=3)
    assert len(envs.single_observation_space) == 3  # a Tuple of the 3 latest, oldest first
    obs, _ = envs.reset(seed=0)
    assert envs.observation_space.contains(obs)
    first = proprio.make_vec("classic/cartpole-v1", 2).reset(seed=0)[0]
    np.testing.assert_array_equal(obs[-1], first)
