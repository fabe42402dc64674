"""The Stable-Baselines3 adapter (skipped where SB3 is not installed)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
try:  # PyTorch imports triton lazily; after lavapipe has rendered (test_pixels), that crashes (docs/python.md)
    import triton  # noqa: F401
except ImportError:
    pass

import proprio  # noqa: E402
from proprio.sb3 import ProprioVecEnv  # noqa: E402


def test_sb3_conventions():
    env = ProprioVecEnv("classic/pendulum-v1", 2, config={"max_episode_steps": 3})
    env.seed(4)
    obs = env.reset()
    reference = proprio.make_vec("classic/pendulum-v1", 2, config={"max_episode_steps": 3},
                                 autoreset_mode="SameStep")
    expected, _ = reference.reset(seed=4)
    np.testing.assert_array_equal(obs, expected)
    actions = np.zeros((2, 1), dtype=np.float32)
    for t in range(3):
        env.step_async(actions)
        obs, rewards, dones, infos = env.step_wait()
        last, *_ , info = reference.step(actions)
    assert dones.all() and len(infos) == 2
    for i in range(2):
        # SB3 autoresets within the step and keeps the last observation.
        np.testing.assert_array_equal(infos[i]["terminal_observation"], info["final_obs"][i])
        assert infos[i]["TimeLimit.truncated"] is True
    np.testing.assert_array_equal(obs, last)


def test_sb3_ppo_runs():
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor

    env = VecMonitor(ProprioVecEnv("classic/cartpole-v1", 4))
    PPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0).learn(256)
