#!/bin/sh
# stats at scale (bench/README.md "stats_at_scale.sh"): peak resident memory and wall time of
# `hwbvh stats --rays primary,shadow` at several image sizes on a generated 102,852-triangle scene (the city of
# scripts/generate_scenes.py at --blocks 1 --detail 0.125, built flattened: one BVH of its world-space triangles),
# each run under `ulimit -v` and measured by /usr/bin/time -v.
#
# Usage: bench/stats_at_scale.sh [SIZE[:PER_RAY]]...   (default: 4096:npy 16384:none)
#   SIZE      the image's width and height
#   PER_RAY   npy: stream --per-ray to OUT/rays-SIZE.npy on disk (deleted after the run); none: no --per-ray.
#             The rows take 273 bytes per ray, on disk twice while the file is assembled (docs/rays.md): at
#             16384x16384 about 140 GB, so check `df` first.
# Environment: HWBVH (default build/bin/hwbvh), OUT (default out/stats-at-scale), LIMIT_KB (ulimit -v, default
# 8000000), THREADS (default 0 = all).
set -eu
HWBVH=${HWBVH:-build/bin/hwbvh}
OUT=${OUT:-out/stats-at-scale}
LIMIT_KB=${LIMIT_KB:-8000000}
THREADS=${THREADS:-0}
[ $# -gt 0 ] || set -- 4096:npy 16384:none
mkdir -p "$OUT"
if [ ! -f "$OUT/city.hwbvh" ]; then
  python3 "$(dirname "$0")/../scripts/generate_scenes.py" --city "$OUT/city.glb" --blocks 1 --detail 0.125
  "$HWBVH" build "$OUT/city.glb" --flatten -o "$OUT/city.hwbvh" --quiet
fi
echo "size per_ray peak_rss_mb wall rays per_ray_bytes"
for run in "$@"; do
  size=${run%%:*}
  per_ray=${run#*:}
  [ "$per_ray" = "$run" ] && per_ray=none
  case $per_ray in
    npy) files="--per-ray $OUT/rays-$size.npy" ;;
    none) files="" ;;
    *) echo "unknown per-ray mode '$per_ray' (npy, none)" >&2; exit 2 ;;
  esac
  # shellcheck disable=SC2086
  (ulimit -v "$LIMIT_KB"; /usr/bin/time -v "$HWBVH" stats "$OUT/city.hwbvh" --rays primary,shadow --width "$size" \
     --height "$size" --threads "$THREADS" --json --quiet $files >"$OUT/stats-$size.json") 2>"$OUT/time-$size.txt"
  rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$OUT/time-$size.txt")
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$OUT/time-$size.txt")
  rays=$(python3 -c "import json,sys; print(sum(k['rays'] for k in json.load(open(sys.argv[1]))['ray_types']))" \
           "$OUT/stats-$size.json")
  bytes=$([ "$per_ray" = npy ] && stat -c %s "$OUT/rays-$size.npy" || echo 0)
  rm -f "$OUT/rays-$size.npy"
  echo "$size $per_ray $((rss_kb / 1024)) $wall $rays $bytes"
done
