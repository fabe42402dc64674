#!/usr/bin/env bash
# Proprio vs CleanRL side by side (see tools/bench_vs_cleanrl.py for what is measured).
#   CLEANRL_DIR=/path/to/cleanrl/cleanrl tools/bench_vs_cleanrl.sh [TASKS] [SEEDS]
# CLEANRL_DIR holds CleanRL's ppo.py, ppo_continuous_action.py and sac_continuous_action.py
# (vwxyzjn/cleanrl; tested at fe8d8a03). A venv with CleanRL's pinned stack is made in
# $VENV (default /tmp/proprio-cleanrl-venv; PyPI's torch wheel pulls ~3 GB of CUDA libraries).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CLEANRL_DIR:?set CLEANRL_DIR to the folder holding CleanRL's scripts}"
venv=${VENV:-/tmp/proprio-cleanrl-venv}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q torch "gymnasium==0.29.1" "stable-baselines3==2.3.2" tyro tensorboard
fi
cargo build -q -p proprio-cli
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%Y-%m-%d); torch threads: $("$venv/bin/python" -c 'import torch; print(torch.get_num_threads())')"
python3 tools/bench_vs_cleanrl.py --cleanrl "$CLEANRL_DIR" --python "$venv/bin/python" \
  --tasks "${1:-cartpole-ppo,pendulum-ppo,pendulum-sac}" --seeds "${2:-1}"
