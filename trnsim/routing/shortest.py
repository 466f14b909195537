"""Vectorised shortest-path machinery: a topology as arrays, BFS with path counts, path latencies.

Everything works on numpy arrays of directed edges, many sources at once, so no Python loop runs per
pair of chips. The routing policies (:mod:`trnsim.routing.ecmp`, ``single``, ``hashed``) build on it.
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from trnsim.topology.graph import Topology


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
    # each node's index in the whole topology (a sub-graph keeps them, so that rules that key on a
    # node, like destination routing, choose alike on the sub-graph and on the whole)
    ids: np.ndarray | None = None

    @property
    def node_ids(self) -> np.ndarray:
        return self.ids if self.ids is not None else np.arange(self.n_nodes)

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


def transit_mask(arrays: GraphArrays, relay: bool) -> np.ndarray | None:
    """Which nodes a path may pass through: every node, or (without relay) switches only."""
    if relay:
        return None
    return np.arange(arrays.n_nodes) >= arrays.n_chips


def bfs(arrays: GraphArrays, sources: np.ndarray, transit: np.ndarray | None = None) -> BFS:
    """Level-synchronous BFS from every source at once, counting shortest paths.

    Parameters
    ----------
    arrays : GraphArrays
        The graph.
    sources : array of int
        Node indices to start from (one row each).
    transit : array of bool, optional
        Nodes a path may pass through (all when None); the others are reached but not left, so
        they can only end a path (see :func:`transit_mask`).
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
        if transit is not None and level:
            keep = transit[frontier_nodes]
            frontier_rows, frontier_nodes = frontier_rows[keep], frontier_nodes[keep]
            if not len(frontier_rows):
                break
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


def source_chunks(arrays: GraphArrays, sources: np.ndarray, budget: int = 4_000_000):
    """Split sources so that one BFS keeps about ``budget`` (row, edge) entries in flight.

    Yields ``(position of the chunk's first source, chunk)``.
    """
    size = max(1, budget // max(len(arrays.src), 1))
    for lo in range(0, len(sources), size):
        yield lo, sources[lo : lo + size]
