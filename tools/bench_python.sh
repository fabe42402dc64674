#!/usr/bin/env bash
# Proprio from Python vs `proprio bench` (the Python boundary's cost) and vs
# EnvPool from Python: CartPole (4096 envs), hover (4096), pick-cube vs
# EnvPool's Ant (256), on 1 thread and on every core, same sitting.
#
#   tools/bench_python.sh                 # venv in /tmp/proprio-python-bench
#   VENV=/path tools/bench_python.sh
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-/tmp/proprio-python-bench}
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet envpool==1.2.5
fi
cargo build --quiet --locked
"$VENV/bin/pip" install --quiet ./crates/proprio-py
"$VENV/bin/python" tools/bench_python.py --proprio-cli target/debug/proprio "$@"
