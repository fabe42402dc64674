#!/usr/bin/env python3
"""Times Gymnasium's CartPole-v1 with random actions, reset on episode end.

Two figures, each as env-steps/s:
  single: the classic single-env Python loop (env.step + action_space.sample);
  vector: Gymnasium's numpy-vectorised CartPole (gym.make_vec, "vector_entry_point").
Prints one JSON object. Used by tools/bench_vs_gymnasium.sh.
"""
import json
import sys
import time

import gymnasium as gym
import numpy as np


def single(steps):
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(1000):  # warm-up
        _, _, term, trunc, _ = env.step(env.action_space.sample())
        if term or trunc:
            env.reset()
    start = time.perf_counter()
    for _ in range(steps):
        _, _, term, trunc, _ = env.step(env.action_space.sample())
        if term or trunc:
            env.reset()
    return steps / (time.perf_counter() - start)


def vector(num_envs, steps):
    envs = gym.make_vec("CartPole-v1", num_envs=num_envs, vectorization_mode="vector_entry_point")
    envs.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(20):  # warm-up
        envs.step(rng.integers(0, 2, size=num_envs))
    start = time.perf_counter()
    for _ in range(steps):
        envs.step(rng.integers(0, 2, size=num_envs))
    return num_envs * steps / (time.perf_counter() - start)


if __name__ == "__main__":
    num_envs = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    print(json.dumps({
        "gymnasium": gym.__version__,
        "numpy": np.__version__,
        "single_env_steps_per_s": single(200_000),
        "vector_num_envs": num_envs,
        "vector_env_steps_per_s": vector(num_envs, 500),
    }))
