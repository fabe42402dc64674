"""Physics steps/s of crazyflow's CPU simulator, set up like `proprio bench --env drones/hover-v0`.

4096 worlds of one Crazyflie, first-principles dynamics at 500 Hz, motor-speed
(rotor_vel) commands drawn uniformly from crazyflow's RPM limits every control
step, 5 physics steps per control step (100 Hz control), warm-up (JIT) excluded.
Run by tools/bench_vs_crazyflow.sh; prints one JSON line.
"""

import json
import sys
import time

import jax
import numpy as np
from crazyflow.control import Control
from crazyflow.sim import Sim
from crazyflow.sim.sim import rotor_vel_limits

n_worlds = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 200
substeps = 5

sim = Sim(n_worlds=n_worlds, n_drones=1, control=Control.rotor_vel, freq=500,
          state_freq=100, attitude_freq=500, device="cpu")
low, high = rotor_vel_limits(sim.dynamics, sim.drone)
rng = np.random.default_rng(0)


def run(n):
    start = time.perf_counter()
    for _ in range(n):
        cmd = rng.uniform(low, high, size=(n_worlds, 1, 4)).astype(np.float32)
        sim.rotor_vel_control(cmd)
        sim.step(substeps)
    jax.block_until_ready(sim.data.states.pos)
    return time.perf_counter() - start


sim.reset()
run(10)
seconds = run(steps)
physics = n_worlds * steps * substeps / seconds
print(json.dumps({
    "sim": "crazyflow", "version": __import__("importlib.metadata").metadata.version("crazyflow"),
    "jax": jax.__version__, "device": str(jax.devices()[0]), "n_worlds": n_worlds, "steps": steps,
    "seconds": seconds, "physics_steps_per_s": physics, "env_steps_per_s": physics / substeps,
}))
