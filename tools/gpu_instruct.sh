#!/usr/bin/env bash
# Instruction following's pipeline on a lent GPU machine (issue 37): GRPO on
# manipulation/instruct-v0 with the tuned recipe, from the state and from
# pixels (rgb+state, 64 px, the actor blind to the cubes and the goal), with
# the kernel physics on the GPU or the CPU and burn's network on wgpu or the
# CPU; env steps/s of each, side by side. Each slice is time-boxed; the
# first iteration (shader compilation) is left out of the rate.
#
#   tools/gpu_instruct.sh prepare   # here: .gpu/proprio.xz and the Vulkan loader .debs in .gl/
#   tools/gpu_instruct.sh run       # there (or here, on lavapipe): one JSON line per slice
#
# On the device tool: carry [".gpu", ".gl"], command `bash tools/gpu_instruct.sh run`,
# timeout_s 480. SLICE_S (seconds per slice, default 60) and SLICES
# (OBS:GROUPS:NETWORK_DEVICE:PHYSICS_BACKEND each) override the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tools/device_gl.sh
. tools/device_gl.sh
SLICE_S=${SLICE_S:-60}
SLICES=${SLICES:-"state:16:cpu:cpu state:128:wgpu:gpu state:128:cpu:cpu rgb+state:16:cpu:cpu rgb+state:128:wgpu:gpu rgb+state:128:wgpu:cpu"}
# With rgb+state the grpo/rgb+state recipe (tuned.json) hides the cubes, the
# goal and the grasp flags from the actor and reads the image's cells instead.
case "${1:-}" in
prepare)
    device_proprio_prepare
    ;;
run)
    device_proprio_load
    for slice in $SLICES; do
        IFS=: read -r obs groups device backend <<< "$slice"
        name=instruct-${obs/+/-}-$groups-$device-$backend
        run=$(mktemp -d)/run
        timeout -s INT "$SLICE_S" "$BIN" train --algo grpo --env manipulation/instruct-v0 --obs "$obs" \
            --backend "$backend" --device "$device" --set groups="$groups" \
            --set eval_every=1000000000 --total-steps 100000000 --out "$run" > "$OUTDIR/$name.log" 2>&1 || true
        cp "$run/metrics.jsonl" "$OUTDIR/$name.jsonl" 2> /dev/null || true
        python3 - "$run/metrics.jsonl" "$slice" << 'PY'
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1])] if os.path.exists(sys.argv[1]) else []
if len(rows) < 2:
    print(json.dumps({"slice": sys.argv[2], "error": "fewer than 2 iterations in the slice"}))
    sys.exit()
steps = rows[-1]["global_step"] - rows[0]["global_step"]
secs = rows[-1]["time_s"] - rows[0]["time_s"]
print(json.dumps({"slice": sys.argv[2], "iterations": len(rows), "env_steps": rows[-1]["global_step"],
                  "steps_per_s": round(steps / secs, 1), "success_rate": rows[-1].get("success_rate")}))
PY
    done
    ;;
*)
    echo "usage: $0 prepare|run" >&2
    exit 2
    ;;
esac
