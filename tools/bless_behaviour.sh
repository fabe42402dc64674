#!/usr/bin/env bash
# Rewrites the learners' behaviour fixtures (crates/proprio-learn/tests/fixtures/x86-64-v*)
# for both x86-64 SIMD levels burn's kernels run at: this CPU's natively, and
# on an AVX-512 machine AVX2's too, under qemu-user as an AMD EPYC-Rome
# (tools/test_as_avx2.sh; qemu's AVX2 and FMA are IEEE-exact, and gave the
# same rows as a real AVX2 EPYC). Only for a change meant to alter what a run
# computes: say so in the commit.
#
#   tools/bless_behaviour.sh           # both levels where this CPU allows
#   tools/bless_behaviour.sh --check   # compare instead: AVX2's fixtures under qemu (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
avx512=$(grep -qw avx512f /proc/cpuinfo && echo yes || echo no)
if [ "${1:-}" = --check ]; then
  if [ "$avx512" = no ]; then
    echo "behaviour under AVX2: this CPU has no AVX-512, so cargo test ran AVX2's fixtures already"
    exit 0
  fi
  exec bash tools/test_as_avx2.sh behaviour
fi
# At the workspace root, without -p: the test build's features, so nothing compiles again.
PROPRIO_BLESS=1 cargo test --locked --quiet --test behaviour
if [ "$avx512" = no ]; then
  echo "wrote x86-64-v3 (this CPU); x86-64-v4 needs an AVX-512 machine (qemu cannot emulate AVX-512)"
  exit 0
fi
PROPRIO_BLESS=1 bash tools/test_as_avx2.sh behaviour
echo "wrote x86-64-v4 (this CPU) and x86-64-v3 (qemu EPYC-Rome)"
