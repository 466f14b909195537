"""Compiled graph kernels for big fabrics: BFS with path counts and latencies, hop histograms, ECMP
loads, and shortest-path loads under lengths (numba, compiled on first use and cached on disk).

The vectorised numpy routines of :mod:`trnsim.routing.shortest` and :mod:`trnsim.routing.ecmp` walk
every source at once, one level at a time; their work grows with sources x nodes x levels, which is
what a 4,096-chip mesh (45 levels) or a 2,304-chip fabric costs. These kernels walk one source at a
time with a queue (or a heap), so the work is sources x (nodes + edges), at compiled speed; the hop
histogram walks 64 sources at once, one bit each. They give the same numbers as the numpy routines
(tests hold them equal) and, on the benchmark fabrics, take less time than igraph and rustworkx on
the same work (``benchmarks/graphs.py``). Callers pick them above a size (:data:`COMPILED_FROM`):
below it the numpy routines are as fast as numba's start (about 0.45 s CPU per process with a warm
disk cache, seconds to compile on a first run), and catalog-sized runs never pay either.

Every kernel takes the graph as CSR over directed edges: ``starts`` (length n + 1) and ``edge_ids``
(directed edge indices sorted by tail), with ``dst`` the head of each directed edge; most take the
heads in CSR order (``adj = dst[edge_ids]``) instead, one indirection less per edge.
"""

import functools

import numpy as np

# sources x (nodes + directed edges) from which the compiled kernels are used. Measured near it, CPU,
# one call in a fresh process with numba's disk cache warm (its start included): all-pairs hop
# histogram and ECMP loads on a 30x30 mesh (3.9 M) numpy 0.37 s, compiled 0.49-0.53 s; on a 45x45
# mesh (20 M) numpy 0.83-1.08 s, compiled 0.46-0.56 s.
COMPILED_FROM = 4_000_000

_NAMES = ("bfs_all", "ecmp_demand", "length_loads", "flow_loads", "hop_counts", "nearby")
_KERNELS = None


def kernels():
    """The compiled kernels by name (numba is imported and the kernels compiled, or loaded from the
    disk cache, on first use only; a cache that fails is done without, see :mod:`.jitcache`)."""
    global _KERNELS
    if _KERNELS is None:
        from trnsim.routing.jitcache import Compiled

        module = Compiled("trnsim.routing._compiled")
        _KERNELS = {name: functools.partial(module.call, name) for name in _NAMES}
    return _KERNELS


def csr(src: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, edge_ids)``: directed edges sorted by tail, and where each node's run starts."""
    edge_ids = np.argsort(src, kind="stable").astype(np.int64)
    starts = np.searchsorted(src[edge_ids], np.arange(n + 1)).astype(np.int64)
    return starts, edge_ids


def bfs_all(
    arrays,
    sources: np.ndarray,
    transit: np.ndarray | None,
    with_latency: bool = True,
    columns: np.ndarray | None = None,
):
    """Distances (links, -1 unreachable) and shortest-path counts from each source to every node,
    and largest path latencies (ns) to the nodes ``columns`` (every node by default): the numbers of
    :func:`trnsim.routing.shortest.bfs` and :func:`~trnsim.routing.shortest.path_latency_ns`,
    without the DAG."""
    columns = np.arange(arrays.n_nodes) if columns is None else columns
    order, starts = arrays.out_edges
    forward = np.ones(arrays.n_nodes, dtype=np.bool_) if transit is None else transit.astype(np.bool_)
    return kernels()["bfs_all"](
        starts.astype(np.int64),
        np.ascontiguousarray(arrays.dst[order], dtype=np.int32),  # heads in CSR order
        np.ascontiguousarray(sources, dtype=np.int64),
        forward,
        np.ascontiguousarray(arrays.link_latency_ns[order], dtype=float),
        arrays.node_latency_ns.astype(float),
        with_latency,
        np.ascontiguousarray(columns, dtype=np.int64),
    )


