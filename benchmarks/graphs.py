"""Graph computations on big fabrics against the graph libraries (issue 28: at most 1x the best).

For each fabric (the 4,096-chip 3-D mesh, the 64x64 2-D mesh, the 16x16x16 torus, the 2,304-chip
switched file) and each computation, trnsim's own function against igraph's and rustworkx's doing
the same work, each case in a fresh child process:

- hop histogram: ``hop_histogram(topology)`` (the closed form on a mesh or torus) and the full BFS
  over chip pairs (``hop_histogram(topology, chips)``) against igraph's ``path_length_hist`` (chip-only
  graphs) or ``distances`` between chips, and rustworkx's ``distance_matrix``;
- path counts: ``kernels.bfs_all`` (distances and shortest-path counts from every chip) against
  rustworkx's ``num_shortest_paths_unweighted`` from each chip (igraph has no path counts);
- ECMP loads: ``alltoall_link_loads`` (every chip to every other, split over shortest paths; what
  ``make bench`` times) against igraph's ``edge_betweenness`` with chips as sources and targets and
  rustworkx's ``edge_betweenness_centrality`` (all pairs: only where every node is a chip). Switches
  are transit nodes, not endpoints.

Times are CPU seconds of the call (all threads), the libraries' graphs built beforehand and their
results converted afterwards, outside the time. trnsim: ``now`` and ``before`` are the second call in
the process (compilation and numba's start excluded), ``first`` the first call with numba's disk
cache warm (a later run), ``cold`` the first call after a cache wipe (compilation included).
Identical: histograms equal, counts and loads allclose (rtol 1e-9). Then whole processes: the
4,096-chip mesh all-to-all at 1 GiB and the 16x16x16 torus all-to-all at 1 MiB against a process
that loads the same file and runs igraph's edge betweenness.

    pip install -e '.[bench]'          # igraph and rustworkx (the references; not trnsim's dependencies)
    python benchmarks/graphs.py        # against the commit before issue 28 (common.BEFORE)
    python benchmarks/graphs.py --before none --quick
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, Goal, run_alone, tree_env  # benchmarks/ is the script's folder

FABRICS = {
    "mesh-16x16x16": ROOT / "benchmarks" / "mesh-16x16x16.yaml",
    "mesh-64x64": ROOT / "benchmarks" / "mesh-64x64.yaml",
    "torus-16x16x16": ROOT / "examples" / "torus-16x16x16.yaml",
    "switched-2304": ROOT / "benchmarks" / "switched-2304.yaml",
}
COMPUTATIONS = ("hop histogram", "hops, full BFS", "path counts", "ECMP loads")
LIBRARIES = ("igraph", "rustworkx")
PROCESSES = [
    ("mesh-16x16x16", "4,096-chip mesh all-to-all 1 GiB", ["--sizes", "1G"]),
    ("torus-16x16x16", "16x16x16 torus all-to-all 1 MiB", ["--sizes", "1M"]),
]
INSTALL = "pip install -e '.[bench]' (or: pip install igraph rustworkx)"


# ---- children: one computation, its time and result ---------------------------------------------


def _timed(call):
    cpu, wall = time.process_time(), time.perf_counter()
    result = call()
    return result, time.process_time() - cpu, time.perf_counter() - wall


def _trnsim_case(fabric: str, computation: str):
    """The computation twice, each on a freshly loaded topology (arrays built inside the time)."""
    import numpy as np

    from trnsim.routing import kernels
    from trnsim.routing.ecmp import alltoall_link_loads
    from trnsim.routing.hops import hop_histogram
    from trnsim.routing.shortest import transit_mask
    from trnsim.topology import load_topology
    from trnsim.topology.arrays import graph_arrays

    def histogram(stats):
        counts = np.zeros(max(stats.histogram_links) + 1, dtype=np.int64)
        counts[list(stats.histogram_links)] = list(stats.histogram_links.values())
        return counts

    def run(topo):
        if computation == "hop histogram":
            return histogram(hop_histogram(topo))
        if computation == "hops, full BFS":
            return histogram(hop_histogram(topo, list(topo.chips)))
        arrays = graph_arrays(topo)
        chips = np.arange(topo.n_ranks)
        if computation == "path counts":
            transit = transit_mask(arrays, topo.spec.routing.relay)
            return kernels.bfs_all(arrays, chips, transit, with_latency=False)[1][:, : len(chips)]
        loads, m = alltoall_link_loads(topo), len(arrays.edge_ends)
        return (loads[:m] + loads[m:]) / 2  # undirected, as the libraries count

    times = []
    for _ in range(2):
        topo = load_topology(None, FABRICS[fabric])
        result, cpu, wall = _timed(lambda topo=topo: run(topo))
        times.append((cpu, wall))
    return result, {"first": times[0], "warm": times[1]}


def _library_case(library: str, fabric: str, computation: str):
    """The library's call on the same graph (built from trnsim's arrays, outside the time); None
    when the library has no such computation."""
    import numpy as np

    from trnsim.topology import load_topology
    from trnsim.topology.arrays import graph_arrays

    topo = load_topology(None, FABRICS[fabric])
    arrays = graph_arrays(topo)
    m, n, p = len(arrays.edge_ends), arrays.n_nodes, topo.n_ranks
    edges = list(zip(arrays.src[:m].tolist(), arrays.dst[:m].tolist(), strict=True))
    chips = list(range(p))
    chip_only = n == p
    if library == "igraph":
        import igraph

        graph = igraph.Graph(n=n, edges=edges)
        if computation == "ECMP loads":
            found, cpu, wall = _timed(
                lambda: graph.edge_betweenness(directed=False, sources=chips, targets=chips)
            )
            return np.asarray(found), (cpu, wall)
        if computation == "path counts":
            return None  # no path counts in igraph (get_all_shortest_paths lists every path)
        if chip_only:
            found, cpu, wall = _timed(lambda: graph.path_length_hist(directed=False))
            counts = np.zeros(int(max(start for start, _, _ in found.bins())) + 1, dtype=np.int64)
            for start, _, count in found.bins():
                counts[int(start)] = count
            return counts, (cpu, wall)
        found, cpu, wall = _timed(lambda: graph.distances(source=chips, target=chips))
        return _pair_histogram(np.asarray(found)), (cpu, wall)
    import rustworkx

    graph = rustworkx.PyGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from_no_data(edges)
    if computation == "ECMP loads":
        if not chip_only:
            return None  # all-pairs only: switches would be endpoints
        found, cpu, wall = _timed(lambda: rustworkx.edge_betweenness_centrality(graph, normalized=False))
        return np.array([found[e] for e in range(m)]), (cpu, wall)
    if computation == "path counts":
        rows, cpu, wall = np.zeros((p, p)), 0.0, 0.0
        for s in chips:
            found, c, w = _timed(lambda s=s: rustworkx.num_shortest_paths_unweighted(graph, s))
            cpu, wall = cpu + c, wall + w
            counts = dict(found)
            rows[s] = [float(counts.get(t, 0)) for t in chips]
        np.fill_diagonal(rows, 1.0)
        return rows, (cpu, wall)
    found, cpu, wall = _timed(lambda: rustworkx.distance_matrix(graph))
    return _pair_histogram(found[:p, :p]), (cpu, wall)


def _pair_histogram(dist):
    import numpy as np

    upper = np.triu_indices(len(dist), 1)
    return np.bincount(dist[upper].astype(np.int64))


def _peak_kb() -> float:
    """This process's peak resident memory (kB). /proc's VmHWM, not getrusage's ru_maxrss: a child
    started by fork and exec keeps its parent's ru_maxrss as a floor (Linux), VmHWM starts afresh."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return float(line.split()[1])
    except OSError:
        pass
    import resource

    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _child(who: str, fabric: str, computation: str, out: str) -> None:
    import numpy as np

    if who == "trnsim":
        result, times = _trnsim_case(fabric, computation)
    else:
        found = _library_case(who, fabric, computation)
        result, times = (None, None) if found is None else (found[0], {"warm": found[1]})
    if result is not None:
        np.save(out, result)
    print(json.dumps({"times": times, "peak_mb": _peak_kb() / 1024}))


