"""One Proprio env as a ``gymnasium.Env``."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import gymnasium

from . import _native
from ._spaces import Layout, to_gym_space
from ._vector import _options_json, _seed


class Env(gymnasium.Env):
    """One Proprio env, stepped in Rust.

    Time limits are the env's own (``config={"max_episode_steps": n}``
    changes them), so it is registered without Gymnasium's ``TimeLimit``.
    ``reset(seed=s)`` plays the same episode as env 0 of a batch reset with ``s``.
    """

    metadata = {"render_modes": []}

    def __init__(self, id: str, config: dict | None = None):
        self._native = _native.NativeEnv(id, config=_options_json(config))
        self.proprio_spec: dict = json.loads(self._native.spec_json)
        self._obs_layout = Layout(self.proprio_spec["observation_space"])
        self._action_layout = Layout(self.proprio_spec["action_space"])
        self.observation_space = to_gym_space(self.proprio_spec["observation_space"])
        self.action_space = to_gym_space(self.proprio_spec["action_space"])

    def _obs(self, buffer: bytearray) -> Any:
        flat = np.frombuffer(buffer, dtype=np.float32).reshape(1, self._obs_layout.dim)
        return _first(self._obs_layout.decode(flat))

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        seed = _seed(seed)
        super().reset(seed=seed)
        flat, info = self._native.reset(seed, _options_json(options))
        return self._obs(flat), info

    def step(self, action):
        flat = self._action_layout.encode(_batch_of_one(action), 1)
        obs, reward, terminated, truncated, info = self._native.step(flat)
        return self._obs(obs), reward, terminated, truncated, info

    def snapshot(self) -> dict:
        """The env's full state (physics, episode counters, random stream) as a dict."""
        return json.loads(self._native.snapshot())

    def restore(self, state: dict) -> Any:
        """Restores ``state``; returns the observation."""
        return self._obs(self._native.restore(json.dumps(state)))


def _batch_of_one(action: Any) -> Any:
    if isinstance(action, tuple):
        return tuple(_batch_of_one(a) for a in action)
    if isinstance(action, dict):
        return {k: _batch_of_one(a) for k, a in action.items()}
    return np.asarray(action)[None, ...]


def _first(values: Any) -> Any:
    if isinstance(values, tuple):
        return tuple(_first(v) for v in values)
    if isinstance(values, dict):
        return {k: _first(v) for k, v in values.items()}
    return values[0]
