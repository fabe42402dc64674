"""Proprio: batched embodied-RL environments, stepped in Rust, as Gymnasium envs.

>>> import proprio
>>> envs = proprio.make_vec("classic/cartpole-v1", num_envs=8)
>>> obs, info = envs.reset(seed=0)
>>> obs.shape
(8, 4)

Every registered env is also registered with Gymnasium as
``proprio-<family>/<name>-vN`` (Gymnasium ids allow one ``/``):
``gymnasium.make("proprio-classic/cartpole-v1")``.
"""

from __future__ import annotations

from gymnasium.vector import AutoresetMode

from ._native import __version__, env_ids
from ._env import Env
from ._vector import VectorEnv
from ._registration import gym_id, proprio_id, register_envs

__all__ = [
    "AutoresetMode",
    "Env",
    "VectorEnv",
    "__version__",
    "env_ids",
    "gym_id",
    "make",
    "make_vec",
    "proprio_id",
]


def make(id: str, config: dict | None = None) -> Env:
    """One env (Gymnasium's ``make``); ``config`` holds the env's config keys."""
    return Env(id, config)


def make_vec(id: str, num_envs: int, **options) -> VectorEnv:
    """``num_envs`` envs stepped as one batch (Gymnasium's ``make_vec``);
    ``options`` are :class:`VectorEnv`'s (``config``, ``autoreset_mode``,
    ``threads``, ``backend``, ``obs``, ``image_size``, ``camera``, ``frame_stack``)."""
    return VectorEnv(id, num_envs, **options)


register_envs()
