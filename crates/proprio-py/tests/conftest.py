"""Shared fixtures of the Python binding tests (run with `pytest crates/proprio-py/tests`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def proprio_cli() -> str:
    """The `proprio` command, for comparisons with the Rust side.

    `PROPRIO_BIN`, else the workspace's debug build, else `proprio` on PATH;
    missing, the test is skipped unless `PROPRIO_REQUIRE_CLI=1` (as in CI).
    """
    candidates = [os.environ.get("PROPRIO_BIN"), ROOT / "target/debug/proprio", shutil.which("proprio")]
    for c in candidates:
        if c and Path(c).is_file():
            return str(c)
    if os.environ.get("PROPRIO_REQUIRE_CLI") == "1":
        pytest.fail("the proprio command was not found (build it with `cargo build`, or set PROPRIO_BIN)")
    pytest.skip("the proprio command is not built here")
