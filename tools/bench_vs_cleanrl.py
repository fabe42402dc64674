#!/usr/bin/env python3
"""Proprio vs CleanRL, same hyper-parameters, same machine, one sitting.

Runs CleanRL's ppo.py (CartPole-v1), ppo_continuous_action.py,
sac_continuous_action.py and td3_continuous_action.py (Pendulum-v1) and the matching `proprio train`
commands one after another, and reports for each:
  - wall-clock of the training loop (CleanRL: global_step / SPS, its own clock,
    which starts after setup; Proprio: time_s, which starts likewise);
  - time to threshold: that clock at the first logging point (a PPO iteration;
    for SAC and TD3 a 1000-step window) whose finished training episodes average at least
    the threshold (CartPole 475, Pendulum PPO -300, Pendulum SAC -200);
  - the ratio Proprio / CleanRL.

Usage: tools/bench_vs_cleanrl.sh (makes the venv), or
  bench_vs_cleanrl.py --cleanrl DIR --python VENV/bin/python [--tasks a,b] [--seeds 1,2]
where DIR holds CleanRL's four scripts (from cleanrl/) and its cleanrl_utils/
package, which the SAC script imports (vwxyzjn/cleanrl; tested at fe8d8a03).
"""
import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TASKS = {
    # sps_step(k): the global step of CleanRL's k-th "SPS:" line (PPO: after each
    # rollout of 4×128 or 1×2048 steps; SAC: every 100 steps once learning starts at 5000).
    "cartpole-ppo": dict(script="ppo.py", gym="CartPole-v1", env="classic/cartpole-v1", algo="ppo", steps=200_000,
                         threshold=475.0, window=None, sps_step=lambda k: 512 * (k + 1)),
    "pendulum-ppo": dict(script="ppo_continuous_action.py", gym="Pendulum-v1", env="classic/pendulum-v1", algo="ppo",
                         steps=500_000, threshold=-300.0, window=None, sps_step=lambda k: 2048 * (k + 1)),
    "pendulum-sac": dict(script="sac_continuous_action.py", gym="Pendulum-v1", env="classic/pendulum-v1", algo="sac",
                         steps=25_000, threshold=-200.0, window=1000, sps_step=lambda k: 5000 + 100 * (k + 1),
                         # CleanRL's defaults, over the smaller tuned.json recipe.
                         proprio_args=["--set", "hidden=[256,256]", "--set", "learning_starts=5000"]),
    # TD3 with SAC's 5,000 random steps on both sides (CleanRL's TD3 default, 25,000, is the whole run here).
    "pendulum-td3": dict(script="td3_continuous_action.py", gym="Pendulum-v1", env="classic/pendulum-v1", algo="td3",
                         steps=25_000, threshold=-200.0, window=1000, sps_step=lambda k: 5000 + 100 * (k + 1),
                         cleanrl_args=["--learning-starts", "5000"], proprio_args=["--set", "learning_starts=5000"]),
    # Pick-cube on its tuned recipe's PPO settings (tuned.json) on both sides, with
    # CleanRL's fixed 64-64 layers and learned noise (the recipe's 128-128 and σ cap set back);
    # CleanRL steps one proprio.Env per env in its SyncVectorEnv (tools/cleanrl_proprio.py).
    # Gymnasium 1.x's SyncVectorEnv reports no final_info, so CleanRL logs no
    # episodes here: compare the training clocks (same steps), not thresholds.
    "pick-ppo": dict(script="ppo_continuous_action.py", gym=None, env="manipulation/pick-cube-v0", algo="ppo",
                     steps=320_000, threshold=0.0, window=None, sps_step=lambda k: 6400 * (k + 1),
                     config={"control": "pd_ee_delta_pos"},
                     cleanrl_args=["--num-envs", "128", "--num-steps", "50", "--num-minibatches", "16",
                                   "--update-epochs", "8", "--gamma", "0.8", "--gae-lambda", "0.9"],
                     proprio_args=["--set", "hidden=[64,64]", "--set", "log_std_final=null"]),
}


def first_crossing(points, threshold):
    """points: (time, step, mean return or None) per logging point."""
    for t, step, ret in points:
        if ret is not None and ret >= threshold:
            return t, step
    return None, None


