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
def bfs_all(starts, adj, sources, transit, link_lat, node_lat, with_latency, columns):
    # adj and link_lat are in CSR order (heads and latencies of each node's out-edges in turn)
    rows, n = sources.shape[0], starts.shape[0] - 1
    dist = np.full((rows, n), -1, np.int32)
    sigma = np.zeros((rows, n))
    latency = np.zeros((rows, columns.shape[0])) if with_latency else np.zeros((1, 1))
    for r in numba.prange(rows):  # rows are independent: each thread writes its own
        queue = np.empty(n, np.int32)
        reach = np.zeros(n if with_latency else 1)  # largest path latency to each node from s
        d, paths = dist[r], sigma[r]
        s = sources[r]
        d[s] = 0
        paths[s] = 1.0
        first, last = 0, 1
        queue[0] = s
        while first < last:
            u = queue[first]
            first += 1
            if u != s and not transit[u]:
                continue  # reached, but it may not forward
            dv, su = d[u] + 1, paths[u]
            through = reach[u] + node_lat[u] if (with_latency and u != s) else 0.0
            for k in range(starts[u], starts[u + 1]):
                v = adj[k]
                if d[v] < 0:
                    d[v] = dv
                    queue[last] = v
                    last += 1
                if d[v] == dv:
                    paths[v] += su
                    if with_latency and through + link_lat[k] > reach[v]:
                        reach[v] = through + link_lat[k]
        if with_latency:
            for j in range(columns.shape[0]):
                latency[r, j] = reach[columns[j]]
    return dist, sigma, latency


@jit
def ecmp_demand_part(starts, adj, sources, transit, demand, shared, lo, hi, loads):
    # Brandes' accumulation per source. The forward BFS keeps each node's shortest-path DAG out-edges
    # (CSR positions) on a stack as it expands the node, so the backward pass reads only DAG edges,
    # node by node from the farthest, with one division per node; loads are per CSR position.
    n = starts.shape[0] - 1
    dist = np.full(n, -1, np.int32)
    sigma = np.zeros(n)
    coef = np.zeros(n)  # bytes entering a node bound for it or beyond, per shortest path to it
    order = np.empty(n, np.int32)
    dag = np.empty(n + 1, np.int64)  # where each node's (in BFS order) DAG out-edges start on the stack
    stack = np.empty(adj.shape[0], np.int32)
    for r in range(lo, hi):
        s = sources[r]
        row = 0 if shared else r
        wanted = 0
        for t in range(n):
            if demand[row, t] != 0.0 and t != s:
                wanted += 1
        if wanted == 0:
            continue
        dist[s] = 0
        sigma[s] = 1.0
        order[0] = s
        first, last, top = 0, 1, 0
        found, reach = 0, -1
        while first < last:
            u = order[first]
            du = dist[u]
            if reach >= 0 and du >= reach:
                break  # every target is reached and this level is beyond the farthest
            dag[first] = top
            first += 1
            if u != s and not transit[u]:
                continue  # reached, but it may not forward
            su = sigma[u]
            for k in range(starts[u], starts[u + 1]):
                v = adj[k]
                dv = dist[v]
                if dv < 0:
                    dist[v] = du + 1
                    sigma[v] = su
                    order[last] = v
                    last += 1
                    stack[top] = k
                    top += 1
                    if demand[row, v] != 0.0:
                        found += 1
                        if found == wanted:
                            reach = du + 1
                elif dv == du + 1:
                    sigma[v] += su
                    stack[top] = k
                    top += 1
        for i in range(first, last + 1):
            dag[i] = top  # nodes not expanded have no DAG out-edges
        for i in range(last - 1, 0, -1):
            u = order[i]
            su = sigma[u]
            onward = 0.0
            for j in range(dag[i], dag[i + 1]):
                k = stack[j]
                share = su * coef[adj[k]]
                loads[k] += share
                onward += share
            coef[u] = (demand[row, u] + onward) / su
        for j in range(dag[0], dag[1]):
            loads[stack[j]] += coef[adj[stack[j]]]
        for i in range(last):
            u = order[i]
            dist[u] = -1
            sigma[u] = 0.0
            coef[u] = 0.0


