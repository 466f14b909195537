"""Benchmark trnsim's routing core against the straightforward networkx computation.

For (a) the hop histogram over all chip pairs and (b) the ECMP link loads of a full all-to-all, on
trn3-nl72x2-gen1, a 16x16x16 torus (4,096 chips) and a 32x32x32 torus (32,768 chips, trnsim alone),
it prints each time, the ratio, whether the results are identical, and peak memory; then the wall
time of `trnsim collective allreduce --sku nl72x2` as a whole process against the import floor;
then the exact bandwidth bounds (trnsim.model.optimum) per op, each in a fresh process.

    python benchmarks/bench.py            # everything (the networkx reference on 4,096 chips takes minutes)
    python benchmarks/bench.py --quick    # skip the networkx reference on the 16x16x16 torus
    python benchmarks/bench.py --bounds   # the exact bounds alone
    python benchmarks/bench.py --faults   # the single-failure sweep alone
    python benchmarks/bench.py --big      # big fabrics: this checkout against --before REV, side by side

Times are wall-clock seconds on this machine; nothing here asserts a time.
"""

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = {
    "trn3-nl72x2-gen1": {"sku": "trn3-nl72x2-gen1"},
    "torus-16x16x16": {"file": ROOT / "examples" / "torus-16x16x16.yaml"},
    "torus-32x32x32": {"file": ROOT / "examples" / "torus-32x32x32.yaml"},
}


def _load(case: dict):
    from trnsim.topology import load_topology

    return load_topology(case.get("sku"), case.get("file"))


