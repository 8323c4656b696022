#!/usr/bin/env bash
# Long fuzzing runs, one target at a time (fuzz/README.md). Each target keeps the corpus it grows in
# BUILD_DIR/long/<target>/ (so a second run continues where the first stopped), starts from fuzz/regressions/<target>/
# and fuzz/corpus/<target>/ (emu: fuzz/corpus/blob/), and stops after SECONDS, or after HWBVH_FUZZ_RUNS executions
# when that is set. Crashing inputs go to BUILD_DIR/artifacts/; a summary line per target (executions, seconds, exit
# code) goes to BUILD_DIR/long/summary.txt.
#
#   fuzz/long-run.sh SECONDS [TARGET...]         (default: every fuzz_* target; BUILD_DIR: HWBVH_FUZZ_BUILD or build-fuzz)
#   e.g. fuzz/long-run.sh 14400 emu              four hours of the emulator target
#        HWBVH_FUZZ_RUNS=10000000 fuzz/long-run.sh 0 rdna4_nodes rays
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HWBVH_FUZZ_BUILD:-$root/build-fuzz}
seconds=${1:?usage: fuzz/long-run.sh SECONDS [TARGET...]}
shift
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  for src in "$root"/fuzz/fuzz_*.cpp; do
    name=$(basename "$src" .cpp)
    targets+=("${name#fuzz_}")
  done
fi
stop=(-max_total_time="$seconds")
[[ -n ${HWBVH_FUZZ_RUNS:-} ]] && stop=(-runs="$HWBVH_FUZZ_RUNS")
mkdir -p "$build/long" "$build/artifacts"
status=0
for t in "${targets[@]}"; do
  seed_dir=$t
  [[ $t == emu ]] && seed_dir=blob  # fuzz_emu reads blob files and shares fuzz_blob's seeds (as fuzz/CMakeLists.txt)
  seeds=("$root/fuzz/corpus/$seed_dir")
  [[ -d $root/fuzz/regressions/$t ]] && seeds=("$root/fuzz/regressions/$t" "${seeds[@]}")
  mkdir -p "$build/long/$t"
  dict=()
  [[ -f $root/fuzz/$t.dict ]] && dict=(-dict="$root/fuzz/$t.dict")
  start=$(date +%s)
  "$build/fuzz_$t" "${stop[@]}" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$t-" "${dict[@]}" "$build/long/$t" "${seeds[@]}" >"$build/long/$t.log" 2>&1
  rc=$?
  runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$build/long/$t.log")
  echo "$(date -u +%FT%TZ) $t executions=${runs:-?} seconds=$(($(date +%s) - start)) exit=$rc" | tee -a "$build/long/summary.txt"
  [[ $rc -ne 0 ]] && status=1
done
exit $status
