#!/usr/bin/env bash
# Installs the Debian 12 packages hwbvh builds against, only when one is missing.
# Runs as root (or through sudo when available). Safe to run repeatedly.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  python3  # scripts/generate_scenes.py (the generated city in tests/e2e/city_cli_test.cpp)
  libembree-dev libtbb-dev libglm-dev libtinyobjloader-dev libtinygltf-dev libstb-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev libxxhash-dev libzstd-dev
  # .npz tree files (docs/tree-format.md); Debian 12's libzip CMake config also names the binaries of the three tools
  libzip-dev zipcmp zipmerge ziptool
  # the Python module (docs/python.md) and its tests, examples/ and `pip install --no-build-isolation .`
  pybind11-dev python3-pybind11 python3-dev python3-numpy python3-pytest python3-matplotlib python3-pandas
  python3-distributed python3-setuptools python3-wheel python3-pip python3-venv
  chromium  # headless, for the `hwbvh report` browser test (tests/e2e/report_browser_test.cpp)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "hwbvh: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