@parallel
def ecmp_demand(starts, adj, edge_ids, sources, transit, demand, shared):
    # a fixed number of parts, summed in order: the same sums whatever the machine's threads
    rows, slots = sources.shape[0], adj.shape[0]
    loads = np.zeros((PARTS, slots))
    for c in numba.prange(PARTS):
        lo, hi = rows * c // PARTS, rows * (c + 1) // PARTS
        ecmp_demand_part(starts, adj, sources, transit, demand, shared, lo, hi, loads[c])
    total = np.zeros(slots)
    for c in range(PARTS):
        for k in range(slots):
            total[edge_ids[k]] += loads[c, k]
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


@jit
def popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@jit
def nearby(starts, adj, sources, size):
    # the sources reordered into runs of `size` that lie close together: each run is the first
    # `size` sources not yet taken that a BFS from the first one left reaches (a ball)
    n = starts.shape[0] - 1
    wanted = np.zeros(n, np.bool_)
    for s in sources:
        wanted[s] = True
    mark = np.full(n, -1, np.int64)
    queue = np.empty(n, np.int64)
    out = np.empty(sources.shape[0], np.int64)
    taken = 0
    for run, seed in enumerate(sources):
        if not wanted[seed]:
            continue
        queue[0] = seed
        mark[seed] = run
        first, last, stop = 0, 1, taken + size
        while first < last and taken < stop:
            u = queue[first]
            first += 1
            if wanted[u]:
                wanted[u] = False
                out[taken] = u
                taken += 1
            for k in range(starts[u], starts[u + 1]):
                v = adj[k]
                if mark[v] != run:
                    mark[v] = run
                    queue[last] = v
                    last += 1
    return out[:taken]


@jit
def hop_counts(starts, adj, transit, sources, target):
    # Ordered (source, target) pairs at each distance, 64 sources at a time: bit j of a node's word
    # says source j has reached it (a BFS per bit, all advanced together by one OR per edge). Only
    # the nodes that gained bits last level push theirs on. Also the (source, target) pairs never met.
    n = starts.shape[0] - 1
    seen = np.zeros(n, np.uint64)
    front = np.zeros(n, np.uint64)
    gained = np.zeros(n, np.uint64)
    active = np.empty(n, np.int64)
    touched = np.empty(n, np.int64)
    counts = np.zeros(n + 1, np.int64)
    missing = 0
    one = np.uint64(1)
    for lo in range(0, sources.shape[0], 64):
        width = min(64, sources.shape[0] - lo)
        n_active = 0
        for j in range(width):
            s = sources[lo + j]
            if front[s] == 0:
                active[n_active] = s
                n_active += 1
            seen[s] |= one << np.uint64(j)
            front[s] |= one << np.uint64(j)
        level = 0
        while n_active > 0:
            level += 1
            n_touched = 0
            for i in range(n_active):
                u = active[i]
                bits = front[u]
                front[u] = 0
                for k in range(starts[u], starts[u + 1]):
                    v = adj[k]
                    if gained[v] == 0:
                        touched[n_touched] = v
                        n_touched += 1
                    gained[v] |= bits
            n_active = 0
            for i in range(n_touched):
                v = touched[i]
                new = gained[v] & ~seen[v]
                gained[v] = 0
                if new != 0:
                    seen[v] |= new
                    if target[v]:
                        counts[level] += popcount(new)
                    if transit[v]:  # reached, and it forwards
                        front[v] = new
                        active[n_active] = v
                        n_active += 1
        every = ~np.uint64(0) if width == 64 else (one << np.uint64(width)) - one
        for v in range(n):
            if target[v]:
                missing += popcount(every & ~seen[v])
            seen[v] = 0
    return counts, missing
