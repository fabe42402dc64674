"""Scale-out on Ray: remote actors each host a Proprio batch; the learner
broadcasts one policy's weights to all of them every iteration.

    pip install ./crates/proprio-py "ray[default]"
    python examples/python/ray_rollouts.py --workers 2            # a local Ray cluster
    ray start --head                                              # or a real cluster:
    ray start --address HEAD_IP:6379                              #   on every other node
    python examples/python/ray_rollouts.py --address auto --workers 16

Each iteration the learner puts the weights in Ray's object store once
(`ray.put`), every worker steps its `num_envs` envs for `--steps` steps with
them and returns its batch, and the learner takes one REINFORCE step (softmax
policy on a linear layer, normalised return-to-go less a running baseline, in
numpy, so workers need nothing but proprio and numpy): a deliberately small
learner, there to show the data flow; docs/benchmarks.md has its curve.
samples/s counts env steps of all workers per second of wall-clock, learner
included.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import ray

import proprio


def policy_probs(weights: np.ndarray, obs: np.ndarray) -> np.ndarray:
    logits = np.concatenate([obs, np.ones((len(obs), 1), obs.dtype)], axis=1) @ weights
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    return p / p.sum(axis=1, keepdims=True)


@ray.remote
class RolloutWorker:
    """One Proprio batch in its own process (on any node of the cluster)."""

    def __init__(self, env_id: str, num_envs: int, seed: int, threads: int):
        # Same-step autoreset: each step's outcome belongs to the observation it acted on.
        self.envs = proprio.make_vec(env_id, num_envs, threads=threads, autoreset_mode="SameStep")
        self.obs, _ = self.envs.reset(seed=seed)
        self.rng = np.random.default_rng(seed)
        self.returns = np.zeros(num_envs)
        self.finished: list[float] = []

    def rollout(self, weights: np.ndarray, steps: int) -> dict:
        n = self.envs.num_envs
        obs = np.empty((steps, n, self.obs.shape[1]), np.float32)
        actions = np.empty((steps, n), np.int64)
        rewards = np.empty((steps, n), np.float32)
        dones = np.empty((steps, n), bool)
        for t in range(steps):
            p = policy_probs(weights, self.obs)
            a = (self.rng.random((n, 1)) > np.cumsum(p, axis=1)).sum(axis=1)
            obs[t], actions[t] = self.obs, a
            self.obs, rewards[t], terminated, truncated, _ = self.envs.step(a)
            dones[t] = terminated | truncated
            self.returns += rewards[t]
            self.finished += self.returns[dones[t]].tolist()
            self.returns[dones[t]] = 0.0
        finished, self.finished = self.finished, []
        return {"obs": obs, "actions": actions, "rewards": rewards, "dones": dones, "episodes": finished}


def reinforce_gradient(weights, batch, gamma, baseline):
    """Gradient of the mean log-likelihood weighted by the normalised return-to-go minus the baseline."""
    rewards, dones = batch["rewards"], batch["dones"]
    to_go = np.zeros_like(rewards)
    running = np.zeros(rewards.shape[1], np.float32)
    for t in reversed(range(len(rewards))):
        running = rewards[t] + gamma * running * ~dones[t]
        to_go[t] = running
    obs = batch["obs"].reshape(-1, batch["obs"].shape[-1])
    actions = batch["actions"].reshape(-1)
    advantage = to_go.reshape(-1) - baseline
    advantage /= advantage.std() + 1e-8
    x = np.concatenate([obs, np.ones((len(obs), 1), obs.dtype)], axis=1)
    grad_logits = -policy_probs(weights, obs)
    grad_logits[np.arange(len(actions)), actions] += 1.0
    return x.T @ (grad_logits * advantage[:, None]) / len(obs), float(to_go.mean())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="classic/cartpole-v1")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--num-envs", type=int, default=64, help="envs per worker")
    parser.add_argument("--steps", type=int, default=200, help="steps per worker per iteration")
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--lr", type=float, default=3.0)
    parser.add_argument("--address", default=None, help="a running cluster (e.g. auto); default: start one here")
    parser.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local cluster")
    args = parser.parse_args()

    ray.init(address=args.address, num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    workers = [RolloutWorker.remote(args.env, args.num_envs, seed, 1) for seed in range(args.workers)]
    probe = proprio.make_vec(args.env, 1)
    weights = np.zeros((probe.single_observation_space.shape[0] + 1, probe.single_action_space.n))
    baseline, recent = 0.0, []
    ray.get([w.rollout.remote(weights, 1) for w in workers])  # start-up excluded from the timing
    start, samples = time.time(), 0
    for iteration in range(1, args.iterations + 1):
        shared = ray.put(weights)  # one copy in the object store, read by every worker
        batches = ray.get([w.rollout.remote(shared, args.steps) for w in workers])
        for batch in batches:
            grad, mean_to_go = reinforce_gradient(weights, batch, 0.99, baseline)
            weights += args.lr * grad / len(batches)
            baseline = 0.9 * baseline + 0.1 * mean_to_go
            recent = (recent + batch["episodes"])[-100:]
            samples += batch["rewards"].size
        if iteration % 10 == 0 or iteration == args.iterations:
            print(f"iteration {iteration}: mean return of the last {len(recent)} episodes "
                  f"{np.mean(recent) if recent else float('nan'):.1f}, "
                  f"{samples / (time.time() - start):,.0f} samples/s")
    print(f"{args.workers} worker(s) x {args.num_envs} envs: {samples:,} samples in "
          f"{time.time() - start:.1f} s = {samples / (time.time() - start):,.0f} samples/s; "
          f"final mean return {np.mean(recent):.1f}")
    ray.shutdown()


if __name__ == "__main__":
    main()
