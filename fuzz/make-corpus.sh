#!/usr/bin/env bash
# Regenerates the fuzz targets' seed corpora (fuzz/corpus/<target>/) from the project's scenes (scenes/*.obj,
# *.mtl): builds fuzz_make_corpus in the fuzz build (default build-fuzz; configured with clang if absent) and runs
# it on a clean corpus folder. Deterministic: rerunning it gives the same files. See fuzz/README.md.
#
#   fuzz/make-corpus.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-fuzz}
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$root/fuzz" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14
fi
cmake --build "$build" --target fuzz_make_corpus -j "${HWBVH_JOBS:-2}"
rm -rf "$root/fuzz/corpus"
# Embree and TBB keep some allocations until exit; they are not ours to report.
ASAN_OPTIONS=detect_leaks=0 "$build/fuzz_make_corpus" "$root/scenes" "$root/fuzz/corpus"
