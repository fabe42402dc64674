#!/usr/bin/env bash
# Rewrites the learners' behaviour fixtures (crates/proprio-learn/tests/fixtures/x86-64-v*)
# for both x86-64 SIMD levels burn's kernels run at: this CPU's natively, and
# on an AVX-512 machine AVX2's too, under qemu-user as an AMD EPYC-Rome
# (AVX2 and FMA, no AVX-512; qemu's AVX2 and FMA are IEEE-exact, and gave the
# same rows as a real AVX2 EPYC). Only for a change meant to alter what a run
# computes: say so in the commit.
#
#   tools/bless_behaviour.sh           # both levels where this CPU allows
#   tools/bless_behaviour.sh --check   # compare instead: AVX2's fixtures under qemu (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
# At the workspace root, without -p: the test build's features, so nothing compiles again.
bin=$(cargo test --locked --no-run --message-format=json --test behaviour 2>/dev/null |
  python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "behaviour" and m.get("executable"):
        print(m["executable"])')
[ -x "$bin" ] || { echo "error: could not build the behaviour test" >&2; exit 1; }
if ! grep -qw avx512f /proc/cpuinfo; then
  [ "$mode" = --check ] && { echo "behaviour under AVX2: this CPU has no AVX-512, so cargo test ran AVX2's fixtures already"; exit 0; }
  PROPRIO_BLESS=1 "$bin" --quiet
  echo "wrote x86-64-v3 (this CPU); x86-64-v4 needs an AVX-512 machine (qemu cannot emulate AVX-512)"
  exit 0
fi
if ! command -v qemu-x86_64 >/dev/null; then
  apt-get install -y -qq qemu-user >/dev/null
fi
# qemu warns once per thread about CPUID bits its emulator lacks (rdseed, sha-ni, ...): not ours.
quiet_qemu() { qemu-x86_64 -cpu EPYC-Rome "$@" 2> >(grep -v "TCG doesn't support requested feature" >&2); }
if [ "$mode" = --check ]; then
  quiet_qemu "$bin" --quiet
  exit 0
fi
PROPRIO_BLESS=1 "$bin" --quiet
PROPRIO_BLESS=1 quiet_qemu "$bin" --quiet
echo "wrote x86-64-v4 (this CPU) and x86-64-v3 (qemu EPYC-Rome)"
