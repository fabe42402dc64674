"""Frames per second of Gymnasium's own renderers, for tools/bench_render_vs_gym.sh.

usage: gym_render_bench.py ENV_ID FRAMES [WIDTH HEIGHT]

One env, random actions, one `render()` per step (rgb_array); prints one JSON
line with the frames per second of step + render and of render alone, and the
image shape. CartPole's pygame renderer has a fixed 600x400 canvas; MuJoCo's
takes WIDTH and HEIGHT (MUJOCO_GL=egl uses Mesa's llvmpipe without a GPU).
"""
import json
import sys
import time

import gymnasium as gym

env_id, frames = sys.argv[1], int(sys.argv[2])
kwargs = {"render_mode": "rgb_array"}
if len(sys.argv) > 4:
    kwargs.update(width=int(sys.argv[3]), height=int(sys.argv[4]))
env = gym.make(env_id, **kwargs)
env.reset(seed=0)
env.action_space.seed(0)
for _ in range(10):
    env.step(env.action_space.sample())
    env.render()
render_time = 0.0
start = time.perf_counter()
for _ in range(frames):
    _, _, terminated, truncated, _ = env.step(env.action_space.sample())
    if terminated or truncated:
        env.reset()
    t = time.perf_counter()
    image = env.render()
    render_time += time.perf_counter() - t
total = time.perf_counter() - start
print(json.dumps({
    "env": env_id,
    "shape": list(image.shape),
    "frames_per_s": frames / total,
    "render_only_frames_per_s": frames / render_time,
}))
