#!/usr/bin/env bash
# Runs every test binary of `cargo test --locked` under qemu-user as an AMD
# EPYC-Rome (AVX2 and FMA, no AVX-512): the test suite as a CPU without
# AVX-512 runs it, from an AVX-512 machine. GPU adapters and displays are
# hidden (those tests skip and say so; lavapipe under emulation would take
# hours), and the `proprio` binary the CLI tests start runs natively (qemu-user
# does not follow exec). Two binaries at a time; about 20x slower than native.
#
#   tools/test_as_avx2.sh            # every test binary
#   tools/test_as_avx2.sh behaviour  # those whose name contains a word
set -euo pipefail
cd "$(dirname "$0")/.."
filter=${1:-}
command -v qemu-x86_64 >/dev/null || apt-get install -y -qq qemu-user >/dev/null
# At the workspace root, without -p: the test build's features, so nothing compiles again.
mapfile -t bins < <(cargo test --locked --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["manifest_path"].rsplit("/", 1)[0] + " " + m["executable"])' | grep -- "$filter")
log=$(mktemp -d)
run() {
  local dir=${1% *} bin=${1#* } name
  name=$(basename "$bin")
  # Each test runs in its crate's folder, as under cargo.
  if (cd "$dir" && env -u DISPLAY -u PROPRIO_REQUIRE_GPU -u PROPRIO_REQUIRE_DISPLAY \
      WGPU_BACKEND=vulkan VK_ICD_FILENAMES=/nonexistent \
      qemu-x86_64 -cpu EPYC-Rome "$bin" --quiet) >"$log/$name" 2>&1; then
    echo "ok      $name"
  else
    echo "FAILED  $name:"
    # qemu warns once per thread about CPUID bits its emulator lacks (rdseed, sha-ni, ...): not ours.
    grep -v "TCG doesn't support requested feature" "$log/$name"
    return 1
  fi
}
export -f run
export log
printf '%s\n' "${bins[@]}" | xargs -P 2 -I{} bash -c 'run "{}"'
