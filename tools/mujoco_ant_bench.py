"""Gymnasium MuJoCo Ant-v5 throughput: N envs in one SyncVectorEnv, random actions.

Usage: python mujoco_ant_bench.py NUM_ENVS STEPS   -> prints one JSON line.
"""
import json
import sys
import time

import gymnasium as gym
import numpy as np

n, steps = int(sys.argv[1]), int(sys.argv[2])
envs = gym.make_vec("Ant-v5", num_envs=n, vectorization_mode="sync")
envs.reset(seed=0)
rng = np.random.default_rng(0)
low, high = envs.single_action_space.low, envs.single_action_space.high
actions = rng.uniform(low, high, size=(steps + 20, n, low.shape[0])).astype(np.float32)
for t in range(20):  # warm-up
    envs.step(actions[t])
start = time.perf_counter()
for t in range(20, steps + 20):
    envs.step(actions[t])
elapsed = time.perf_counter() - start
frame_skip = envs.envs[0].unwrapped.frame_skip
print(json.dumps({
    "env_steps_per_s": n * steps / elapsed,
    "physics_steps_per_s": n * steps * frame_skip / elapsed,
    "num_envs": n, "steps": steps, "frame_skip": frame_skip,
}))
