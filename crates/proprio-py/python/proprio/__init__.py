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

from ._native import __version__, registered
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


def env_ids() -> list[str]:
    """Every registered Proprio id, e.g. ``classic/cartpole-v1``."""
    return [id for id, _, _ in registered()]


def make(id: str, config: dict | None = None) -> Env:
    """One env (Gymnasium's ``make``); ``config`` holds the env's config keys."""
    return Env(id, config)


def make_vec(
    id: str,
    num_envs: int,
    config: dict | None = None,
    autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
    threads: int | None = None,
    backend: str = "cpu",
    obs: str | None = None,
    image_size: int | None = None,
    camera: str | None = None,
    frame_stack: int | None = None,
) -> VectorEnv:
    """``num_envs`` envs stepped as one batch (Gymnasium's ``make_vec``).

    ``threads`` defaults to every core; ``backend="gpu"`` runs the envs that
    have a wgpu kernel on the GPU; ``obs`` = ``"rgb"``, ``"depth"`` or
    ``"rgb+state"`` renders pixel observations (``image_size``, ``camera``,
    ``frame_stack`` as on the command line).
    """
    return VectorEnv(
        id,
        num_envs,
        config=config,
        autoreset_mode=autoreset_mode,
        threads=threads,
        backend=backend,
        obs=obs,
        image_size=image_size,
        camera=camera,
        frame_stack=frame_stack,
    )


register_envs()