def _trnsim(case: dict) -> dict:
    """trnsim's own numbers for one case (run in a child process to measure its peak memory)."""
    import numpy as np

    from trnsim.routing.ecmp import alltoall_link_loads
    from trnsim.routing.hops import hop_histogram
    from trnsim.topology.arrays import graph_arrays

    timings = {}
    topo = _load(case)
    start = time.perf_counter()
    stats = hop_histogram(topo)
    timings["hops_s"] = time.perf_counter() - start
    topo = _load(case)  # fresh: the arrays are built inside the timed call
    start = time.perf_counter()
    loads = alltoall_link_loads(topo)
    timings["loads_s"] = time.perf_counter() - start
    m = len(graph_arrays(topo).edge_ends)
    return {
        **timings,
        "chips": topo.n_chips,
        "histogram": {str(k): v for k, v in stats.histogram_links.items()},
        "undirected_loads": ((loads[:m] + loads[m:]) / 2).tolist() if topo.n_chips <= 8192 else None,
        "max_load": float(np.max(loads)),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _reference(case: dict) -> dict:
    """networkx: BFS from every chip, and edge betweenness over chip pairs."""
    import networkx as nx

    topo = _load(case)
    graph, chips = topo.graph, topo.chips
    start = time.perf_counter()
    histogram: dict[int, int] = {}
    position = {chip: i for i, chip in enumerate(chips)}
    for source, lengths in nx.all_pairs_shortest_path_length(graph):
        if source not in position:
            continue
        for target, d in lengths.items():
            if target in position and position[target] > position[source]:
                histogram[d] = histogram.get(d, 0) + 1
    hops_s = time.perf_counter() - start
    start = time.perf_counter()
    betweenness = nx.edge_betweenness_centrality_subset(graph, chips, chips, normalized=False)
    loads_s = time.perf_counter() - start
    from trnsim.topology.arrays import graph_arrays

    ends = graph_arrays(topo).edge_ends
    loads = [betweenness.get((u, v), betweenness.get((v, u))) for u, v in ends]
    return {
        "hops_s": hops_s,
        "loads_s": loads_s,
        "histogram": {str(k): v for k, v in histogram.items()},
        "undirected_loads": loads,
    }


def _child(name: str, which: str) -> dict:
    process = subprocess.run(
        [sys.executable, __file__, "--child", name, which], capture_output=True, text=True, check=True
    )
    return json.loads(process.stdout)


def _identical(ours: dict, reference: dict) -> str:
    import numpy as np

    same_hist = ours["histogram"] == reference["histogram"]
    same_loads = np.allclose(ours["undirected_loads"], reference["undirected_loads"], rtol=1e-12, atol=1e-9)
    return f"histogram {'identical' if same_hist else 'DIFFERENT'}, loads {'identical' if same_loads else 'DIFFERENT'}"


def _process_times(runs: int) -> None:
    """Whole-process wall time: the trnsim command against importing its dependencies."""
    python = sys.executable
    floor_cmd = [python, "-c", "import networkx, numpy, typer, rich, yaml"]
    trnsim_cmd = [python, "-m", "trnsim", "collective", "allreduce", "--sku", "nl72x2"]
    floor, ours = [], []
    for _ in range(runs):  # interleaved, so load on the machine hits both alike
        for command, bucket in ((floor_cmd, floor), (trnsim_cmd, ours)):
            start = time.perf_counter()
            subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
            bucket.append(time.perf_counter() - start)
    f, t = statistics.median(floor), statistics.median(ours)
    print(f"\nwhole process, median of {runs} interleaved runs:")
    print(f"  import floor (networkx, numpy, typer, rich, yaml)   {f:.3f} s")
    print(
        f"  trnsim collective allreduce --sku nl72x2            {t:.3f} s   = {t / f:.2f} x the floor "
        f"(best runs: {min(ours):.3f} s vs {min(floor):.3f} s = {min(ours) / min(floor):.2f} x)"
    )


BOUND_CASES = {
    "trn3-nl72x2-gen1": ({"sku": "trn3-nl72x2-gen1"}, "all"),
    "nl72x2 rack:0": ({"sku": "trn3-nl72x2-gen1"}, "rack:0"),
    "torus-16x16x16": ({"file": ROOT / "examples" / "torus-16x16x16.yaml"}, "all"),
    "torus-16^3 0-2047": ({"file": ROOT / "examples" / "torus-16x16x16.yaml"}, "0-2047"),
    "switched-1152": ({"file": ROOT / "benchmarks" / "switched-1152.yaml"}, "all"),
}
BOUND_OPS = ("allgather", "reducescatter", "allreduce", "alltoall")


def _bounds_child(name: str) -> dict:
    """Time each op's exact bound from scratch (caches cleared); the scipy imports timed apart."""
    start = time.perf_counter()
    import numpy  # noqa: F401  (the CLI imports numpy anyway)

    from trnsim.collectives.ops import OPS
    from trnsim.model import optimum
    from trnsim.topology.groups import select_group

    case, spec = BOUND_CASES[name]
    topo = _load(case)
    group = select_group(topo, spec)
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    import scipy.sparse.csgraph  # noqa: F401

    csgraph_s = time.perf_counter() - start
    start = time.perf_counter()
    import scipy.optimize  # noqa: F401

    optimize_s = time.perf_counter() - start
    rows = []
    for op in BOUND_OPS:
        topo.cache.optimum.clear()  # each op timed from scratch
        topo.cache.optimum_gather.clear()
        start = time.perf_counter()
        found = optimum.optimum(topo, group, op)
        seconds = time.perf_counter() - start
        busbw = OPS[op].busbw_factor(len(group)) / found.seconds_per_byte / 1e9
        rows.append({"op": op, "s": seconds, "busbw": busbw, "exact": found.exact, "by": found.limited_by})
    return {
        "chips": topo.n_chips,
        "devices": len(topo.nodes),
        "ranks": len(group),
        "load_s": load_s,
        "csgraph_s": csgraph_s,
        "optimize_s": optimize_s,
        "rows": rows,
    }


def _bounds() -> None:
    print("\nexact bandwidth bounds (trnsim.model.optimum), each case in a fresh process:")
    print("  scipy imports are timed apart; the op times are compute only, caches cleared per op")
    for name in BOUND_CASES:
        process = subprocess.run(
            [sys.executable, __file__, "--child-bounds", name], capture_output=True, text=True, check=True
        )
        out = json.loads(process.stdout)
        print(
            f"  {name}: {out['ranks']:,} of {out['chips']:,} chips, {out['devices']:,} devices; "
            f"import scipy.sparse.csgraph {out['csgraph_s']:.3f} s, scipy.optimize {out['optimize_s']:.3f} s"
        )
        for row in out["rows"]:
            print(
                f"    {row['op']:14} {row['s']:8.3f} s   busbw {row['busbw']:9.3f} GB/s   "
                f"{'exact' if row['exact'] else 'bound'}   {row['by']}"
            )


def _faults() -> None:
    """The single-failure sweep: one evaluation per class of alike parts against failing every part."""
    python = sys.executable
    print("\nsingle-failure sweep (trnsim faults), whole process:")
    cases = [
        ("trn2-nl16", ["--op", "allreduce"]),
        ("trn2-nl64", ["--op", "allreduce"]),
    ]
    for sku, extra in cases:
        times = {}
        for label, flags in (("classes", []), ("every part", ["--exhaustive"])):
            start = time.perf_counter()
            subprocess.run(
                [python, "-m", "trnsim", "faults", sku, *extra, *flags], stdout=subprocess.DEVNULL, check=True
            )
            times[label] = time.perf_counter() - start
        ratio = times["every part"] / times["classes"]
        print(
            f"  {sku:18} one per class {times['classes']:6.2f} s   every part {times['every part']:7.2f} s"
            f"   = {ratio:.1f}x"
        )
    start = time.perf_counter()
    subprocess.run([python, "-m", "trnsim", "faults", "nl72x2"], stdout=subprocess.DEVNULL, check=True)
    print(f"  trn3-nl72x2-gen1   every part of 3,348, one per class: {time.perf_counter() - start:.2f} s")


BIG_CASES = [
    ("4,096-chip mesh, all-to-all 1 GiB", ["collective", "alltoall", "--topology", str(ROOT / "benchmarks" / "mesh-16x16x16.yaml"), "--sizes", "1G"]),
    ("2,304-chip switched, all-reduce 1 GiB", ["collective", "allreduce", "--topology", str(ROOT / "benchmarks" / "switched-2304.yaml"), "--sizes", "1G"]),
]  # fmt: skip
# the last commit before the compiled kernels (trnsim.routing.kernels)
BEFORE_KERNELS = "1b6863b"
_MEASURED_CHILD = (
    "import resource, runpy, sys, time\n"
    "sys.argv = ['trnsim', *sys.argv[1:]]\n"
    "start = time.perf_counter()\n"
    "try:\n"
    "    runpy.run_module('trnsim', run_name='__main__')\n"
    "except SystemExit:\n"
    "    pass\n"
    "sys.stderr.write(f'@@ {time.perf_counter() - start} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n')\n"
)


def _measured(args: list[str], source: Path) -> tuple[float, float, str]:
    """Wall seconds, peak memory (GB) and the busbw line of ``trnsim ARGS`` run from ``source``."""
    import os

    env = dict(os.environ, PYTHONPATH=str(source), TRNSIM_MAX_ROUTING=str(10**10), COLUMNS="200")
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED_CHILD, *args, "--format", "json"],
        capture_output=True, text=True, env=env, cwd=source, check=False,
    )  # fmt: skip
    marker = next(line for line in done.stderr.splitlines() if line.startswith("@@ "))
    _, seconds, rss_kb = marker.split()
    rows = json.loads(done.stdout)["rows"] if done.stdout.strip() else [{}]
    return float(seconds), float(rss_kb) / 1e6, f"busbw {rows[0].get('busbw_gbps', float('nan')):.3f} GB/s"


