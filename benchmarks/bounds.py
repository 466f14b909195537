"""The exact bandwidth bounds (trnsim.model.optimum) per op, each case in a fresh process.

    python benchmarks/bounds.py

scipy's imports are timed apart; the op times are compute only, with the caches cleared per op.
This section reports no goal of its own: it says where a bound's time goes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from common import ROOT, Goal  # benchmarks/ is the script's folder, first on sys.path

CASES = {
    "trn3-nl72x2-gen1": ({"sku": "trn3-nl72x2-gen1"}, "all"),
    "nl72x2 rack:0": ({"sku": "trn3-nl72x2-gen1"}, "rack:0"),
    "torus-16x16x16": ({"file": ROOT / "examples" / "torus-16x16x16.yaml"}, "all"),
    "torus-16^3 0-2047": ({"file": ROOT / "examples" / "torus-16x16x16.yaml"}, "0-2047"),
    "switched-1152": ({"file": ROOT / "benchmarks" / "switched-1152.yaml"}, "all"),
}
OPS = ("allgather", "reducescatter", "allreduce", "alltoall")


def _child(name: str) -> dict:
    """Time each op's exact bound from scratch (caches cleared); the scipy imports timed apart."""
    from trnsim.collectives.ops import OPS as ALL_OPS
    from trnsim.model import optimum
    from trnsim.topology import load_topology
    from trnsim.topology.groups import select_group

    case, spec = CASES[name]
    topo = load_topology(case.get("sku"), case.get("file"))
    group = select_group(topo, spec)
    start = time.perf_counter()
    import scipy.sparse.csgraph  # noqa: F401

    csgraph_s = time.perf_counter() - start
    start = time.perf_counter()
    import scipy.optimize  # noqa: F401

    optimize_s = time.perf_counter() - start
    rows = []
    for op in OPS:
        topo.cache.optimum.clear()  # each op timed from scratch
        topo.cache.optimum_gather.clear()
        start = time.perf_counter()
        found = optimum.optimum(topo, group, op)
        seconds = time.perf_counter() - start
        busbw = ALL_OPS[op].busbw_factor(len(group)) / found.seconds_per_byte / 1e9
        rows.append({"op": op, "s": seconds, "busbw": busbw, "exact": found.exact, "by": found.limited_by})
    return {"chips": topo.n_chips, "devices": len(topo.nodes), "ranks": len(group), "csgraph_s": csgraph_s,
            "optimize_s": optimize_s, "rows": rows}  # fmt: skip


def section(args) -> list[Goal]:
    print("\nexact bandwidth bounds (trnsim.model.optimum), each case in a fresh process:")
    print("  scipy imports are timed apart; the op times are compute only, caches cleared per op")
    for name in CASES:
        # the disk cache off: each bound is computed, not read back
        done = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True, text=True,
                              check=True, cwd=ROOT, env=dict(os.environ, TRNSIM_CACHE="off"))  # fmt: skip
        out = json.loads(done.stdout)
        print(
            f"  {name}: {out['ranks']:,} of {out['chips']:,} chips, {out['devices']:,} devices; "
            f"import scipy.sparse.csgraph {out['csgraph_s']:.3f} s, scipy.optimize {out['optimize_s']:.3f} s"
        )
        for row in out["rows"]:
            print(
                f"    {row['op']:14} {row['s']:8.3f} s   busbw {row['busbw']:9.3f} GB/s   "
                f"{'exact' if row['exact'] else 'bound'}   {row['by']}"
            )
    return []


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(_child(sys.argv[2])))
    else:
        section(None)
