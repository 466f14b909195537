"""Vectorised shortest-path machinery: BFS with path counts, ECMP link loads, path latencies.

Everything works on numpy arrays of directed edges, many sources at once, so no Python loop runs per
pair of chips. ECMP splits a flow evenly over all shortest paths (fewest links): the bytes a flow
from ``s`` puts on the directed edge ``u -> v`` are its share ``sigma_s(u) / sigma_s(v)`` of what
enters ``v`` towards its destinations (Brandes' dependency accumulation, one BFS level at a time).
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from trnsim import limits
from trnsim.topology.graph import Topology


@dataclass(frozen=True)
class HopStats:
    """Shortest-path statistics over unordered pairs of distinct chips."""

    pairs: int
    diameter_links: int
    avg_links: float
    histogram_links: dict[int, int]

    @property
    def diameter_hops(self) -> int:
        # a one-chip system has no pairs: diameter 0 links and 0 hops, not -1
        return max(self.diameter_links - 1, 0)

    @property
    def avg_hops(self) -> float:
        return max(self.avg_links - 1, 0.0)

    @property
    def histogram_hops(self) -> dict[int, int]:
        return {links - 1: count for links, count in self.histogram_links.items()}


@dataclass
class GraphArrays:
    """A topology as arrays: nodes (chips first, in rank order) and directed edges."""

    nodes: list[str]
    n_chips: int
    src: np.ndarray  # directed edge tail (node index)
    dst: np.ndarray  # directed edge head
    edge: np.ndarray  # undirected edge index of each directed edge
    bw_gbps: np.ndarray  # per directed edge
    link_latency_ns: np.ndarray  # per directed edge
    node_latency_ns: np.ndarray  # per node, paid when a path passes through it
    edge_cls: list[str]  # per undirected edge
    edge_ends: list[tuple[str, str]]  # per undirected edge

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @cached_property
    def index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.nodes)}

    @cached_property
    def out_edges(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR view: directed edges sorted by tail, and where each node's run starts (length n + 1)."""
        order = np.argsort(self.src, kind="stable")
        return order, np.searchsorted(self.src[order], np.arange(self.n_nodes + 1))

    def expand(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each entry of ``nodes``, its out-edges: (index into ``nodes``, directed edge)."""
        order, starts = self.out_edges
        degree = starts[nodes + 1] - starts[nodes]
        owner = np.repeat(np.arange(len(nodes)), degree)
        offsets = np.arange(degree.sum()) - np.repeat(np.cumsum(degree) - degree, degree)
        return owner, order[np.repeat(starts[nodes], degree) + offsets]


def graph_arrays(topology: Topology) -> GraphArrays:
    """Arrays for a topology (cached on the topology object)."""
    cached = topology.__dict__.get("_arrays")
    if cached is not None:
        return cached
    nodes = list(topology.chips) + topology.switches
    index = {name: i for i, name in enumerate(nodes)}
    ends = list(topology.links)
    data = list(topology.links.values())
    m = len(ends)
    u_idx = np.fromiter((index[u] for u, _ in ends), dtype=np.int64, count=m)
    v_idx = np.fromiter((index[v] for _, v in ends), dtype=np.int64, count=m)
    bw = np.fromiter((d["bw_gbps"] for d in data), dtype=float, count=m)
    lat = np.fromiter((d["latency_ns"] for d in data), dtype=float, count=m)
    arrays = GraphArrays(
        nodes=nodes,
        n_chips=topology.n_chips,
        src=np.concatenate([u_idx, v_idx]),
        dst=np.concatenate([v_idx, u_idx]),
        edge=np.concatenate([np.arange(m), np.arange(m)]),
        bw_gbps=np.tile(bw, 2),
        link_latency_ns=np.tile(lat, 2),
        node_latency_ns=np.asarray([topology.nodes[n]["latency_ns"] for n in nodes], dtype=float),
        edge_cls=[d["cls"] for d in data],
        edge_ends=ends,
    )
    topology.__dict__["_arrays"] = arrays
    return arrays


@dataclass
class BFS:
    """Distances (links) and shortest-path counts from a set of source nodes to every node."""

    sources: np.ndarray  # node indices, one per row
    dist: np.ndarray  # rows x nodes, -1 where unreachable
    sigma: np.ndarray  # rows x nodes, number of shortest paths
    # the shortest-path DAG, level by level: (row, directed edge) pairs whose head is at that level
    dag: list[tuple[np.ndarray, np.ndarray]]


def bfs(arrays: GraphArrays, sources: np.ndarray) -> BFS:
    """Level-synchronous BFS from every source at once, counting shortest paths.

    Parameters
    ----------
    arrays : GraphArrays
        The graph.
    sources : array of int
        Node indices to start from (one row each).
    """
    sources = np.asarray(sources, dtype=np.int64)
    rows, n = len(sources), arrays.n_nodes
    dist = np.full((rows, n), -1, dtype=np.int32)
    sigma = np.zeros((rows, n), dtype=float)
    row_ids = np.arange(rows)
    dist[row_ids, sources] = 0
    sigma[row_ids, sources] = 1.0
    frontier_rows, frontier_nodes = row_ids, sources
    src, dst = arrays.src, arrays.dst
    dag = []
    level = 0
    while len(frontier_rows):
        level += 1
        owner, edges = arrays.expand(frontier_nodes)
        rep_rows = frontier_rows[owner]
        heads = dst[edges]
        fresh = dist[rep_rows, heads] < 0
        rep_rows, edges, heads = rep_rows[fresh], edges[fresh], heads[fresh]
        if len(edges):
            dag.append((rep_rows, edges))
        flat = rep_rows * n + heads
        counts = np.bincount(flat, weights=sigma[rep_rows, src[edges]], minlength=rows * n)
        # every newly reached node got at least one path, so a positive count marks it
        reached = np.flatnonzero(np.bincount(flat, minlength=rows * n))
        frontier_rows, frontier_nodes = reached // n, reached % n
        dist[frontier_rows, frontier_nodes] = level
        sigma[frontier_rows, frontier_nodes] = counts[reached]
    return BFS(sources=sources, dist=dist, sigma=sigma, dag=dag)


def ecmp_loads(arrays: GraphArrays, result: BFS, demand: np.ndarray) -> np.ndarray:
    """Bytes on each directed edge when every row's demand is split evenly over shortest paths.

    Parameters
    ----------
    arrays : GraphArrays
        The graph.
    result : BFS
        BFS from the demand's source nodes (row ``r`` starts at ``result.sources[r]``).
    demand : ndarray, rows x nodes
        Bytes each source sends to each node.

    Returns
    -------
    ndarray
        Bytes per directed edge (length ``2 * edges``), summed over all sources.
    """
    rows_n, n = demand.shape
    through = demand.astype(float).copy()  # bytes entering each node that are bound for it or beyond
    loads = np.zeros(len(arrays.src))
    for r, e in reversed(result.dag):
        u, v = arrays.src[e], arrays.dst[e]
        share = result.sigma[r, u] / result.sigma[r, v] * through[r, v]
        loads += np.bincount(e, weights=share, minlength=len(loads))
        through += np.bincount(r * n + u, weights=share, minlength=rows_n * n).reshape(rows_n, n)
    return loads


def path_latency_ns(arrays: GraphArrays, result: BFS) -> np.ndarray:
    """Largest latency over the shortest paths from each source to each node (rows x nodes).

    A path's latency is the sum of its links' latencies plus the latency of every device it passes
    through (not counting its two ends).
    """
    n = arrays.n_nodes
    latency = np.zeros(result.dist.shape)
    for level, (r, e) in enumerate(result.dag, start=1):
        u, v = arrays.src[e], arrays.dst[e]
        through_u = arrays.node_latency_ns[u] if level > 1 else 0.0
        candidate = latency[r, u] + through_u + arrays.link_latency_ns[e]
        # the largest candidate per (row, head): sort by target, then reduce each run
        flat = r * n + v
        order = np.lexsort((candidate, flat))
        flat, candidate = flat[order], candidate[order]
        last = np.r_[flat[1:] != flat[:-1], True]
        latency.reshape(-1)[flat[last]] = candidate[last]
    return latency


def _source_chunks(arrays: GraphArrays, sources: np.ndarray, budget: int = 4_000_000):
    """Split sources so that one BFS keeps about ``budget`` (row, edge) entries in flight.

    Yields ``(position of the chunk's first source, chunk)``.
    """
    size = max(1, budget // max(len(arrays.src), 1))
    for lo in range(0, len(sources), size):
        yield lo, sources[lo : lo + size]


def _ring_distance_counts(size: int, wrap: bool) -> np.ndarray:
    """How many ordered coordinate pairs of one axis lie 0, 1, 2, ... links apart."""
    a = np.arange(size)
    gap = np.abs(a[:, None] - a[None, :])
    if wrap:
        gap = np.minimum(gap, size - gap)
    return np.bincount(gap.ravel())


def hop_histogram(topology: Topology, chips: list[str] | None = None):
    """Hop statistics over unordered pairs of distinct chips (all chips by default).

    On a torus the distance is the sum of per-axis ring distances and coordinates pair up
    independently, so the histogram over all chips is the convolution of the axes' histograms: exact
    and instant at any size. Otherwise a BFS from every chip, in chunks that bound memory.
    """

    if chips is None and topology.spec.kind == "torus":
        ordered = np.array([1], dtype=np.int64)
        for axis in topology.spec.torus.axes:
            ordered = np.convolve(ordered, _ring_distance_counts(axis.size, axis.wrap))
        ordered[0] -= topology.n_chips  # a chip and itself
        counts = ordered // 2
        links = np.flatnonzero(counts)
        histogram = {int(d): int(counts[d]) for d in links}
    else:
        arrays = graph_arrays(topology)
        names = chips if chips is not None else topology.chips
        idx = np.asarray([arrays.index[c] for c in names], dtype=np.int64)
        limits.PAIRS_WORK.check(
            len(idx) * (arrays.n_nodes + len(arrays.src)),
            f"{topology.where}: all-pairs hop statistics over {len(idx):,} chips need",
        )
        total = np.zeros(1, dtype=np.int64)
        for start, chunk in _source_chunks(arrays, idx):
            d = bfs(arrays, chunk).dist[:, idx]
            # each unordered pair once: only targets after the source in the list
            keep = np.arange(len(idx))[None, :] > (start + np.arange(len(chunk)))[:, None]
            found = np.bincount(d[keep])
            width = max(len(found), len(total))
            total = np.pad(total, (0, width - len(total))) + np.pad(found, (0, width - len(found)))
        histogram = {int(v): int(total[v]) for v in np.flatnonzero(total)}
    pairs = sum(histogram.values())
    return HopStats(
        pairs=pairs,
        diameter_links=max(histogram, default=0),
        avg_links=sum(d * c for d, c in histogram.items()) / pairs if pairs else 0.0,
        histogram_links=histogram,
    )


def alltoall_link_loads(topology: Topology) -> np.ndarray:
    """Bytes on every directed edge when every chip sends one byte to every other chip over ECMP.

    Summed over both directions and halved, this is networkx's
    ``edge_betweenness_centrality_subset(G, chips, chips, normalized=False)``. On a torus with every
    axis wrapped, one source's loads summed over each edge's translation orbit give the answer.
    """
    from trnsim.topology.symmetry import torus_symmetry

    arrays = graph_arrays(topology)
    chips = np.arange(topology.n_chips)  # chips come first in node order
    symmetry = torus_symmetry(topology)
    if symmetry is not None:
        result = bfs(arrays, np.array([0]))
        demand = np.zeros((1, arrays.n_nodes))
        demand[0, 1 : topology.n_chips] = 1.0
        from_zero = ecmp_loads(arrays, result, demand)
        orbit = symmetry.edge_orbits(arrays.src, arrays.dst)
        return np.bincount(orbit, weights=from_zero)[orbit]
    loads = np.zeros(len(arrays.src))
    for _, chunk in _source_chunks(arrays, chips):
        demand = np.zeros((len(chunk), arrays.n_nodes))
        demand[:, : topology.n_chips] = 1.0
        demand[np.arange(len(chunk)), chunk] = 0.0
        loads += ecmp_loads(arrays, bfs(arrays, chunk), demand)
    return loads
