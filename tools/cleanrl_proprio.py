#!/usr/bin/env python3
"""Runs an unmodified CleanRL script on a Proprio env through the Python bindings.

    cleanrl_proprio.py SCRIPT ENV CONFIG_JSON [CleanRL arguments...]

registers ENV (with its config) as the Gymnasium id `ProprioBench-v0`, then
runs SCRIPT as `__main__` with `--env-id ProprioBench-v0` and the remaining
arguments: CleanRL's own loop, wrappers and SyncVectorEnv around one
`proprio.Env` per env. CleanRL targets Gymnasium 0.29, whose
TransformObservation took no observation space; Gymnasium 1.x (which the
bindings need) asks for one, so it is given the env's. Nothing else changes.
"""
import json
import runpy
import sys

import gymnasium as gym

import proprio


def main():
    script, env_id, config = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    gym.register("ProprioBench-v0", entry_point=lambda **_: proprio.make(env_id, config))
    base = gym.wrappers.TransformObservation

    class TransformObservation(base):
        def __init__(self, env, func, observation_space=None):
            super().__init__(env, func, observation_space or env.observation_space)

    gym.wrappers.TransformObservation = TransformObservation
    sys.argv = [script, "--env-id", "ProprioBench-v0", *sys.argv[4:]]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
