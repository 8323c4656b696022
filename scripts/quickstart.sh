#!/usr/bin/env bash
# README quick-start command 1: installs dependencies, builds, and runs the main job on a bundled scene.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "${HWBVH_JOBS:-2}" --target hwbvh_cli
mkdir -p out
./build/bin/hwbvh build scenes/cornell-box.obj -o out/cornell-box.hwbvh
./build/bin/hwbvh info out/cornell-box.hwbvh
