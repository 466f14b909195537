"""Compiled graph kernels for big fabrics: BFS with path counts and latencies, ECMP loads, and
shortest-path loads under lengths (numba, compiled on first use and cached on disk).

The vectorised numpy routines of :mod:`trnsim.routing.shortest` and :mod:`trnsim.routing.ecmp` walk
every source at once, one level at a time; their work grows with sources x nodes x levels, which is
what a 4,096-chip mesh (45 levels) or a 2,304-chip fabric costs. These kernels walk one source at a
time with a queue (or a heap), so the work is sources x (nodes + edges), at compiled speed. They give
the same numbers as the numpy routines (tests hold them equal); callers pick them above a size
(:data:`COMPILED_FROM`) so that catalog-sized runs never pay the compilation.

Every kernel takes the graph as CSR over directed edges: ``starts`` (length n + 1) and ``edge_ids``
(directed edge indices sorted by tail), with ``dst`` the head of each directed edge.
"""

import numpy as np

# sources x (nodes + directed edges) from which the compiled kernels are used
COMPILED_FROM = 4_000_000

_KERNELS = None


def kernels():
    """The compiled kernels (numba is imported and the kernels compiled, or loaded from the disk
    cache, on first use only)."""
    global _KERNELS
    if _KERNELS is None:
        _KERNELS = _compile()
    return _KERNELS


def _compile():
    import heapq

    import numba

    jit = numba.njit(cache=True, nogil=True)

    @jit
    def bfs_all(starts, edge_ids, dst, sources, transit, link_lat, node_lat, with_latency):
        rows, n = sources.shape[0], starts.shape[0] - 1
        dist = np.full((rows, n), -1, np.int32)
        sigma = np.zeros((rows, n))
        latency = np.zeros((rows, n)) if with_latency else np.zeros((1, 1))
        queue = np.empty(n, np.int64)
        for r in range(rows):
            s = sources[r]
            dist[r, s] = 0
            sigma[r, s] = 1.0
            first, last = 0, 1
            queue[0] = s
            while first < last:
                u = queue[first]
                first += 1
                if u != s and not transit[u]:
                    continue  # reached, but it may not forward
                du = dist[r, u]
                through = node_lat[u] if u != s else 0.0
                for k in range(starts[u], starts[u + 1]):
                    e = edge_ids[k]
                    v = dst[e]
                    if dist[r, v] < 0:
                        dist[r, v] = du + 1
                        queue[last] = v
                        last += 1
                    if dist[r, v] == du + 1:
                        sigma[r, v] += sigma[r, u]
                        if with_latency:
                            candidate = latency[r, u] + through + link_lat[e]
                            if candidate > latency[r, v]:
                                latency[r, v] = candidate
        return dist, sigma, latency

    @jit
    def ecmp_demand(starts, edge_ids, dst, n_edges, sources, transit, demand, shared):
        n = starts.shape[0] - 1
        loads = np.zeros(n_edges)
        dist = np.empty(n, np.int32)
        sigma = np.empty(n)
        through = np.empty(n)
        order = np.empty(n, np.int64)
        for r in range(sources.shape[0]):
            s = sources[r]
            row = 0 if shared else r
            dist[:] = -1
            sigma[:] = 0.0
            dist[s] = 0
            sigma[s] = 1.0
            first, last = 0, 1
            order[0] = s
            while first < last:
                u = order[first]
                first += 1
                if u != s and not transit[u]:
                    continue
                for k in range(starts[u], starts[u + 1]):
                    v = dst[edge_ids[k]]
                    if dist[v] < 0:
                        dist[v] = dist[u] + 1
                        order[last] = v
                        last += 1
                    if dist[v] == dist[u] + 1:
                        sigma[v] += sigma[u]
            for i in range(last):
                u = order[i]
                through[u] = demand[row, u] if u != s else 0.0
            for i in range(last - 1, -1, -1):
                u = order[i]
                if u != s and not transit[u]:
                    continue
                for k in range(starts[u], starts[u + 1]):
                    e = edge_ids[k]
                    v = dst[e]
                    if dist[v] == dist[u] + 1 and through[v] != 0.0:
                        share = sigma[u] / sigma[v] * through[v]
                        loads[e] += share
                        through[u] += share
        return loads

    @jit
    def length_loads(starts, edge_ids, dst, n_edges, lengths, sources, members, weight, tol):
        n = starts.shape[0] - 1
        loads = np.zeros(n_edges)
        dist = np.empty(n)
        sigma = np.empty(n)
        through = np.empty(n)
        settled = np.zeros(n, np.bool_)
        order = np.empty(n, np.int64)
        total = 0.0
        for s in sources:
            dist[:] = np.inf
            sigma[:] = 0.0
            settled[:] = False
            dist[s] = 0.0
            heap = [(0.0, s)]
            count = 0
            while len(heap) > 0:
                d, u = heapq.heappop(heap)
                if settled[u]:
                    continue
                settled[u] = True
                order[count] = u
                count += 1
                for k in range(starts[u], starts[u + 1]):
                    e = edge_ids[k]
                    v = dst[e]
                    candidate = d + lengths[e]
                    if candidate < dist[v]:
                        dist[v] = candidate
                        heapq.heappush(heap, (candidate, v))
            sigma[s] = 1.0
            for i in range(count):  # settled order: every tail before its heads (lengths > tol)
                u = order[i]
                for k in range(starts[u], starts[u + 1]):
                    e = edge_ids[k]
                    v = dst[e]
                    if dist[u] + lengths[e] <= dist[v] + tol:
                        sigma[v] += sigma[u]
            for t in range(n):
                if members[t] and t != s:
                    if not settled[t]:
                        return np.inf, loads
                    total += weight * dist[t]
            for i in range(count):
                u = order[i]
                through[u] = weight if (members[u] and u != s) else 0.0
            for i in range(count - 1, -1, -1):
                u = order[i]
                for k in range(starts[u], starts[u + 1]):
                    e = edge_ids[k]
                    v = dst[e]
                    if dist[u] + lengths[e] <= dist[v] + tol and through[v] != 0.0:
                        share = sigma[u] / sigma[v] * through[v]
                        loads[e] += share
                        through[u] += share
        return total, loads

    @jit
    def flow_loads(
        in_starts,
        in_ids,
        src,
        n_edges,
        transit,
        dist,
        sigma,
        rows,
        flow_row,
        flow_dst,
        weight,
        flow_set,
        n_sets,
    ):
        n = in_starts.shape[0] - 1
        loads = np.zeros((n_sets, n_edges))
        through = np.zeros(n)
        seen = np.full(n, -1, np.int64)
        queue = np.empty(n, np.int64)
        for f in range(flow_row.shape[0]):
            r, t = flow_row[f], flow_dst[f]
            if dist[r, t] <= 0 or weight[f] == 0.0:
                continue
            s = rows[r]
            through[t] = weight[f]
            seen[t] = f
            first, last = 0, 1
            queue[0] = t
            while first < last:  # backwards from t over the shortest-path DAG, farthest level first
                v = queue[first]
                first += 1
                if v == s:
                    continue
                dv = dist[r, v]
                for k in range(in_starts[v], in_starts[v + 1]):
                    e = in_ids[k]
                    u = src[e]
                    if dist[r, u] != dv - 1 or (u != s and not transit[u]):
                        continue
                    share = sigma[r, u] / sigma[r, v] * through[v]
                    loads[flow_set[f], e] += share
                    if seen[u] != f:
                        seen[u] = f
                        through[u] = 0.0
                        queue[last] = u
                        last += 1
                    through[u] += share
        return loads

    return {
        "bfs_all": bfs_all,
        "ecmp_demand": ecmp_demand,
        "length_loads": length_loads,
        "flow_loads": flow_loads,
    }