def _big(before: str) -> None:
    """Big fabrics with no symmetry to lean on: this checkout against ``before`` (a git worktree of
    that commit, run with the same Python), side by side in one run."""
    import shutil
    import tempfile

    print(f"\nbig fabrics, whole process (trnsim collective ...), this checkout against {before}:")
    tree = Path(tempfile.mkdtemp(prefix="trnsim-before-"))
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), before],
                   check=True, capture_output=True)  # fmt: skip
    try:
        for label, args in BIG_CASES:
            _measured(args, ROOT)  # compiles the kernels once (numba's disk cache), as any first run
            now = _measured(args, ROOT)
            then = _measured(args, tree)
            print(f"  {label}")
            print(f"    before ({before})  {then[0]:7.2f} s  {then[1]:5.2f} GB  {then[2]}")
            print(f"    now             {now[0]:7.2f} s  {now[1]:5.2f} GB  {now[2]}")
            print(f"    = {then[0] / now[0]:.1f}x faster, {then[1] / now[1]:.1f}x less memory")
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False,
                       capture_output=True)  # fmt: skip
        shutil.rmtree(tree, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="skip the networkx reference on 4,096 chips")
    parser.add_argument("--runs", type=int, default=15, help="runs for the whole-process timing")
    parser.add_argument("--bounds", action="store_true", help="time the exact bandwidth bounds alone")
    parser.add_argument("--faults", action="store_true", help="time the single-failure sweep alone")
    parser.add_argument("--big", action="store_true", help="big fabrics against --before, side by side")
    parser.add_argument("--before", default=BEFORE_KERNELS, help="the commit to compare --big against")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--child-bounds", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_bounds:
        print(json.dumps(_bounds_child(args.child_bounds)))
        return
    if args.bounds:
        _bounds()
        return
    if args.faults:
        _faults()
        return
    if args.big:
        _big(args.before)
        return
    if args.child:
        name, which = args.child
        print(json.dumps((_trnsim if which == "trnsim" else _reference)(CASES[name])))
        return
    print(f"{'case':18} {'metric':26} {'trnsim s':>9} {'networkx s':>11} {'ratio':>8}  result")
    for name in CASES:
        ours = _child(name, "trnsim")
        reference = None
        if name == "torus-32x32x32" or (args.quick and name == "torus-16x16x16"):
            note = "trnsim alone"
        else:
            reference = _child(name, "networkx")
            note = _identical(ours, reference)
        for metric, key in (("hop histogram", "hops_s"), ("all-to-all link loads", "loads_s")):
            ref = f"{reference[key]:11.3f}" if reference else f"{'-':>11}"
            ratio = f"{reference[key] / ours[key]:7.0f}x" if reference else f"{'-':>8}"
            print(f"{name:18} {metric:26} {ours[key]:9.3f} {ref} {ratio}  {note}")
        print(f"{'':18} {ours['chips']:,} chips, trnsim peak memory {ours['peak_rss_mb']:.0f} MB")
    _process_times(args.runs)
    _bounds()
    _faults()
    _big(args.before)


if __name__ == "__main__":
    main()
