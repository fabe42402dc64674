"""The Ray example on a local two-worker cluster (skipped where Ray is not installed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")

EXAMPLE = Path(__file__).resolve().parents[3] / "examples/python/ray_rollouts.py"


def test_ray_rollouts_with_two_workers():
    out = subprocess.run(
        [sys.executable, str(EXAMPLE), "--workers", "2", "--num-cpus", "2", "--iterations", "10"],
        check=True, capture_output=True, text=True, timeout=300,
    ).stdout
    assert "2 worker(s) x 64 envs: 256,000 samples" in out
