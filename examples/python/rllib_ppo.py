"""RLlib PPO on a Proprio env, found through its Gymnasium registration.

    pip install ./crates/proprio-py "ray[rllib]" torch
    python examples/python/rllib_ppo.py [--env proprio-classic/cartpole-v1] [--runners 2]

The env string `proprio:proprio-classic/cartpole-v1` makes Gymnasium import
`proprio` (which registers every env) in each RLlib env runner before
`gymnasium.make_vec`; `vector_entry_point` mode makes each runner step one
Proprio batch instead of a Python loop over single envs. Any other RLlib
algorithm takes the same `.environment(...)` and `.env_runners(...)` lines.
"""

import argparse
import time

import gymnasium as gym
import ray
from ray.rllib.algorithms.ppo import PPOConfig


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="proprio-classic/cartpole-v1", help="a Gymnasium id of a Proprio env")
    parser.add_argument("--runners", type=int, default=2, help="RLlib env runners (remote actors)")
    parser.add_argument("--envs-per-runner", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--address", default=None, help="a running Ray cluster (e.g. auto); default: start one here")
    args = parser.parse_args()

    ray.init(address=args.address, include_dashboard=False, log_to_driver=False)
    config = (
        PPOConfig()
        .environment(f"proprio:{args.env}")
        .env_runners(
            num_env_runners=args.runners,
            num_envs_per_env_runner=args.envs_per_runner,
            gym_env_vectorize_mode=gym.VectorizeMode.VECTOR_ENTRY_POINT,
        )
        .training(lr=3e-4, gamma=0.99, num_epochs=6, vf_loss_coeff=0.01)
    )
    algo = config.build_algo()
    start = time.time()
    for i in range(1, args.iterations + 1):
        result = algo.train()
        runners = result["env_runners"]
        print(f"iteration {i}: mean episode return {runners.get('episode_return_mean', float('nan')):.1f}, "
              f"{runners['num_env_steps_sampled_lifetime']} env steps, {time.time() - start:.0f} s")
    algo.stop()
    ray.shutdown()


if __name__ == "__main__":
    main()
