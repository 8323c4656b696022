#!/usr/bin/env bash
# README quick-start command 1: installs dependencies, builds the tool, and runs the main job on a bundled scene:
# build an RT IP 3.1 blob, print its build report and traversal statistics, and write a steps heatmap.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "${HWBVH_JOBS:-2}" --target hwbvh_cli
mkdir -p out
./build/bin/hwbvh build scenes/rotated-objects.obj -o out/rotated-objects.hwbvh
./build/bin/hwbvh stats out/rotated-objects.hwbvh
./build/bin/hwbvh render out/rotated-objects.hwbvh --mode steps -o out/rotated-objects-steps.png
echo "heatmap written to out/rotated-objects-steps.png"
