#!/usr/bin/env bash
# Compare the NL72x2 switch generations for all-to-all and all-reduce, keep the Markdown tables and an
# HTML report (needs the plot extra) as artifacts, and fail (exit 1) when any row is more than 5% worse
# than the committed baseline.
#
#   examples/ci/compare-nl72x2.sh [extra trnsim options...]
#
# Environment: TRNSIM (the command, default "trnsim"), OUT (artifact folder, default "artifacts"),
# MAX_REGRESSION (default 5%). Extra options go to every compare, e.g. a what-if:
#   examples/ci/compare-nl72x2.sh --set switched.cross_rack.lanes=8
# To accept new results, rerun compare with --save-baseline examples/ci/baseline-OP.json.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
read -r -a trnsim <<< "${TRNSIM:-trnsim}"
out="${OUT:-artifacts}"
max_regression="${MAX_REGRESSION:-5%}"
variants=(--sku trn3-nl72x2-gen1 --sku trn3-nl72x2-gen2 --sku trn3-nl72x2-gen3)
sizes=(--sizes 64K,1M,16M,256M)

mkdir -p "$out"
"${trnsim[@]}" topo validate "$root"/topologies/*.yaml --format markdown > "$out/catalog.md"

status=0
for op in alltoall allreduce; do
  echo "== $op: NL72x2 switch generations against $here/baseline-$op.json"
  "${trnsim[@]}" compare "$op" "${variants[@]}" "${sizes[@]}" "$@" --format markdown \
    --baseline "$here/baseline-$op.json" --max-regression "$max_regression" > "$out/compare-$op.md" || status=$?
  if [ "$status" -ne 0 ] && [ "$status" -ne 1 ]; then exit "$status"; fi
done
# one HTML file to attach to the run: curves against bounds, the table, drawings and heatmaps
"${trnsim[@]}" report allreduce "${variants[@]}" "${sizes[@]}" "$@" -o "$out/report.html"
echo "tables and report.html written to $out/"
exit "$status"