def ecmp_demand_loads(
    arrays, sources: np.ndarray, transit: np.ndarray | None, demand: np.ndarray
) -> np.ndarray:
    """Bytes per directed edge when each source's demand row (bytes to each node) is split evenly
    over shortest paths: :func:`trnsim.routing.ecmp.ecmp_loads` without the DAG. A demand of one row
    is every source's."""
    forward = None if transit is None else transit.astype(np.bool_)
    order, starts = arrays.out_edges
    return demand_loads(arrays.src, arrays.dst, arrays.n_nodes, sources, forward, demand, (starts, order))


def demand_loads(src, dst, n_nodes: int, sources, forward, demand, out_csr=None) -> np.ndarray:
    """:func:`ecmp_demand_loads` on bare directed edges (``forward``: nodes that may relay, None for
    all); the CSR view ``(starts, edge_ids)`` is built when not given."""
    starts, edge_ids = out_csr if out_csr is not None else csr(src, n_nodes)
    forward = np.ones(n_nodes, dtype=np.bool_) if forward is None else forward
    demand = np.ascontiguousarray(np.atleast_2d(demand), dtype=float)
    edge_ids = np.ascontiguousarray(edge_ids, dtype=np.int64)
    return kernels()["ecmp_demand"](
        np.ascontiguousarray(starts, dtype=np.int64),
        np.ascontiguousarray(np.asarray(dst)[edge_ids], dtype=np.int32),  # heads in CSR order
        edge_ids,
        np.ascontiguousarray(sources, dtype=np.int64),
        np.ascontiguousarray(forward, dtype=np.bool_),
        demand,
        demand.shape[0] == 1 and len(sources) != 1,
    )


def hop_counts(arrays, nodes: np.ndarray, transit: np.ndarray | None) -> tuple[np.ndarray, int]:
    """How many ordered pairs of distinct ``nodes`` lie 0, 1, 2, ... links apart (entry ``d``), and
    how many ordered pairs cannot meet; ``transit``: nodes that may forward (all when None).

    A BFS per source, 64 sources advanced together as the bits of one word per node, and only the
    counts kept (no distance matrix); sources go in runs that lie close together, so that each run's
    BFS spans few levels."""
    order, starts = arrays.out_edges
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    adj = np.ascontiguousarray(arrays.dst[order], dtype=np.int64)
    forward = np.ones(arrays.n_nodes, dtype=np.bool_) if transit is None else transit.astype(np.bool_)
    target = np.zeros(arrays.n_nodes, dtype=np.bool_)
    target[nodes] = True
    runs = kernels()["nearby"](starts, adj, np.ascontiguousarray(nodes, dtype=np.int64), 64)
    counts, missing = kernels()["hop_counts"](starts, adj, forward, runs, target)
    return counts[: int(np.max(np.flatnonzero(counts), initial=0)) + 1], int(missing)


def flow_loads(arrays, dist, sigma, rows, flows, n_sets: int, transit: np.ndarray | None) -> np.ndarray:
    """Loads of sets of flows between group members, flow by flow, walking each flow's own
    shortest-path DAG backwards from its target (:func:`trnsim.routing.ecmp.pair_loads`'s numbers;
    the work is the flows' path sizes, not flows x nodes: for a graph of many small parts)."""
    src, dst, weight, owner = flows
    in_starts, in_ids = arrays.in_edges
    forward = np.ones(arrays.n_nodes, dtype=np.bool_) if transit is None else transit.astype(np.bool_)
    return kernels()["flow_loads"](
        in_starts,
        in_ids,
        arrays.src.astype(np.int64),
        len(arrays.src),
        forward,
        np.ascontiguousarray(dist, dtype=np.int32),  # one signature per kernel: see jitcache
        np.ascontiguousarray(sigma, dtype=float),
        np.ascontiguousarray(rows, dtype=np.int64),
        np.ascontiguousarray(src, dtype=np.int64),
        np.ascontiguousarray(rows, dtype=np.int64)[np.ascontiguousarray(dst, dtype=np.int64)],
        np.ascontiguousarray(weight, dtype=float),
        np.ascontiguousarray(owner, dtype=np.int64),
        n_sets,
    )
