#!/usr/bin/env python3
"""Records CartPole-v1 and Pendulum-v1 trajectories from Gymnasium itself.

The Rust replay tests (envs/classic/tests/gymnasium_replay.rs) restore each
episode's initial `env.unwrapped.state`, apply the same actions and require
the same observations (to 1e-5), rewards and episode flags.

Usage (makes a throwaway venv):
    python3 -m venv /tmp/gymvenv && /tmp/gymvenv/bin/pip install gymnasium
    /tmp/gymvenv/bin/python tools/gen_gymnasium_fixtures.py envs/classic/tests/fixtures
"""
import json
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np


def record(env_id, seed, policy, options=None):
    env = gym.make(env_id)
    obs, _ = env.reset(seed=seed, options=options)
    episode = {
        "seed": seed,
        "options": options,
        "initial_state": [float(v) for v in env.unwrapped.state],
        "initial_obs": [float(v) for v in obs],
        "actions": [],
        "steps": [],
    }
    rng = np.random.default_rng(seed + 1000)
    done = False
    while not done:
        action = policy(obs, rng)
        obs, reward, terminated, truncated, _ = env.step(action)
        episode["actions"].append(action.tolist() if isinstance(action, np.ndarray) else int(action))
        episode["steps"].append(
            {
                "obs": [float(v) for v in obs],
                "reward": float(reward),
                "terminated": bool(terminated),
                "truncated": bool(truncated),
            }
        )
        done = terminated or truncated
    return episode


def cartpole_random(obs, rng):
    return int(rng.integers(2))


def cartpole_balance(obs, rng):
    x, x_dot, theta, theta_dot = obs
    return int(0.1 * x + 0.5 * x_dot + 10.0 * theta + 2.0 * theta_dot > 0)


def pendulum_random(obs, rng):
    # Beyond the +-2 torque bound on purpose: Gymnasium clips, and so must we.
    return np.array([rng.uniform(-3.0, 3.0)], dtype=np.float32)


def main(out_dir):
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fixtures = {
        "cartpole-v1": [record("CartPole-v1", s, cartpole_random) for s in range(6)]
        + [record("CartPole-v1", s, cartpole_balance) for s in (10, 11)]
        + [record("CartPole-v1", 12, cartpole_random, {"low": -0.2, "high": 0.2})],
        "pendulum-v1": [record("Pendulum-v1", s, pendulum_random) for s in range(4)]
        + [record("Pendulum-v1", 9, pendulum_random, {"x_init": 0.5, "y_init": 0.2})],
    }
    for name, episodes in fixtures.items():
        doc = {"gymnasium": gym.__version__, "numpy": np.__version__, "env": name, "episodes": episodes}
        (out / f"{name}.json").write_text(json.dumps(doc))
        lengths = [len(e["steps"]) for e in episodes]
        print(f"{name}: {len(episodes)} episodes, lengths {lengths}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "envs/classic/tests/fixtures")
