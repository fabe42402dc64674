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
SIZES=${SIZES:-"4096 16384 65536"}
STEPS=${STEPS:-100}
TASKS=${TASKS:-"pick-cube stack-cube"}

case "${1:-}" in
prepare)
    cargo build --locked --release -p proprio-manipulation --example gpu_bench
    mkdir -p .gpu
    strip -o .gpu/gpu_bench target/release/examples/gpu_bench
    grep -qsx '/.gpu/' .git/info/exclude || echo /.gpu/ >> .git/info/exclude
    grep -qsx '/.gl/' .git/info/exclude || echo /.gl/ >> .git/info/exclude
    if [ ! -d .gl ] || ! ls .gl/*.deb > /dev/null 2>&1; then
        mkdir -p .gl /tmp/amd64/partial
        o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
        # shellcheck disable=SC2086
        apt-get $o update > /dev/null
        # shellcheck disable=SC2086
        (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 > /dev/null)
    fi
    du -sh .gpu .gl
    ;;
run)
    if ! ldconfig -p | grep -q libvulkan && ls .gl/*.deb > /dev/null 2>&1; then
        for f in .gl/*.deb; do dpkg -x "$f" /; done
        ldconfig
    fi
    if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
        export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
    fi
    BIN=.gpu/gpu_bench
    [ -x "$BIN" ] || BIN=target/release/examples/gpu_bench
    [ -x "$BIN" ] || BIN=target/debug/examples/gpu_bench
    export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
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