def csr(src: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, edge_ids)``: directed edges sorted by tail, and where each node's run starts."""
    edge_ids = np.argsort(src, kind="stable").astype(np.int64)
    starts = np.searchsorted(src[edge_ids], np.arange(n + 1)).astype(np.int64)
    return starts, edge_ids


def bfs_all(arrays, sources: np.ndarray, transit: np.ndarray | None, with_latency: bool = True):
    """Distances (links, -1 unreachable), shortest-path counts and largest path latencies (ns) from
    each source to every node: the numbers of :func:`trnsim.routing.shortest.bfs` and
    :func:`~trnsim.routing.shortest.path_latency_ns`, without the DAG."""
    order, starts = arrays.out_edges
    forward = np.ones(arrays.n_nodes, dtype=np.bool_) if transit is None else transit.astype(np.bool_)
    return kernels()["bfs_all"](
        starts.astype(np.int64),
        order.astype(np.int64),
        arrays.dst.astype(np.int64),
        np.asarray(sources, dtype=np.int64),
        forward,
        arrays.link_latency_ns.astype(float),
        arrays.node_latency_ns.astype(float),
        with_latency,
    )


def ecmp_demand_loads(
    arrays, sources: np.ndarray, transit: np.ndarray | None, demand: np.ndarray
) -> np.ndarray:
    """Bytes per directed edge when each source's demand row (bytes to each node) is split evenly
    over shortest paths: :func:`trnsim.routing.ecmp.ecmp_loads` without the DAG. A demand of one row
    is every source's."""
    order, starts = arrays.out_edges
    forward = np.ones(arrays.n_nodes, dtype=np.bool_) if transit is None else transit.astype(np.bool_)
    demand = np.ascontiguousarray(np.atleast_2d(demand), dtype=float)
    return kernels()["ecmp_demand"](
        starts.astype(np.int64),
        order.astype(np.int64),
        arrays.dst.astype(np.int64),
        len(arrays.src),
        np.asarray(sources, dtype=np.int64),
        forward,
        demand,
        demand.shape[0] == 1 and len(sources) != 1,
    )


def flow_loads(arrays, dist, sigma, rows, flows, n_sets: int, transit: np.ndarray | None) -> np.ndarray:
    """Loads of sets of flows between group members, flow by flow, walking each flow's own
    shortest-path DAG backwards from its target (:func:`trnsim.routing.ecmp.pair_loads`'s numbers;
    the work is the flows' path sizes, not flows x nodes: for a graph of many small parts)."""
    src, dst, weight, owner = flows
    in_ids = np.argsort(arrays.dst, kind="stable").astype(np.int64)
    in_starts = np.searchsorted(arrays.dst[in_ids], np.arange(arrays.n_nodes + 1)).astype(np.int64)
    forward = np.ones(arrays.n_nodes, dtype=np.bool_) if transit is None else transit.astype(np.bool_)
    return kernels()["flow_loads"](
        in_starts,
        in_ids,
        arrays.src.astype(np.int64),
        len(arrays.src),
        forward,
        np.ascontiguousarray(dist),
        np.ascontiguousarray(sigma),
        np.asarray(rows, dtype=np.int64),
        np.asarray(src, dtype=np.int64),
        np.asarray(rows, dtype=np.int64)[np.asarray(dst, dtype=np.int64)],
        np.asarray(weight, dtype=float),
        np.asarray(owner, dtype=np.int64),
        n_sets,
    )