# ---- the parent: cases side by side --------------------------------------------------------------


def _run_child(who, fabric, computation, out: Path, source: Path, cache: Path | None) -> dict:
    env = tree_env(source, TRNSIM_CACHE="off")  # compute, never recall
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    done = subprocess.run(
        [sys.executable, __file__, "--child", who, fabric, computation, str(out)],
        capture_output=True, text=True, env=env, cwd=ROOT, check=False, timeout=1800,
    )  # fmt: skip
    if done.returncode:
        raise RuntimeError(f"{who} {fabric} {computation} from {source} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def _same(computation: str, ours: Path, theirs: Path) -> bool:
    import numpy as np

    a, b = np.load(ours), np.load(theirs)
    if computation in ("hop histogram", "hops, full BFS"):
        width = max(len(a), len(b))
        return bool(np.array_equal(np.pad(a, (0, width - len(a))), np.pad(b, (0, width - len(b)))))
    if computation == "path counts":
        a = a.copy()
        np.fill_diagonal(a, 1.0)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-9, atol=1e-9))


def _trnsim_runs(fabric, computation, folder: Path, source: Path, quick: bool) -> dict:
    """Cold (a fresh numba cache: compilation included), then first and warm with that cache; with
    ``quick``, no cold run and the checkout's own numba cache (warm once it has run)."""
    cache = None if quick else Path(tempfile.mkdtemp(prefix="numba-", dir=folder))
    out = folder / f"{source.name}-{fabric}-{computation}.npy"
    cold = None if quick else _run_child("trnsim", fabric, computation, out, source, cache)
    warm = _run_child("trnsim", fabric, computation, out, source, cache)
    return {"out": out, "cold": cold["times"]["first"][0] if cold else None,
            "first": warm["times"]["first"][0], "warm": warm["times"]["warm"][0],
            "peak_mb": warm["peak_mb"]}  # fmt: skip


