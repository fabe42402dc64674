"""The three Gymnasium 1.x autoreset modes, checked against one env stepped by hand."""

from __future__ import annotations

import numpy as np
import pytest

import proprio
from proprio import AutoresetMode

ID = "classic/pendulum-v1"
LIMIT = 4  # episodes end by time limit every 4 steps, in every env at once
CONFIG = {"max_episode_steps": LIMIT}


def zero_actions(n):
    return np.zeros((n, 1), dtype=np.float32)


def reference_episodes(seed, env_index, episodes):
    """Observations of env `env_index`'s first episodes, from a batch in disabled mode."""
    envs = proprio.make_vec(ID, env_index + 1, config=CONFIG, autoreset_mode="Disabled")
    obs, _ = envs.reset(seed=seed)
    out = []
    for _ in range(episodes):
        episode = [obs[env_index].copy()]
        for _ in range(LIMIT):
            obs, *_ = envs.step(zero_actions(env_index + 1))
            episode.append(obs[env_index].copy())
        out.append(episode)
        obs, _ = envs.reset(options={"reset_mask": np.ones(env_index + 1, dtype=bool)})
    return out


def test_next_step():
    envs = proprio.make_vec(ID, 2, config=CONFIG, autoreset_mode=AutoresetMode.NEXT_STEP)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    ref = reference_episodes(7, 1, 2)
    obs, _ = envs.reset(seed=7)
    np.testing.assert_array_equal(obs[1], ref[0][0])
    for t in range(1, LIMIT + 1):
        obs, reward, terminated, truncated, _ = envs.step(zero_actions(2))
        np.testing.assert_array_equal(obs[1], ref[0][t])
    assert truncated.all() and not terminated.any()
    # The next step resets: first observation, reward 0, both flags false.
    obs, reward, terminated, truncated, _ = envs.step(zero_actions(2))
    np.testing.assert_array_equal(obs[1], ref[1][0])
    assert (reward == 0).all() and not truncated.any() and not terminated.any()
    obs, *_ = envs.step(zero_actions(2))
    np.testing.assert_array_equal(obs[1], ref[1][1])


def test_same_step():
    envs = proprio.make_vec(ID, 2, config=CONFIG, autoreset_mode="SameStep")
    ref = reference_episodes(7, 1, 2)
    envs.reset(seed=7)
    for _ in range(LIMIT - 1):
        _, _, _, _, info = envs.step(zero_actions(2))
        assert "final_obs" not in info
    obs, reward, terminated, truncated, info = envs.step(zero_actions(2))
    assert truncated.all() and (reward != 0).all()
    # obs already holds the next episode; the last one is in final_obs.
    np.testing.assert_array_equal(obs[1], ref[1][0])
    assert info["_final_obs"].tolist() == [True, True]
    np.testing.assert_array_equal(info["final_obs"][1], ref[0][LIMIT])
    assert info["_final_info"].tolist() == [True, True]
    assert isinstance(info["final_info"], dict)


def test_disabled_reset_mask():
    envs = proprio.make_vec(ID, 3, config=CONFIG, autoreset_mode="Disabled")
    envs.reset(seed=1)
    for _ in range(LIMIT):
        obs, _, _, truncated, _ = envs.step(zero_actions(3))
    assert truncated.all()
    # Stepping a finished env before resetting it is an error, not a silent reset.
    with pytest.raises(RuntimeError, match="episode has ended"):
        envs.step(zero_actions(3))
    mask = np.array([True, False, True])
    reset_obs, _ = envs.reset(options={"reset_mask": mask})
    np.testing.assert_array_equal(reset_obs[1], obs[1])  # untouched
    assert not np.array_equal(reset_obs[0], obs[0])
    with pytest.raises(RuntimeError, match="env 1"):
        envs.step(zero_actions(3))
    with pytest.raises(TypeError, match="dtype bool"):
        envs.reset(options={"reset_mask": np.array([1, 0, 1])})
    with pytest.raises(ValueError, match="shape"):
        envs.reset(options={"reset_mask": np.array([True, False])})
    with pytest.raises(ValueError, match="takes no seed"):
        envs.reset(seed=3, options={"reset_mask": mask})
