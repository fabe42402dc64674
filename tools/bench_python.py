"""Env-steps/s from a Python loop: Proprio's bindings vs `proprio bench` (the
cost of the Python boundary) and vs EnvPool, same machine, same sitting.

Each run steps one batch from Python with numpy actions (8 batches sampled
before timing, used in turn), after a warm-up; `proprio bench
--action-batches 8` does the same in Rust. Python and Rust runs alternate,
REPEATS times each, and the best of each is kept (the machine's noise only
ever slows a run down). Run through
tools/bench_python.sh, which builds the venv; by hand:

    python tools/bench_python.py --proprio-cli target/debug/proprio [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time

import numpy as np

import proprio


def timed(step, actions, steps: int, warmup: int) -> float:
    """Seconds per batch step of `step`, cycling through `actions`."""
    for i in range(warmup):
        step(actions[i % len(actions)])
    start = time.perf_counter()
    for i in range(steps):
        step(actions[i % len(actions)])
    return (time.perf_counter() - start) / steps


def run_proprio(id: str, n: int, threads: int, steps: int) -> float:
    envs = proprio.make_vec(id, n, threads=threads)
    envs.reset(seed=0)
    envs.action_space.seed(0)
    actions = [envs.action_space.sample() for _ in range(8)]
    return n / timed(envs.step, actions, steps, warmup=50)


def run_rust(cli: str, id: str, n: int, threads: int, steps: int) -> float:
    out = subprocess.run(
        [cli, "bench", "--env", id, "--num-envs", str(n), "--threads", str(threads),
         "--steps", str(steps), "--action-batches", "8", "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)["env_steps_per_s"]


def run_envpool(task: str, n: int, threads: int, steps: int) -> float:
    import envpool

    env = envpool.make_gymnasium(task, num_envs=n, batch_size=n, num_threads=threads, seed=0)
    env.reset()
    env.action_space.seed(0)
    actions = [np.stack([env.action_space.sample() for _ in range(n)]) for _ in range(8)]
    return n / timed(env.step, actions, steps, warmup=50)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--proprio-cli", required=True, help="the proprio command, for the Rust-side figure")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--steps", type=int, default=1000, help="batch steps per run (a tenth for pick-cube)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-envpool", action="store_true")
    args = parser.parse_args()
    t = args.threads
    cases = [
        # (label, proprio id, envs, EnvPool task or None, batch steps per run)
        ("CartPole", "classic/cartpole-v1", 4096, "CartPole-v1", args.steps),
        ("hover (Crazyflie)", "drones/hover-v0", 4096, None, args.steps),
        ("pick-cube (Panda) vs Ant", "manipulation/pick-cube-v0", 256, "Ant-v4", args.steps // 10),
    ]
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"threads {t}; {time.strftime('%Y-%m-%d')}")
    print(f"{'run':<34} {'envs':>5} {'py steps/s':>12} {'rust steps/s':>13} {'boundary':>9} "
          f"{'envpool':>12} {'ratio':>6}")
    for label, id, n, task, steps in cases:
        for threads in sorted({1, t}):
            py = rust = pool = 0.0
            for _ in range(args.repeats):
                py = max(py, run_proprio(id, n, threads, steps))
                rust = max(rust, run_rust(args.proprio_cli, id, n, threads, steps))
                if task and not args.no_envpool:
                    pool = max(pool, run_envpool(task, n, threads, steps))
            boundary = 1 - py / rust
            pool_text = f"{pool:>12,.0f} {py / pool:>5.2f}x" if pool else f"{'-':>12} {'-':>6}"
            print(f"{label + f' ({threads} thr)':<34} {n:>5} {py:>12,.0f} {rust:>13,.0f} "
                  f"{boundary:>8.1%} {pool_text}")


if __name__ == "__main__":
    main()