def _libraries_available() -> list[str]:
    found = [name for name in LIBRARIES if importlib.util.find_spec(name) is not None]
    for name in sorted(set(LIBRARIES) - set(found)):
        print(f"  {name} is not installed, so it is left out: {INSTALL}")
    return found


def _cases(args, folder: Path) -> list[Goal]:
    libraries = _libraries_available()
    before_tree = getattr(args, "before_tree", None)
    quick = getattr(args, "quick", False)
    goals = []
    header = f"  {'fabric':15} {'computation':15} {'before':>7} {'now':>7} {'first':>7} {'cold':>7}"
    print(header + f" {'igraph':>7} {'rustwx':>7} {'ratio':>6}  identical      peak MB now/ig/rx")
    for fabric in FABRICS:
        for computation in COMPUTATIONS:
            if computation == "hop histogram" and fabric == "switched-2304":
                continue  # the full BFS already: no closed form off a torus
            now = _trnsim_runs(fabric, computation, folder, ROOT, quick)
            before = _trnsim_runs(fabric, computation, folder, before_tree, True) if before_tree else None
            refs, same, peaks = {}, [], [f"{now['peak_mb']:.0f}"]
            for library in libraries:
                out = folder / f"{library}-{fabric}-{computation}.npy"
                got = _run_child(library, fabric, computation, out, ROOT, None)
                peaks.append(f"{got['peak_mb']:.0f}" if got["times"] else "-")
                if got["times"]:
                    refs[library] = got["times"]["warm"][0]
                    same.append(f"{library[:2]} {'yes' if _same(computation, now['out'], out) else 'NO'}")
            best = min(refs.values()) if refs else None
            cells = [before["warm"] if before else None, now["warm"], now["first"], now["cold"]]
            cells += [refs.get(name) for name in LIBRARIES]
            text = " ".join(f"{v:7.3f}" if v is not None else f"{'-':>7}" for v in cells)
            ratio = f"{now['warm'] / best:6.2f}" if best else f"{'-':>6}"
            print(
                f"  {fabric:15} {computation:15} {text} {ratio}  {', '.join(same) or '-':14} {'/'.join(peaks)}"
            )
            if best:
                goals.append(Goal(f"{fabric} {computation} (CPU) vs best library", now["warm"], best, 1.0,
                                  before=before["warm"] if before else None))  # fmt: skip
    return goals


# ---- whole processes -----------------------------------------------------------------------------

# runs `trnsim ARGS` (or the igraph script) and writes its peak memory (kB) on stderr at exit
_WRAPPER = (
    "import atexit, runpy, sys\n"
    "def peak():\n"
    "    lines = open('/proc/self/status').read().splitlines()\n"
    "    sys.stderr.write('@@ ' + next(l.split()[1] for l in lines if l.startswith('VmHWM:')) + '\\n')\n"
    "atexit.register(peak)\n"
    "mode, sys.argv = sys.argv[1], sys.argv[1:]\n"
    "if mode == 'trnsim':\n"
    "    runpy.run_module('trnsim', run_name='__main__')\n"
    "else:\n"
    "    exec(sys.argv[1], {'__name__': '__main__'})\n"
)
_IGRAPH_PROCESS = (
    "import sys\n"
    "import igraph\n"
    "from trnsim.topology import load_topology\n"
    "from trnsim.topology.arrays import graph_arrays\n"
    "topo = load_topology(None, sys.argv[2])\n"
    "arrays = graph_arrays(topo)\n"
    "m, chips = len(arrays.edge_ends), range(topo.n_ranks)\n"
    "graph = igraph.Graph(n=arrays.n_nodes, edges=list(zip(arrays.src[:m].tolist(), arrays.dst[:m].tolist())))\n"
    "print(max(graph.edge_betweenness(directed=False, sources=chips, targets=chips)))\n"
)


