#!/usr/bin/env bash
# README quick-start command 2: installs dependencies, builds, and runs the whole test suite; then builds a second
# copy with AddressSanitizer + UndefinedBehaviorSanitizer and runs the whole suite again (docs/hardening.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=${HWBVH_JOBS:-2}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHWBVH_WERROR=ON "${launcher[@]}"
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs" --timeout 600

# Sanitizer stage. -O1 without debug info keeps the instrumented build and run cheap (the reports still name the
# functions); benchmarks are not built. Any report fails its test: UBSan does not recover
# (-fno-sanitize-recover=all), ASan stops at the first error, LeakSanitizer reports leaks at exit.
# The install test is left out: its consumer project links the instrumented static libraries without the
# sanitizer runtimes, which cannot link; the Release stage above covers it. So are the Python tests: an instrumented
# extension cannot load into Debian's uninstrumented interpreter, so this build has no module (HWBVH_BUILD_PYTHON).
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -g0" \
  -DHWBVH_SANITIZE=address,undefined -DHWBVH_WERROR=ON -DHWBVH_BUILD_BENCH=OFF "${launcher[@]}"
cmake --build build-asan -j "$jobs"
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" --timeout 900 -LE '^(install|python)$'
