#!/usr/bin/env bash
# A time-boxed slice of pixel pick-cube training on a lent GPU machine: the full
# pipeline (kernel physics on wgpu, offscreen RGB, burn's wgpu backend for the
# networks), its env steps/s and where an iteration's time goes, to extrapolate
# the wall-clock of a whole run (issue 36). The machine reaches no registry and
# takes 64 MiB of files, so the dev-profile `proprio` travels stripped and xz'd.
#
#   tools/gpu_pixel_pick.sh prepare   # here: .gpu/proprio.xz and the Vulkan loader .debs in .gl/
#   tools/gpu_pixel_pick.sh run       # there (or here, on lavapipe): one JSON summary line per slice
#
# On the device tool: carry [".gpu", ".gl"], command `bash tools/gpu_pixel_pick.sh run`,
# timeout_s 420. SLICE_S (seconds per slice) and SLICES (ENVS:NETWORK_DEVICE:PHYSICS_BACKEND each)
# override the defaults. 1024 envs do not fit: a rollout of 51,200 pixel observations is 5 GB.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tools/device_gl.sh
. tools/device_gl.sh
SLICE_S=${SLICE_S:-100}
SLICES=${SLICES:-"256:wgpu:gpu 256:cpu:gpu 256:wgpu:cpu"}

case "${1:-}" in
prepare)
    device_proprio_prepare
    ;;
run)
    device_proprio_load
    for slice in $SLICES; do
        IFS=: read -r envs device backend <<< "$slice"
        name=pixel-pick-$envs-$device-$backend
        run=$(mktemp -d)/run
        # The pixel recipe (rgb+state, front and hand cameras, 64 px) at this batch, no evaluations in the slice.
        timeout -s INT "$SLICE_S" "$BIN" train --env manipulation/pick-cube-v0 --obs rgb+state --camera front,hand \
            --backend "$backend" --device "$device" --set num_envs="$envs" --set num_minibatches=8 \
            --set eval_every=1000000000 --total-steps 100000000 --out "$run" > "$OUTDIR/$name.log" 2>&1 || true
        cp "$run/metrics.jsonl" "$OUTDIR/$name.jsonl" 2> /dev/null || true
        python3 - "$run/metrics.jsonl" "$slice" << 'EOF'
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1])] if os.path.exists(sys.argv[1]) else []
if len(rows) < 2:
    print(json.dumps({"slice": sys.argv[2], "error": "fewer than 2 iterations in the slice"}))
    sys.exit()
last = rows[1:]  # the first iteration holds shader compilation
steps = last[-1]["global_step"] - rows[0]["global_step"]
secs = last[-1]["time_s"] - rows[0]["time_s"]
per = {k: sum(r[k] for r in last) / len(last) for k in ("env_ms", "act_ms", "update_ms")}
print(json.dumps({"slice": sys.argv[2], "iterations": len(rows), "env_steps": last[-1]["global_step"],
                  "steps_per_s": round(steps / secs, 1), "ms_per_iteration": {k: round(v, 1) for k, v in per.items()},
                  "episode_return": last[-1].get("episode_return")}))
EOF
    done
    ;;
*)
    echo "usage: $0 prepare|run" >&2
    exit 2
    ;;
esac
