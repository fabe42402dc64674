"""Every Proprio env registered with Gymnasium, for ``gymnasium.make`` and ``make_vec``."""

from __future__ import annotations

import gymnasium

from ._native import env_ids

PREFIX = "proprio-"


def gym_id(id: str) -> str:
    """The Gymnasium id of a Proprio id: ``classic/cartpole-v1`` -> ``proprio-classic/cartpole-v1``."""
    return PREFIX + id


def proprio_id(gym_id: str) -> str:
    """The Proprio id of a Gymnasium id (the inverse of :func:`gym_id`)."""
    if not gym_id.startswith(PREFIX):
        raise ValueError(f"{gym_id!r} is not a Proprio Gymnasium id (they start with {PREFIX!r})")
    return gym_id[len(PREFIX):]


def _make_env(proprio_id: str):
    def make(config: dict | None = None, **kwargs):
        from ._env import Env

        kwargs.pop("render_mode", None)
        if kwargs:
            raise TypeError(f"unexpected keyword argument(s) {sorted(kwargs)}; env settings go in config={{...}}")
        return Env(proprio_id, config)

    return make


def _make_vec(proprio_id: str):
    def make_vec(num_envs: int = 1, **kwargs):
        from ._vector import VectorEnv

        kwargs.pop("render_mode", None)
        return VectorEnv(proprio_id, num_envs, **kwargs)

    return make_vec


def register_envs() -> None:
    """Registers every Proprio env with Gymnasium (done on ``import proprio``)."""
    for id in env_ids():
        name = gym_id(id)
        if name in gymnasium.registry:
            continue
        gymnasium.register(
            id=name,
            entry_point=_make_env(id),
            vector_entry_point=_make_vec(id),
        )
