"""No memory growth over a million env steps through the bindings."""

from __future__ import annotations

import resource

import numpy as np

import proprio


def rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() // 1024


def test_no_memory_growth_over_a_million_steps():
    # Same-step mode with short episodes: every path that builds Python
    # objects (infos, final observations) runs thousands of times.
    envs = proprio.make_vec("classic/cartpole-v1", 8, autoreset_mode="SameStep",
                            config={"max_episode_steps": 20})
    envs.reset(seed=0)
    actions = np.ones(8, dtype=np.int64)
    for _ in range(5_000):
        envs.step(actions)
    before = rss_kib()
    for _ in range(120_000):
        envs.step(actions)
    grown = rss_kib() - before
    assert grown < 4096, f"resident memory grew by {grown} KiB over 10^6 env steps"
