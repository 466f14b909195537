#!/usr/bin/env bash
# Compare the NL72x2 switch generations for all-to-all and all-reduce, keep the Markdown tables and an
# HTML report (needs the plot extra) as artifacts, and fail (exit 1) when any row is more than 5% worse
# than the committed baseline or a row of the baseline is not produced.
#
#   examples/ci/compare-nl72x2.sh [extra trnsim options...]
#
# Environment: TRNSIM (the command, default "trnsim"), OUT (artifact folder, default "artifacts"),
# MAX_REGRESSION (default 5%), BASELINES (the baselines' folder, default this script's). Extra options
# go to every compare, e.g. a what-if:
#   examples/ci/compare-nl72x2.sh --set switched.cross_rack.lanes=8
# To accept new results (after a change to a topology file or to the model), regenerate the baselines
# with the same commands and commit them:
#   UPDATE_BASELINES=1 examples/ci/compare-nl72x2.sh
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
read -r -a trnsim <<< "${TRNSIM:-trnsim}"
out="${OUT:-artifacts}"
max_regression="${MAX_REGRESSION:-5%}"
variants=(--sku trn3-nl72x2-gen1 --sku trn3-nl72x2-gen2 --sku trn3-nl72x2-gen3)
sizes=(--sizes 64K,1M,16M,256M)
baselines="${BASELINES:-$here}"

if [ -n "${UPDATE_BASELINES:-}" ]; then
  mkdir -p "$baselines"
  for op in alltoall allreduce; do
    "${trnsim[@]}" compare "$op" "${variants[@]}" "${sizes[@]}" "$@" --format markdown \
      --save-baseline "$baselines/baseline-$op.json" > /dev/null
  done
  exit 0
fi

mkdir -p "$out"
"${trnsim[@]}" topo validate "$root"/topologies/*.yaml --format markdown > "$out/catalog.md"

status=0
for op in alltoall allreduce; do
  echo "== $op: NL72x2 switch generations against $baselines/baseline-$op.json"
  # --require-all-rows: a baseline row this run does not produce (a size, a variant) fails the job
  "${trnsim[@]}" compare "$op" "${variants[@]}" "${sizes[@]}" "$@" --format markdown \
    --baseline "$baselines/baseline-$op.json" --max-regression "$max_regression" --require-all-rows \
    > "$out/compare-$op.md" || status=$?
  if [ "$status" -ne 0 ] && [ "$status" -ne 1 ]; then exit "$status"; fi
done
# one HTML file to attach to the run: curves against bounds, the table, drawings and heatmaps
"${trnsim[@]}" report allreduce "${variants[@]}" "${sizes[@]}" "$@" -o "$out/report.html"
echo "tables and report.html written to $out/"
exit "$status"
