"""The numba kernels behind :mod:`trnsim.routing.kernels` (imported on first use only: importing
this module imports numba). Module-level functions, so that numba's disk cache keeps them compiled
across runs."""

import heapq

import numba
import numpy as np

# sources are split into this many parts, run on the machine's threads and summed in a fixed order
PARTS = 16

# numba's disk cache; trnsim.routing.kernels loads a second copy of this module with CACHE set to
# False before it runs, for when the cache is damaged or has no writable folder
CACHE = globals().get("CACHE", True)
jit = numba.njit(cache=CACHE, nogil=True)
parallel = numba.njit(cache=CACHE, nogil=True, parallel=True)


@parallel
def bfs_all(starts, edge_ids, dst, sources, transit, link_lat, node_lat, with_latency, columns):
    rows, n = sources.shape[0], starts.shape[0] - 1
    dist = np.full((rows, n), -1, np.int32)
    sigma = np.zeros((rows, n))
    latency = np.zeros((rows, columns.shape[0])) if with_latency else np.zeros((1, 1))
    for r in numba.prange(rows):  # rows are independent: each thread writes its own
        queue = np.empty(n, np.int64)
        reach = np.zeros(n if with_latency else 1)  # largest path latency to each node from s
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
                        candidate = reach[u] + through + link_lat[e]
                        if candidate > reach[v]:
                            reach[v] = candidate
        if with_latency:
            for j in range(columns.shape[0]):
                latency[r, j] = reach[columns[j]]
    return dist, sigma, latency


@jit
def ecmp_demand_part(
    starts, edge_ids, dst, in_starts, in_ids, src, loads, sources, lo, hi, transit, demand, shared
):
    n = starts.shape[0] - 1
    dist = np.empty(n, np.int32)
    sigma = np.empty(n)
    through = np.zeros(n)
    order = np.empty(n, np.int64)
    for r in range(lo, hi):
        s = sources[r]
        row = 0 if shared else r
        wanted = 0
        for t in range(n):
            if demand[row, t] != 0.0 and t != s:
                wanted += 1
        if wanted == 0:
            continue
        dist[:] = -1
        sigma[:] = 0.0
        dist[s] = 0
        sigma[s] = 1.0
        first, last = 0, 1
        order[0] = s
        found, reach = 0, -1
        while first < last:
            u = order[first]
            if reach >= 0 and dist[u] >= reach:
                break  # every target is reached and this level is beyond the farthest
            first += 1
            if u != s and not transit[u]:
                continue
            for k in range(starts[u], starts[u + 1]):
                v = dst[edge_ids[k]]
                if dist[v] < 0:
                    dist[v] = dist[u] + 1
                    order[last] = v
                    last += 1
                    if demand[row, v] != 0.0:
                        found += 1
                        if found == wanted:
                            reach = dist[v]
                if dist[v] == dist[u] + 1:
                    sigma[v] += sigma[u]
        for i in range(last):
            u = order[i]
            through[u] = demand[row, u] if (u != s and sigma[u] > 0.0) else 0.0
        # backwards over in-edges, farthest first, only from nodes that carry bytes onward
        for i in range(last - 1, 0, -1):
            v = order[i]
            if through[v] == 0.0:
                continue
            for k in range(in_starts[v], in_starts[v + 1]):
                e = in_ids[k]
                u = src[e]
                if dist[u] != dist[v] - 1 or dist[u] < 0 or (u != s and not transit[u]):
                    continue
                share = sigma[u] / sigma[v] * through[v]
                loads[e] += share
                through[u] += share
        for i in range(last):
            through[order[i]] = 0.0


@parallel
def ecmp_demand(starts, edge_ids, dst, in_starts, in_ids, src, n_edges, sources, transit, demand, shared):
    # a fixed number of parts, summed in order: the same sums whatever the machine's threads
    rows = sources.shape[0]
    loads = np.zeros((PARTS, n_edges))
    for c in numba.prange(PARTS):
        lo, hi = rows * c // PARTS, rows * (c + 1) // PARTS
        ecmp_demand_part(
            starts,
            edge_ids,
            dst,
            in_starts,
            in_ids,
            src,
            loads[c],
            sources,
            lo,
            hi,
            transit,
            demand,
            shared,
        )
    total = np.zeros(n_edges)
    for c in range(PARTS):
        total += loads[c]
    return total


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
