#!/usr/bin/env bash
# README quick-start command 2: installs dependencies, builds, and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=${HWBVH_JOBS:-2}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHWBVH_WERROR=ON
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs" --timeout 600
