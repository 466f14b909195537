"""Vectorised shortest-path machinery: BFS with path counts, path latencies.

Everything works on numpy arrays of directed edges (:class:`trnsim.topology.arrays.GraphArrays`),
many sources at once, so no Python loop runs per pair of chips. The routing policies
(:mod:`trnsim.routing.ecmp`, ``single``, ``hashed``) build on it.
"""

from dataclasses import dataclass

import numpy as np

from trnsim.topology.arrays import GraphArrays


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
    """BFS from every source at once, counting shortest paths.

    Parameters
    ----------
    arrays : GraphArrays
        The graph.
    sources : array of int
        Node indices to start from (one row each).
    transit : array of bool, optional
        Nodes a path may pass through (all when None); the others are reached but not left, so
        they can only end a path (see :func:`transit_mask`).

    Notes
    -----
    Where every node forwards, distances come from scipy's compiled BFS and the shortest-path DAG is
    read off them (an edge ``u -> v`` is on it when ``d(v) = d(u) + 1``), so the work is the DAG's
    size, not one pass over every (source, node) per level; that matters on graphs of large diameter
    (a 16x16x16 mesh has 45 levels). With transit restrictions the level-synchronous walk is used.
    """
    sources = np.asarray(sources, dtype=np.int64)
    if transit is None and len(sources) * arrays.n_nodes >= _COMPILED_FROM:
        return _bfs_from_distances(arrays, sources)
    return _bfs_levels(arrays, sources, transit)


# below this many (source, node) entries the level-synchronous walk is as fast and needs no scipy
_COMPILED_FROM = 1 << 16


