#!/usr/bin/env bash
# GPU figures of the manipulation kernel physics, prepared here and measured on
# a lent GPU machine (which reaches no registry and takes 64 MiB of files).
#
#   tools/gpu_manipulation_bench.sh prepare   # here: stripped release gpu_bench in .gpu/, Vulkan loader .debs in .gl/
#   tools/gpu_manipulation_bench.sh run       # there (or here, on lavapipe): 4k to 64k envs per task, JSON lines
#
# On the device tool: carry [".gpu", ".gl"], command `bash tools/gpu_manipulation_bench.sh run`,
# timeout_s 420. SIZES, STEPS and TASKS override the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tools/device_gl.sh
. tools/device_gl.sh
SIZES=${SIZES:-"4096 16384 65536"}
STEPS=${STEPS:-100}
TASKS=${TASKS:-"pick-cube stack-cube"}

case "${1:-}" in
prepare)
    cargo build --locked --release -p proprio-manipulation --example gpu_bench
    mkdir -p .gpu
    strip -o .gpu/gpu_bench target/release/examples/gpu_bench
    device_gl_prepare
    du -sh .gpu .gl
    ;;
run)
    device_gl_load
    BIN=.gpu/gpu_bench
    [ -x "$BIN" ] || BIN=target/release/examples/gpu_bench
    [ -x "$BIN" ] || BIN=target/debug/examples/gpu_bench
    echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || echo 'no NVIDIA GPU'); $(date -u '+%F %H:%M UTC'); $BIN"
    for task in $TASKS; do
        # shellcheck disable=SC2086
        timeout 200 "$BIN" "$task" "$STEPS" $SIZES
    done
    ;;
*)
    echo "usage: $0 prepare|run" >&2
    exit 2
    ;;
esac
