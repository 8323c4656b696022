#!/usr/bin/env bash
# README quick-start command 2: installs dependencies, builds, and runs the whole test suite twice — an
# optimised build, then the same suite under AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=${HWBVH_JOBS:-2}

echo "== release build and tests" >&2
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHWBVH_WERROR=ON
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs" --timeout 600

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build and tests" >&2
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHWBVH_WERROR=ON \
  -DHWBVH_SANITIZE=address,undefined -DHWBVH_BUILD_BENCH=OFF
cmake --build build-asan -j "$jobs"
# The install test checks packaging, which the first run covered; everything else runs instrumented.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" --timeout 1200 --label-exclude install