def _bfs_from_distances(arrays: GraphArrays, sources: np.ndarray) -> BFS:
    rows, n = len(sources), arrays.n_nodes
    dist = distances(arrays, sources)
    src, dst = arrays.src, arrays.dst
    # node-major distances: gathering an edge's ends reads whole rows (cache-friendly)
    narrow = np.int16 if n < 32767 else np.int32
    by_node = np.ascontiguousarray(dist.T.astype(narrow))
    # (edge, row) on the DAG (d(v) = d(u) + 1), in blocks of edges so that edges x rows stays bounded
    pieces_r, pieces_e, pieces_l = [], [], []
    block = max(1, _DAG_BLOCK // max(rows, 1))
    for lo in range(0, len(src), block):
        tail = by_node[src[lo : lo + block]]
        head = by_node[dst[lo : lo + block]]
        e, r = np.nonzero((tail >= 0) & (head == tail + 1))
        pieces_r.append(r.astype(np.int32))
        pieces_e.append((e + lo).astype(np.int32))
        pieces_l.append(head[e, r])
    del by_node
    r = np.concatenate(pieces_r) if pieces_r else np.zeros(0, dtype=np.int32)
    e = np.concatenate(pieces_e) if pieces_e else np.zeros(0, dtype=np.int32)
    level = np.concatenate(pieces_l) if pieces_l else np.zeros(0, dtype=narrow)
    order = np.argsort(level, kind="stable")  # radix sort on 16-bit levels
    r, e, level = r[order], e[order], level[order]
    bounds = np.searchsorted(level, np.arange(1, int(level.max(initial=0)) + 2))
    sigma = np.zeros((rows, n), dtype=float)
    sigma[np.arange(rows), sources] = 1.0
    flat = sigma.reshape(-1)
    dag = []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        rl, el = r[lo:hi], e[lo:hi]
        dag.append((rl, el))
        base = rl.astype(np.int64) * n
        np.add.at(flat, base + dst[el], flat[base + src[el]])
    return BFS(sources=sources, dist=dist, sigma=sigma, dag=dag)


_DAG_BLOCK = 1 << 24  # (row, edge) comparisons per block of the DAG extraction


def distances(arrays: GraphArrays, sources: np.ndarray) -> np.ndarray:
    """Hops from each source (a row) to every node, -1 where unreachable (int32).

    A small search runs level by level on numpy (:func:`_frontier_distances`), which needs no scipy:
    importing scipy costs about 0.3 s, more than the whole search on a rack-scale system such as
    NL72x2; a larger one, or one that turns out deeper than :data:`_FRONTIER_WORK` allows, is
    scipy's compiled BFS. Both give the same matrix.
    """
    found = _frontier_distances(arrays, sources, _FRONTIER_WORK)
    if found is not None:
        return found
    from scipy.sparse.csgraph import shortest_path

    found = shortest_path(arrays.unit_csr, method="D", unweighted=True, directed=True, indices=sources)
    found = np.atleast_2d(found)
    return np.where(np.isfinite(found), found, -1).astype(np.int32)


# (source, directed edge) visits the numpy search may make in all, past which scipy's is used
_FRONTIER_WORK = 1 << 24


def _frontier_distances(arrays: GraphArrays, sources: np.ndarray, work: int) -> np.ndarray | None:
    """:func:`distances` by expanding every source's frontier one level at a time (a node is reached
    when any edge into it leaves the frontier), or None once ``work`` visits would be exceeded."""
    rows, n, edges = len(sources), arrays.n_nodes, len(arrays.src)
    if rows * edges > work:
        return None
    order = np.argsort(arrays.dst, kind="stable")
    heads, tails = arrays.dst[order], arrays.src[order]
    reached = np.unique(heads)  # the nodes with an edge in, and where their edges start
    starts = np.searchsorted(heads, reached)
    dist = np.full((rows, n), -1, dtype=np.int32)
    dist[np.arange(rows), sources] = 0
    seen = dist >= 0
    frontier, level, done = seen, 0, 0
    while True:
        done += rows * edges
        if done > work:
            return None
        level += 1
        near = np.zeros((rows, n), dtype=bool)
        if len(reached):
            near[:, reached] = np.logical_or.reduceat(frontier[:, tails], starts, axis=1)
        frontier = near & ~seen
        if not frontier.any():
            return dist
        dist[frontier] = level
        seen |= frontier


def _bfs_levels(arrays: GraphArrays, sources: np.ndarray, transit: np.ndarray | None) -> BFS:
    """Level-synchronous BFS from every source at once (any transit restriction)."""
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
            dag.append((rep_rows.astype(np.int32), edges.astype(np.int32)))
        flat = rep_rows * n + heads
        # sums per newly reached (row, node): sort once instead of a pass over every (row, node)
        reached, inverse = np.unique(flat, return_inverse=True)
        counts = np.bincount(inverse, weights=sigma[rep_rows, src[edges]], minlength=len(reached))
        frontier_rows, frontier_nodes = reached // n, reached % n
        dist[frontier_rows, frontier_nodes] = level
        sigma[frontier_rows, frontier_nodes] = counts
    return BFS(sources=sources, dist=dist, sigma=sigma, dag=dag)


def path_latency_ns(arrays: GraphArrays, result: BFS) -> np.ndarray:
    """Largest latency over the shortest paths from each source to each node (rows x nodes).

    A path's latency is the sum of its links' latencies plus the latency of every device it passes
    through (not counting its two ends).
    """
    n = arrays.n_nodes
    latency = np.zeros(result.dist.shape)
    flat_latency = latency.reshape(-1)
    for level, (r, e) in enumerate(result.dag, start=1):
        u, v = arrays.src[e], arrays.dst[e]
        base = r.astype(np.int64) * n
        through_u = arrays.node_latency_ns[u] if level > 1 else 0.0
        candidate = flat_latency[base + u] + through_u + arrays.link_latency_ns[e]
        np.maximum.at(flat_latency, base + v, candidate)  # the largest candidate per (row, head)
    return latency


def source_chunks(arrays: GraphArrays, sources: np.ndarray, budget: int = 4_000_000):
    """Split sources so that one BFS keeps about ``budget`` (row, edge) entries in flight.

    Yields ``(position of the chunk's first source, chunk)``.
    """
    size = max(1, budget // max(len(arrays.src), 1))
    for lo in range(0, len(sources), size):
        yield lo, sources[lo : lo + size]
