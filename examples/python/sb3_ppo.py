"""Stable-Baselines3 PPO on a Proprio batch, through the SB3 VecEnv adapter.

    pip install ./crates/proprio-py stable-baselines3
    python examples/python/sb3_ppo.py [--env classic/cartpole-v1] [--steps 100000]

Hyper-parameters: RL Baselines3 Zoo's tuned PPO for CartPole-v1.
"""

import argparse
import time

from stable_baselines3 import PPO
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.vec_env import VecMonitor

from proprio.sb3 import ProprioVecEnv


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="classic/cartpole-v1")
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    env = VecMonitor(ProprioVecEnv(args.env, num_envs=8))
    model = PPO(
        "MlpPolicy", env, n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20,
        ent_coef=0.0, learning_rate=lambda f: 1e-3 * f, clip_range=lambda f: 0.2 * f,
        seed=args.seed, verbose=0,
    )
    start = time.time()
    model.learn(args.steps)
    eval_env = VecMonitor(ProprioVecEnv(args.env, num_envs=1))
    eval_env.seed(args.seed + 1000)
    mean, std = evaluate_policy(model, eval_env, n_eval_episodes=20, deterministic=True)
    print(f"{args.env}: {args.steps} steps in {time.time() - start:.1f} s; "
          f"evaluation return {mean:.1f} +/- {std:.1f} over 20 episodes")


if __name__ == "__main__":
    main()
