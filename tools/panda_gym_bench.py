"""panda-gym's PandaPickAndPlace-v3 (PyBullet) with random actions: env steps/s,
physics steps/s and simulated seconds per second, one JSON line. One process,
one env (panda-gym has no batched env); run one per core and sum for a machine.

    python tools/panda_gym_bench.py [STEPS]
"""

import json
import sys
import time

import gymnasium as gym
import numpy as np
import panda_gym  # noqa: F401  (registers the envs)

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
env = gym.make("PandaPickAndPlace-v3")
env.reset(seed=0)
rng = np.random.default_rng(0)
actions = rng.uniform(-1.0, 1.0, size=(256, env.action_space.shape[0])).astype(np.float32)
sim = env.unwrapped.sim
substeps = sim.n_substeps
timestep = sim.timestep
start = time.perf_counter()
for t in range(steps):
    _, _, terminated, truncated, _ = env.step(actions[t % len(actions)])
    if terminated or truncated:
        env.reset()
seconds = time.perf_counter() - start
rate = steps / seconds
print(json.dumps({
    "env": "PandaPickAndPlace-v3",
    "env_steps_per_s": rate,
    "physics_steps_per_s": rate * substeps,
    "simulated_seconds_per_s": rate * substeps * timestep,
    "substeps": substeps,
    "timestep": timestep,
}))
