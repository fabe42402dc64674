#!/usr/bin/env bash
# Proprio vs CleanRL side by side (see tools/bench_vs_cleanrl.py for what is measured).
#   CLEANRL_DIR=DIR tools/bench_vs_cleanrl.sh [TASKS] [SEEDS]
# DIR holds ppo.py, ppo_continuous_action.py, sac_continuous_action.py, td3_continuous_action.py (from cleanrl/) and the cleanrl_utils/ package
# (vwxyzjn/cleanrl; tested at fe8d8a03). A venv with CleanRL's pinned stack is made in
# $VENV (default /tmp/proprio-cleanrl-venv; PyPI's torch wheel pulls ~3 GB of CUDA libraries).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CLEANRL_DIR:?set CLEANRL_DIR to the folder holding the CleanRL scripts}"
tasks=${1:-cartpole-ppo,pendulum-ppo,pendulum-sac}
if [[ $tasks == *pick* ]]; then
  # Proprio's envs through its Python bindings (Gymnasium 1.x; tools/cleanrl_proprio.py
  # runs the unmodified CleanRL script on them): a venv of its own.
  venv=${VENV:-/tmp/proprio-cleanrl-venv-1x}
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q torch "gymnasium>=1.0" tyro tensorboard ./crates/proprio-py
  fi
else
  venv=${VENV:-/tmp/proprio-cleanrl-venv}
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q torch "gymnasium==0.29.1" "stable-baselines3==2.3.2" tyro tensorboard
  fi
fi
cargo build -q -p proprio-cli
model=$(lscpu | sed -n 's/^Model name: *//p')
threads=$("$venv/bin/python" -c "import torch; print(torch.get_num_threads())")
echo "machine: $(nproc) cores, $model, $(date -u +%Y-%m-%d); torch threads: $threads"
python3 tools/bench_vs_cleanrl.py --cleanrl "$CLEANRL_DIR" --python "$venv/bin/python" \
  --tasks "$tasks" --seeds "${2:-1}"
