"""Stable-Baselines3 adapter: a Proprio batch as an SB3 ``VecEnv``.

>>> from stable_baselines3 import PPO
>>> from stable_baselines3.common.vec_env import VecMonitor
>>> from proprio.sb3 import ProprioVecEnv
>>> env = VecMonitor(ProprioVecEnv("classic/cartpole-v1", num_envs=8))
>>> PPO("MlpPolicy", env).learn(10_000)

SB3 resets finished envs within the step and keeps the last observation in
``infos[i]["terminal_observation"]``: Proprio's same-step autoreset, which
this adapter uses. Requires ``stable-baselines3`` (not a dependency of proprio).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from ._vector import VectorEnv


class ProprioVecEnv(VecEnv):
    """``num_envs`` Proprio envs behind SB3's ``VecEnv`` interface.

    ``kwargs`` go to :func:`proprio.make_vec` (``config``, ``threads``,
    ``backend``, ``obs``, ...). ``seed(s)`` makes the next reset play the
    streams ``(s, i)``, as ``proprio.make_vec(...).reset(seed=s)`` does.
    """

    def __init__(self, id: str, num_envs: int, **kwargs: Any):
        if "autoreset_mode" in kwargs:
            raise ValueError("the SB3 adapter always uses same-step autoreset, as SB3 expects")
        self.venv = VectorEnv(id, num_envs, autoreset_mode="SameStep", **kwargs)
        super().__init__(num_envs, self.venv.single_observation_space, self.venv.single_action_space)
        self._actions: np.ndarray | None = None
        self._next_seed: int | None = None

    def reset(self):
        obs, _ = self.venv.reset(seed=self._next_seed, options=self._options[0] or None)
        self._next_seed = None
        self._reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def seed(self, seed: int | None = None) -> Sequence[None | int]:
        self._next_seed = seed
        return [seed] * self.num_envs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self):
        obs, reward, terminated, truncated, info = self.venv.step(self._actions)
        dones = terminated | truncated
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        for key, values in info.items():
            if key.startswith("_") or key in ("final_obs", "final_info"):
                continue
            for i in np.flatnonzero(info[f"_{key}"]):
                infos[i][key] = float(values[i])
        if "final_obs" in info:
            final_info = info["final_info"]
            for i in np.flatnonzero(info["_final_obs"]):
                infos[i]["terminal_observation"] = info["final_obs"][i]
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
                for key, values in final_info.items():
                    if not key.startswith("_") and final_info[f"_{key}"][i]:
                        infos[i][key] = float(values[i])
        return obs, reward, dones, infos

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        value = getattr(self.venv, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        raise AttributeError(f"the envs of a Proprio batch have no settable attribute {attr_name!r}")

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        raise AttributeError(
            f"the envs of a Proprio batch are stepped in Rust and have no method {method_name!r}"
        )

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]
