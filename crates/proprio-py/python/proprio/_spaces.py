"""Proprio's spaces as Gymnasium spaces, and the flat ``f32`` layout between them.

Every Proprio space has a flat encoding of ``flat_dim`` floats; a batch holds N
of them back to back. A :class:`Layout` turns a ``[N, D]`` float32 batch into
observations shaped as the Gymnasium space says (a ``Box`` of floats is
returned as the batch itself, without a copy) and actions shaped as the space
says into the flat float32 buffer the native env reads.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from gymnasium import spaces


def _bounds(values: list) -> np.ndarray:
    return np.array([float(v) for v in values], dtype=np.float32)


def to_gym_space(desc: dict) -> spaces.Space:
    """The Gymnasium space of a Proprio space description (its JSON form)."""
    kind = desc["type"]
    if kind == "box":
        return spaces.Box(_bounds(desc["low"]), _bounds(desc["high"]), dtype=np.float32)
    if kind == "discrete":
        return spaces.Discrete(desc["n"], start=desc["start"])
    if kind == "multi_discrete":
        return spaces.MultiDiscrete(np.array(desc["nvec"], dtype=np.int64))
    if kind == "tokens":
        # Up to max_len ids in 0..vocab, id 0 padding the end.
        return spaces.MultiDiscrete(np.full(desc["max_len"], desc["vocab"], dtype=np.int64))
    if kind == "image":
        shape = (desc["height"], desc["width"], desc["channels"])
        return spaces.Box(0, 255, shape, dtype=np.uint8)
    if kind == "tuple":
        return spaces.Tuple([to_gym_space(s) for s in desc["spaces"]])
    if kind == "dict":
        return spaces.Dict({name: to_gym_space(s) for name, s in desc["spaces"]})
    raise ValueError(f"unknown Proprio space type {kind!r}")


def flat_dim(desc: dict) -> int:
    """Number of floats in the flat encoding of one value of the space."""
    kind = desc["type"]
    if kind == "box":
        return len(desc["low"])
    if kind == "discrete":
        return 1
    if kind == "multi_discrete":
        return len(desc["nvec"])
    if kind == "tokens":
        return desc["max_len"]
    if kind == "image":
        return desc["height"] * desc["width"] * desc["channels"]
    if kind in ("tuple", "dict"):
        parts = desc["spaces"] if kind == "tuple" else [s for _, s in desc["spaces"]]
        return sum(flat_dim(s) for s in parts)
    raise ValueError(f"unknown Proprio space type {kind!r}")


def _components(desc: dict) -> list:
    return desc["spaces"] if desc["type"] == "tuple" else [s for _, s in desc["spaces"]]


class Layout:
    """Converts between a space's values and its flat float32 encoding, batched."""

    def __init__(self, desc: dict):
        self.desc = desc
        self.dim = flat_dim(desc)
        self.decode: Callable[[np.ndarray], Any] = self._decoder(desc)
        # One value's shape, for the common single-array spaces (the fast path of `encode`).
        self._leaf_shape = None if desc["type"] in ("tuple", "dict") else (
            () if desc["type"] == "discrete" else self._shape(desc)
        )

    def _decoder(self, desc: dict) -> Callable[[np.ndarray], Any]:
        """A function from a ``[N, dim]`` float32 batch to N values of the space."""
        kind = desc["type"]
        if kind == "box":
            return lambda flat: flat
        if kind == "discrete":
            return lambda flat: flat[:, 0].astype(np.int64)
        if kind in ("multi_discrete", "tokens"):
            return lambda flat: flat.astype(np.int64)
        if kind == "image":
            shape = (desc["height"], desc["width"], desc["channels"])
            return lambda flat: flat.astype(np.uint8).reshape((flat.shape[0], *shape))
        parts = []
        start = 0
        for sub in _components(desc):
            end = start + flat_dim(sub)
            parts.append((start, end, self._decoder(sub)))
            start = end
        if kind == "tuple":
            return lambda flat: tuple(dec(flat[:, a:b]) for a, b, dec in parts)
        names = [name for name, _ in desc["spaces"]]
        return lambda flat: {
            name: dec(flat[:, a:b]) for name, (a, b, dec) in zip(names, parts)
        }

    def encode(self, values: Any, num_envs: int) -> bytes:
        """The flat float32 bytes ``[num_envs * dim]`` of N values of the space.

        Raises ``ValueError`` for a value of the wrong shape and ``TypeError``
        for one that is not numeric; the native env checks the values themselves.
        """
        if self._leaf_shape is not None:
            array = np.asarray(values)
            if array.shape == (num_envs, *self._leaf_shape) and array.dtype.kind in "biuf":
                return array.astype(np.float32, copy=False).tobytes()
        return self._encode(self.desc, values, num_envs).astype(np.float32, copy=False).tobytes()

    def _encode(self, desc: dict, values: Any, n: int) -> np.ndarray:
        kind = desc["type"]
        if kind in ("tuple", "dict"):
            if kind == "tuple":
                if not isinstance(values, (tuple, list)) or len(values) != len(desc["spaces"]):
                    raise TypeError(f"actions of a Tuple space must be a tuple of {len(desc['spaces'])} arrays")
                items = list(values)
            else:
                if not isinstance(values, dict):
                    raise TypeError("actions of a Dict space must be a dict of arrays")
                missing = [name for name, _ in desc["spaces"] if name not in values]
                if missing:
                    raise ValueError(f"actions lack the Dict component(s) {missing}")
                items = [values[name] for name, _ in desc["spaces"]]
            parts = [self._encode(sub, v, n) for sub, v in zip(_components(desc), items)]
            return np.concatenate(parts, axis=1)
        array = np.asarray(values)
        if array.dtype.kind not in "biuf":
            raise TypeError(f"actions must be numeric arrays, not of dtype {array.dtype}")
        dim = flat_dim(desc)
        expected = (n,) if kind == "discrete" else (n, *self._shape(desc))
        if array.shape != expected:
            raise ValueError(
                f"actions have shape {array.shape}; {n} envs of this action space need {expected}"
            )
        return array.reshape(n, dim)

    @staticmethod
    def _shape(desc: dict) -> tuple:
        if desc["type"] == "image":
            return (desc["height"], desc["width"], desc["channels"])
        return (flat_dim(desc),)