def _process(
    command: list[str], source: Path, cache: Path | None = None, results: Path | None = None
) -> tuple[float, float, float]:
    """CPU seconds (interpreter start-up included), wall seconds and peak memory (GB) of a process;
    ``cache`` is numba's cache folder, ``results`` trnsim's own disk cache (off when None: computed)."""
    env = tree_env(source, COLUMNS="200", TRNSIM_CACHE="off")
    if results is not None:
        env.update(TRNSIM_CACHE="on", TRNSIM_CACHE_DIR=str(results))
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    start = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        child = subprocess.Popen([sys.executable, "-c", _WRAPPER, *command], stdout=subprocess.DEVNULL,
                                 stderr=errors, env=env, cwd=source)  # fmt: skip
        _, status, usage = os.wait4(child.pid, 0)  # the child's own rusage: CPU with start-up
        wall = time.perf_counter() - start
        errors.seek(0)
        lines = errors.read().decode().splitlines()
    peak = [line.split()[1] for line in lines if line.startswith("@@ ")]
    if os.waitstatus_to_exitcode(status) or not peak:
        raise RuntimeError(f"{' '.join(command)} from {source} failed: {lines[-20:]}")
    return usage.ru_utime + usage.ru_stime, wall, float(peak[-1]) / 1e6


def _processes(args, folder: Path) -> list[Goal]:
    before_tree = getattr(args, "before_tree", None)
    have_igraph = importlib.util.find_spec("igraph") is not None
    have_results_cache = (ROOT / "trnsim" / "cache.py").exists()
    print(
        "\n  whole processes (CPU s with interpreter start-up, wall s, peak GB); cold: a fresh numba cache;"
    )
    print("  trnsim's own disk cache off (TRNSIM_CACHE=off) but in the 'answer recalled' row")
    goals = []
    for fabric, label, sizes in PROCESSES:
        command = ["trnsim", "collective", "alltoall", "--topology", str(FABRICS[fabric])]
        rows = []
        for name, source in (("before", before_tree), ("now", ROOT)):
            if source is None:
                continue
            cache = Path(tempfile.mkdtemp(prefix="numba-", dir=folder))
            rows.append((f"{name} (cold)", _process(command + sizes, source, cache)))
            rows.append((name, _process(command + sizes, source, cache)))
        if have_results_cache:  # a repeated question is recalled from trnsim's disk cache
            results = Path(tempfile.mkdtemp(prefix="results-", dir=folder))
            _process(command + sizes, ROOT, cache, results)
            rows.append(("now, answer recalled", _process(command + sizes, ROOT, cache, results)))
        if have_igraph:
            script = ["igraph", _IGRAPH_PROCESS, str(FABRICS[fabric])]
            rows.append(("igraph edge betweenness", _process(script, ROOT)))
        print(f"  {label}")
        for name, (cpu, wall, peak) in rows:
            print(f"    {name:26} {cpu:7.2f} s CPU {wall:7.2f} s wall {peak:5.2f} GB")
        found = dict(rows)
        if have_igraph:
            before = found.get("before", (None,))[0]
            goals.append(Goal(f"{label}, process (CPU) vs igraph EB process", found["now"][0],
                              found["igraph edge betweenness"][0], 1.0, before=before))  # fmt: skip
    return goals


def section(args) -> list[Goal]:
    print("\ngraph computations against igraph and rustworkx (CPU s of the call; each case a fresh process;")
    print("  now/before: compilation excluded; first: numba's disk cache warm; cold: after a cache wipe;")
    print("  ratio: now over the best library, goal <= 1)")
    with tempfile.TemporaryDirectory(prefix="trnsim-graphs-") as scratch:
        folder = Path(scratch)
        goals = _cases(args, folder)
        goals += _processes(args, folder)
    return goals


def main() -> None:
    run_alone(section, __doc__, "no cold (compiling) runs")


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        _child(*sys.argv[2:])
    else:
        main()
