#!/usr/bin/env bash
# What a learned progress reward costs per env step on a lent GPU machine
# (issue 55): PPO on push-cube paid by a fitted progress model alone (front
# and hand views rendered, CLIP on the 2·N frames, the causal head), with the
# networks (policy and reward model) on the CPU or on wgpu, at the recipe's
# 64 envs and at larger batches. Each slice is time-boxed; the first
# iteration (model load, shader compilation) is left out of the rate.
#
#   tools/gpu_learned_reward.sh prepare MODEL   # here: .gpu/proprio.xz, the progress model MODEL
#                                               # (a `fit-progress` output, its CLIP inside) in .gpu/progress/,
#                                               # and the Vulkan loader .debs in .gl/
#   tools/gpu_learned_reward.sh run             # there (or here, on lavapipe): one JSON line per slice
#
# On the device tool: carry [".gpu", ".gl"], command `bash tools/gpu_learned_reward.sh run`,
# timeout_s 300. SLICE_S (seconds per slice, default 60) and SLICES
# (ENVS:NETWORK_DEVICE each) override the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tools/device_gl.sh
. tools/device_gl.sh
SLICE_S=${SLICE_S:-60}
SLICES=${SLICES:-"64:cpu 64:wgpu 512:wgpu"}

case "${1:-}" in
prepare)
    [ $# -eq 2 ] && [ -f "$2/progress.json" ] || {
        echo "usage: $0 prepare MODEL (a fit-progress output directory)" >&2
        exit 2
    }
    device_proprio_prepare
    rm -rf .gpu/progress
    cp -r "$2" .gpu/progress
    du -sh .gpu/progress
    ;;
run)
    device_proprio_load
    reward=$(mktemp -d)/reward.toml
    printf 'kind = "progress"\nmodel = "%s"\ncamera = "front,hand"\nshaping = "progress"\noffset = -1\n' \
        "$(realpath .gpu/progress)" > "$reward"
    for slice in $SLICES; do
        IFS=: read -r envs device <<< "$slice"
        name=learned-reward-push-$envs-$device
        run=$(mktemp -d)/run
        timeout -s INT "$SLICE_S" "$BIN" train --env manipulation/push-cube-v0 --reward "$reward" \
            --device "$device" --set num_envs="$envs" --set eval_every=1000000000 \
            --total-steps 100000000 --out "$run" > "$OUTDIR/$name.log" 2>&1 || true
        python3 - "$run/metrics.jsonl" "$slice" << 'PY'
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1])] if os.path.exists(sys.argv[1]) else []
rows = [r for r in rows if "reward_embed_ms" in r]
if len(rows) < 2:
    print(json.dumps({"slice": sys.argv[2], "error": "fewer than 2 iterations in the slice"}))
    sys.exit()
steps = rows[-1]["global_step"] - rows[0]["global_step"]
secs = rows[-1]["time_s"] - rows[0]["time_s"]
last = rows[-1]
# reward_*_ms: mean milliseconds per scored batch of envs since the start (the first included).
print(json.dumps({"slice": sys.argv[2], "iterations": len(rows), "env_steps": last["global_step"],
                  "steps_per_s": round(steps / secs, 1),
                  "reward_render_ms": round(last["reward_render_ms"], 2),
                  "reward_embed_ms": round(last["reward_embed_ms"], 2),
                  "reward_share": round(last["reward_share"], 3)}))
PY
    done
    ;;
*)
    echo "usage: $0 prepare MODEL | run" >&2
    exit 2
    ;;
esac
