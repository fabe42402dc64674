#!/usr/bin/env bash
# One PPO update on burn's wgpu backend and on the CPU (flex), for a lent GPU
# machine (issue 54): pick-cube's state recipe (128-128 layers, 256 envs × 50
# steps, 16 minibatches × 8 epochs) and its pixel recipe (the CNN on
# rgb+state, front and hand cameras), each a time-boxed slice of training
# whose iterations log env / act / update milliseconds. The physics runs on
# the CPU threads in every slice, so only the networks' device changes.
#
#   tools/gpu_update.sh prepare   # here: .gpu/proprio.xz and the Vulkan loader .debs in .gl/
#   tools/gpu_update.sh run       # there (or here, on lavapipe): one JSON line per slice
#
# On the device tool: carry [".gpu", ".gl"], command `bash tools/gpu_update.sh run`,
# timeout_s 420. SLICE_S (seconds per slice, default 60) and SLICES
# (OBS:ENVS:NETWORK_DEVICE each) override the defaults; EXTRA adds train flags
# (on lavapipe: EXTRA="--set num_steps=8 --set update_epochs=1 --set num_minibatches=1").
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tools/device_gl.sh
. tools/device_gl.sh
SLICE_S=${SLICE_S:-60}
SLICES=${SLICES:-"state:256:cpu state:256:wgpu pixels:64:cpu pixels:64:wgpu"}
read -r -a EXTRA <<< "${EXTRA:-}"

case "${1:-}" in
prepare)
    device_proprio_prepare
    ;;
run)
    device_proprio_load
    for slice in $SLICES; do
        IFS=: read -r obs envs device <<< "$slice"
        run=$(mktemp -d)/run
        extra=()
        if [ "$obs" = pixels ]; then
            extra=(--obs rgb+state --camera front,hand --set num_minibatches=8)
        fi
        timeout -s INT "$SLICE_S" "$BIN" train --env manipulation/pick-cube-v0 "${extra[@]}" \
            --device "$device" --set num_envs="$envs" --set eval_every=1000000000 \
            --total-steps 100000000 "${EXTRA[@]}" --out "$run" > "$OUTDIR/update-$obs-$device.log" 2>&1 || true
        python3 - "$run/metrics.jsonl" "$slice" << 'EOF'
import json, os, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])] if os.path.exists(sys.argv[1]) else []
rows = [r for r in rows if "update_ms" in r][1:]  # the first iteration holds shader compilation
if not rows:
    print(json.dumps({"slice": sys.argv[2], "error": "no iteration after the first within the slice"}))
    sys.exit()
median = {k: round(statistics.median(r[k] for r in rows), 1) for k in ("env_ms", "act_ms", "update_ms")}
print(json.dumps({"slice": sys.argv[2], "iterations": len(rows), "ms_per_iteration": median,
                  "steps_per_iteration": rows[-1]["global_step"] // rows[-1]["iteration"]}))
EOF
    done
    ;;
*)
    echo "usage: $0 prepare|run" >&2
    exit 2
    ;;
esac
