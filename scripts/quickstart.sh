#!/usr/bin/env bash
# README quick-start command 1: installs dependencies, builds the tool, and runs the main job on a bundled scene:
# build an RT IP 3.1 blob, print its build report and traversal statistics, and write a steps heatmap; then the
# Python quick start's sweep (docs/sweeps.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "${HWBVH_JOBS:-2}" --target hwbvh_cli hwbvh_python
mkdir -p out
./build/bin/hwbvh build scenes/rotated-objects.obj -o out/rotated-objects.hwbvh
./build/bin/hwbvh stats out/rotated-objects.hwbvh
./build/bin/hwbvh render out/rotated-objects.hwbvh --mode steps -o out/rotated-objects-steps.png
echo "heatmap written to out/rotated-objects-steps.png"
# The Python quick start (README): a design-space sweep on a local Dask cluster, its table and a plot.
PYTHONPATH=build/python /usr/bin/python3 -m hwbvh.sweep examples/sweep-study.json --results-dir out/study.results \
  -o out/study.csv --plot out/study.png --x build.quality --y primary.steps.mean --hue target
