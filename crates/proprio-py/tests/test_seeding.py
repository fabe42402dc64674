"""Same seed, same episodes: across calls, thread counts, and against the Rust CLI."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import proprio


def trajectory(id, num_envs, seed, steps, threads=None):
    envs = proprio.make_vec(id, num_envs, threads=threads)
    envs.action_space.seed(123)
    obs, _ = envs.reset(seed=seed)
    out = [obs]
    for _ in range(steps):
        obs, reward, *_ = envs.step(envs.action_space.sample())
        out += [obs, reward]
    return out


@pytest.mark.parametrize("id", ["classic/cartpole-v1", "drones/hover-v0", "manipulation/reach-v0", "driving/highway-v0"])
def test_same_seed_same_trajectory_whatever_the_threads(id):
    one = trajectory(id, 32, seed=4, steps=30, threads=1)
    two = trajectory(id, 32, seed=4, steps=30, threads=2)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    other = trajectory(id, 32, seed=5, steps=30, threads=2)
    assert not np.array_equal(one[0], other[0])


def test_observations_match_proprio_rollout(proprio_cli, tmp_path):
    actions = [[1], [0], [0], [1], [1], [1], [0]]
    path = tmp_path / "actions.json"
    path.write_text(json.dumps(actions))
    out = subprocess.run(
        [proprio_cli, "rollout", "--env", "classic/cartpole-v1", "--seed", "3", "--num-envs", "3",
         "--actions", str(path)],
        check=True, capture_output=True, text=True,
    ).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    envs = proprio.make_vec("classic/cartpole-v1", 3)
    obs, _ = envs.reset(seed=3)
    steps = [obs] + [envs.step(np.array([a[0]] * 3))[0] for a in actions]
    for row in rows:
        np.testing.assert_array_equal(steps[row["step"]][row["env"]], np.array(row["obs"], dtype=np.float32))
    assert len(rows) == 3 * (len(actions) + 1)


def test_unseeded_reset_continues_the_streams():
    envs = proprio.make_vec("classic/cartpole-v1", 2)
    first, _ = envs.reset(seed=9)
    second, _ = envs.reset()
    again, _ = envs.reset(seed=9)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, second)


def test_seed_must_be_one_int():
    envs = proprio.make_vec("classic/cartpole-v1", 2)
    with pytest.raises(TypeError, match="one seed serves the whole batch"):
        envs.reset(seed=[1, 2])
    with pytest.raises(ValueError, match="seed must lie"):
        envs.reset(seed=-1)
