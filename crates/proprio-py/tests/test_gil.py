"""The GIL is released while a batch steps: other Python threads keep running."""

from __future__ import annotations

import threading
import time

import os

import numpy as np
import pytest

import proprio


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs a core for each thread")
def test_other_threads_run_while_a_batch_steps():
    envs = proprio.make_vec("manipulation/pick-cube-v0", 256, threads=1)
    envs.reset(seed=0)
    actions = np.zeros((256, 7), dtype=np.float32)
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    thread = threading.Thread(target=spin)
    thread.start()
    try:
        time.sleep(0.05)
        start, t0 = count[0], time.perf_counter()
        time.sleep(0.1)  # the free-running rate of the other thread
        free_rate = (count[0] - start) / (time.perf_counter() - t0)
        stepped = 0
        start, t0 = count[0], time.perf_counter()
        while time.perf_counter() - t0 < 0.3:
            envs.step(actions)
            stepped += 1
        during_rate = (count[0] - start) / (time.perf_counter() - t0)
    finally:
        stop.set()
        thread.join()
    # With the GIL held through each step (~30 ms), the other thread would
    # only run in the gaps between steps (Python's 5 ms switch interval):
    # about a seventh of its free rate.
    assert stepped > 0
    assert during_rate > 0.5 * free_rate, (during_rate, free_rate)
