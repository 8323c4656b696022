#!/usr/bin/env bash
# Configures the fuzz build with clang (fuzz/CMakeLists.txt: libFuzzer + AddressSanitizer + UndefinedBehaviorSanitizer),
# builds every fuzz target and runs the CTest label fuzz-smoke: each target replays fuzz/regressions/<target>/ and its
# seed corpus fuzz/corpus/<target>/ (emu: fuzz/corpus/blob/), then fuzzes for HWBVH_FUZZ_SMOKE_SECONDS (default 10)
# seconds. Exits non-zero on any crash, sanitizer report or broken invariant; crashing inputs are kept in
# BUILD_DIR/artifacts/.
#
#   scripts/fuzz-smoke.sh [BUILD_DIR]          (default build-fuzz; HWBVH_JOBS sets the build parallelism)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-fuzz}
jobs=${HWBVH_JOBS:-2}
cmake -S "$root/fuzz" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DHWBVH_FUZZ_SMOKE_SECONDS="${HWBVH_FUZZ_SMOKE_SECONDS:-10}"
cmake --build "$build" --target fuzz_all -j "$jobs"
ctest --test-dir "$build" -L fuzz-smoke --output-on-failure
