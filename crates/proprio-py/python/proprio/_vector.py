"""A batch of Proprio envs as a Gymnasium 1.x ``VectorEnv``."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import gymnasium
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from . import _native
from ._spaces import Layout, to_gym_space

_AUTORESET = {
    AutoresetMode.NEXT_STEP: "next-step",
    AutoresetMode.SAME_STEP: "same-step",
    AutoresetMode.DISABLED: "disabled",
}


def _seed(seed: Any) -> int | None:
    """A reset seed: None, or one non-negative int (env i plays stream (seed, i))."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(
            f"seed must be an int or None, not {type(seed).__name__}: Proprio seeds env i "
            "of a batch with the stream (seed, i), so one seed serves the whole batch"
        )
    if not 0 <= int(seed) < 2**64:
        raise ValueError(f"seed must lie in 0..2**64, not {seed}")
    return int(seed)


def _options_json(options: dict | None) -> str | None:
    if options is None:
        return None
    try:
        return json.dumps(options)
    except TypeError as e:
        raise TypeError(f"reset options must be JSON-serialisable: {e}") from None


def _infos(columns: dict) -> dict:
    """Gymnasium's vector info: ``key`` -> float64 ``[N]`` and ``_key`` -> its bool mask."""
    info = {}
    for key, (values, mask) in columns.items():
        info[key] = np.frombuffer(values, dtype=np.float64)
        info[f"_{key}"] = np.frombuffer(mask, dtype=np.bool_)
    return info


def _observation_options(obs, image_size, camera, frame_stack) -> str | None:
    extra = {"image_size": image_size, "camera": camera, "frame_stack": frame_stack}
    if obs is None:
        given = [k for k in ("image_size", "camera") if extra[k] is not None]
        if given:
            raise ValueError(f"{', '.join(given)} only apply with obs='rgb', 'depth' or 'rgb+state'")
        if frame_stack is None:
            return None
        obs = "state"
    options = {"mode": obs, "image_size": 64, "camera": "default", "frame_stack": 1}
    options.update({k: v for k, v in extra.items() if v is not None})
    return json.dumps(options)


class VectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` Proprio envs stepped as one batch in Rust.

    Each call crosses into Rust once for the whole batch, which steps on CPU
    threads (or a GPU) with the GIL released. ``reset`` and ``step`` return new,
    writable arrays every call, each copied once from the batch buffer (never
    per env), so a returned array is never overwritten by a later step.
    Rewards are float32, as Proprio computes them; info values are float64.

    ``config`` holds the env's config keys; ``threads`` defaults to every core;
    ``backend="gpu"`` runs the envs that have a wgpu kernel on the GPU;
    ``obs`` = ``"rgb"``, ``"depth"`` or ``"rgb+state"`` renders pixel
    observations (``image_size``, ``camera``, ``frame_stack`` as on the
    command line).

    Seeding: ``reset(seed=s)`` starts env ``i`` on the random stream ``(s, i)``,
    the same episodes as ``proprio rollout --seed s`` and Rust's
    ``VecEnv::reset(Some(s))``; ``reset()`` starts every env's next episode.
    """

    def __init__(
        self,
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
    ):
        mode = AutoresetMode(autoreset_mode)
        if not isinstance(num_envs, (int, np.integer)) or isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, not {num_envs!r}")
        self._native = _native.NativeVecEnv(
            id,
            int(num_envs),
            config=_options_json(config),
            autoreset=_AUTORESET[mode],
            threads=threads,
            backend=backend,
            obs=_observation_options(obs, image_size, camera, frame_stack),
        )
        self.proprio_spec: dict = json.loads(self._native.spec_json)
        self.num_envs = int(num_envs)
        self.autoreset_mode = mode
        self.metadata = {"autoreset_mode": mode, "render_modes": []}
        self._obs_layout = Layout(self.proprio_spec["observation_space"])
        self._action_layout = Layout(self.proprio_spec["action_space"])
        self.single_observation_space = to_gym_space(self.proprio_spec["observation_space"])
        self.single_action_space = to_gym_space(self.proprio_spec["action_space"])
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Resets every env, or with ``options={"reset_mask": mask}`` only the masked ones."""
        seed = _seed(seed)
        super().reset(seed=seed)
        options = dict(options) if options is not None else None
        if options is not None and "reset_mask" in options:
            mask = self._reset_mask(options.pop("reset_mask"))
            if seed is not None:
                raise ValueError(
                    "a masked reset starts each masked env's next episode; it takes no seed"
                )
            flat, info = self._native.reset_envs(mask.tobytes(), _options_json(options or None))
        else:
            flat, info = self._native.reset(seed, _options_json(options))
        return self._obs(flat), _infos(info)

    def _obs(self, buffer: bytearray):
        flat = np.frombuffer(buffer, dtype=np.float32).reshape(self.num_envs, self._obs_layout.dim)
        return self._obs_layout.decode(flat)

    def _reset_mask(self, mask: Any) -> np.ndarray:
        if not isinstance(mask, np.ndarray):
            raise TypeError(f"options['reset_mask'] must be a numpy array, not {type(mask).__name__}")
        if mask.dtype != np.bool_:
            raise TypeError(f"options['reset_mask'] must have dtype bool, not {mask.dtype}")
        if mask.shape != (self.num_envs,):
            raise ValueError(f"options['reset_mask'] must have shape ({self.num_envs},), not {mask.shape}")
        return np.ascontiguousarray(mask)

    def step(self, actions):
        """Steps every env: ``(obs, rewards, terminations, truncations, infos)``."""
        flat = self._action_layout.encode(actions, self.num_envs)
        obs, reward, terminated, truncated, columns, finals = self._native.step(flat)
        info = _infos(columns) if columns else {}
        if finals is not None:
            final_flat, has_final, final_columns = finals
            has_final = np.frombuffer(has_final, dtype=np.bool_)
            final_obs = np.full(self.num_envs, None, dtype=object)
            decoded = self._obs(final_flat)
            for i in np.flatnonzero(has_final):
                final_obs[i] = _row(decoded, i)
            info["final_obs"], info["_final_obs"] = final_obs, has_final
            info["final_info"], info["_final_info"] = _infos(final_columns), has_final.copy()
        return (
            self._obs(obs),
            np.frombuffer(reward, dtype=np.float32),
            np.frombuffer(terminated, dtype=np.bool_),
            np.frombuffer(truncated, dtype=np.bool_),
            info,
        )

    def snapshot(self, env: int) -> dict:
        """Env ``env``'s full state (physics, episode counters, random stream) as a dict."""
        return json.loads(self._native.snapshot(int(env)))

    def restore(self, state: dict, envs) -> Any:
        """Restores ``state`` into each env listed in ``envs``; returns the batch's observations."""
        return self._obs(self._native.restore(json.dumps(state), [int(e) for e in envs]))

    def close_extras(self, **kwargs):
        self._native = None


def _row(values: Any, i: int) -> Any:
    """Env ``i``'s observation out of a decoded batch."""
    if isinstance(values, tuple):
        return tuple(_row(v, i) for v in values)
    if isinstance(values, dict):
        return {k: _row(v, i) for k, v in values.items()}
    return values[i].copy()