def run_cleanrl(python, cleanrl, task, seed):
    with tempfile.TemporaryDirectory() as work:
        script = str(Path(cleanrl) / task["script"])
        if task["gym"] is None:
            runner = Path(__file__).resolve().parent / "cleanrl_proprio.py"
            cmd = [python, str(runner), script, task["env"], json.dumps(task["config"])]
        else:
            cmd = [python, script, "--env-id", task["gym"]]
        cmd += ["--total-timesteps", str(task["steps"]), "--seed", str(seed), "--no-cuda",
                *task.get("cleanrl_args", [])]
        out = subprocess.run(cmd, cwd=work, capture_output=True, text=True, check=True).stdout
    episodes, points, pending = [], [], []
    for line in out.splitlines():
        m = re.match(r"global_step=(\d+), episodic_return=\[?(-?[\d.eE+-]+)", line)
        if m:
            pending.append((int(m.group(1)), float(m.group(2))))
            continue
        m = re.match(r"SPS: (\d+)", line)
        if m:
            # The step of this SPS line: the last episode's step, or the next multiple of the window.
            sps = int(m.group(1))
            points.append((sps, list(pending)))
            pending.clear()
    # CleanRL's training clock at each print is global_step / SPS.
    rows = []
    for k, (sps, eps) in enumerate(points):
        step = task["sps_step"](k)
        rows.append((step / max(sps, 1), step, eps))
    if task["window"]:
        grouped, acc = [], []
        for t, s, eps in rows:
            acc += eps
            if s % task["window"] == 0:
                grouped.append((t, s, acc))
                acc = []
        rows = grouped
    points = [(t, s, (sum(r for _, r in e) / len(e)) if e else None) for t, s, e in rows]
    return points, rows[-1][0] if rows else float("nan")


def run_proprio(proprio, task, seed):
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "run"
        subprocess.run([proprio, "train", "--env", task["env"], "--algo", task["algo"], "--seed", str(seed),
                        "--total-steps", str(task["steps"]), "--out", str(out), "--set", "eval_every=0",
                        *task.get("proprio_args", [])],
                       check=True, capture_output=True)
        rows = [json.loads(l) for l in (out / "metrics.jsonl").read_text().splitlines()]
    points = [(r["time_s"], r["global_step"], r.get("episode_return")) for r in rows]
    return points, rows[-1]["time_s"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cleanrl", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--proprio", default="target/debug/proprio")
    p.add_argument("--tasks", default=",".join(TASKS))
    p.add_argument("--seeds", default="1")
    a = p.parse_args()
    results = []
    for name in a.tasks.split(","):
        task = TASKS[name]
        for seed in map(int, a.seeds.split(",")):
            for who, fn in (("cleanrl", lambda: run_cleanrl(a.python, a.cleanrl, task, seed)),
                            ("proprio", lambda: run_proprio(a.proprio, task, seed))):
                start = time.perf_counter()
                points, train_s = fn()
                wall = time.perf_counter() - start
                t, step = first_crossing(points, task["threshold"])
                row = dict(task=name, who=who, seed=seed, train_s=train_s, process_s=wall,
                           time_to_threshold_s=t, step_at_threshold=step, threshold=task["threshold"])
                results.append(row)
                print(json.dumps(row), flush=True)
    print("\ntask            seed  cleanrl train s  proprio train s  ratio | cleanrl to-threshold s  proprio  ratio")
    for name in a.tasks.split(","):
        for seed in map(int, a.seeds.split(",")):
            c = next(r for r in results if r["task"] == name and r["seed"] == seed and r["who"] == "cleanrl")
            q = next(r for r in results if r["task"] == name and r["seed"] == seed and r["who"] == "proprio")
            ratio = lambda x, y: f"{x / y:.3f}" if x is not None and y else "n/a"
            fmt = lambda v: f"{v:.1f}" if v is not None else "never"
            print(f"{name:15} {seed:4}  {c['train_s']:15.1f}  {q['train_s']:15.1f}  {ratio(q['train_s'], c['train_s']):>5} | "
                  f"{fmt(c['time_to_threshold_s']):>22}  {fmt(q['time_to_threshold_s']):>7}  {ratio(q['time_to_threshold_s'], c['time_to_threshold_s'])}")


if __name__ == "__main__":
    sys.exit(main())
