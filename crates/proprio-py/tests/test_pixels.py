"""Pixel observations through the bindings (offscreen wgpu: lavapipe without a GPU)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import proprio


def pixel_envs(**kwargs):
    try:
        return proprio.make_vec("manipulation/reach-v0", 2, **kwargs)
    except RuntimeError as e:  # no adapter on this machine
        if os.environ.get("PROPRIO_REQUIRE_GPU") == "1":
            raise
        pytest.skip(f"no wgpu adapter: {e}")


def test_rgb_observations_are_uint8_images():
    envs = pixel_envs(obs="rgb", image_size=32)
    assert envs.single_observation_space.shape == (32, 32, 3)
    assert envs.single_observation_space.dtype == np.uint8
    obs, _ = envs.reset(seed=0)
    assert obs.shape == (2, 32, 32, 3) and obs.dtype == np.uint8
    assert envs.observation_space.contains(obs)
    assert obs.std() > 1.0, "a rendered frame is not one flat colour"
    again, _ = pixel_envs(obs="rgb", image_size=32).reset(seed=0)
    np.testing.assert_array_equal(obs, again)  # same scene, same bytes


def test_rgb_plus_state_is_a_dict():
    envs = pixel_envs(obs="rgb+state", image_size=16, frame_stack=1)
    obs, _ = envs.reset(seed=0)
    assert set(obs) == set(envs.single_observation_space.spaces)
    assert envs.observation_space.contains(obs)
