"""Python peers of Proprio's driving envs, random actions.

Usage:
  python highway_bench.py envpool TASK NUM_ENVS THREADS STEPS   (EnvPool's C++ port, e.g. Highway-v0)
  python highway_bench.py highway-env ID SECONDS                  (highway-env, one env, e.g. highway-fast-v0)
Prints one JSON line: env steps/s and simulated seconds per wall second.
"""
import json
import sys
import time

import numpy as np

kind = sys.argv[1]
if kind == "envpool":
    import envpool

    task, n, threads, steps = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    env = envpool.make(task, env_type="gymnasium", num_envs=n, num_threads=threads, seed=0)
    config = env.spec.config
    seconds_per_step = 1.0 / config.policy_frequency
    rng = np.random.default_rng(0)
    space = env.action_space
    if hasattr(space, "n"):
        actions = rng.integers(0, space.n, size=(steps + 20, n))
    else:
        actions = rng.uniform(-1, 1, size=(steps + 20, n) + space.shape).astype(np.float32)
    env.reset()
    for t in range(20):
        env.step(actions[t])
    start = time.perf_counter()
    for t in range(20, steps + 20):
        env.step(actions[t])
    elapsed = time.perf_counter() - start
    rate = n * steps / elapsed
else:
    import gymnasium as gym
    import highway_env  # noqa: F401  (registers the envs)

    env_id, seconds = sys.argv[2], float(sys.argv[3])
    env = gym.make(env_id)
    seconds_per_step = 1.0 / env.unwrapped.config["policy_frequency"]
    env.reset(seed=0)
    env.action_space.seed(0)
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        count += 1
        if terminated or truncated:
            env.reset()
    rate = count / (time.perf_counter() - start)
print(json.dumps({"env_steps_per_s": rate, "sim_seconds_per_s": rate * seconds_per_step}))
