"""The numba kernel behind :func:`trnsim.routing.translated.flow_loads` (imported on first use only:
importing this module imports numba). Module-level, so that numba's disk cache keeps it compiled."""

import numba
import numpy as np

# numba's disk cache (see trnsim.routing.jitcache, which may load this module again without it)
CACHE = globals().get("CACHE", True)
jit = numba.njit(cache=CACHE, nogil=True)
parallel = numba.njit(cache=CACHE, nogil=True, parallel=True)


@jit
def _offset(coords, sizes, strides, s, v):
    """The rank of ``v - s`` on the torus (coordinate-wise, modulo the sizes)."""
    total = 0
    for a in range(sizes.shape[0]):
        d = coords[v, a] - coords[s, a]
        if d < 0:
            d += sizes[a]
        total += d * strides[a]
    return total


@jit
def flow_loads(
    in_starts,
    in_ids,
    src,
    n_edges,
    transit,
    base_dist,
    base_sigma,
    coords,
    sizes,
    strides,
    flow_src,
    flow_dst,
    weight,
    flow_set,
    n_sets,
):
    # trnsim.routing._compiled.flow_loads, with the source's distance and path count to v read off
    # chip 0's at v - s: the same operations in the same order, so the same sums
    n = in_starts.shape[0] - 1
    loads = np.zeros((n_sets, n_edges))
    through = np.zeros(n)
    seen = np.full(n, -1, np.int64)
    queue = np.empty(n, np.int64)
    for f in range(flow_src.shape[0]):
        s, t = flow_src[f], flow_dst[f]
        if base_dist[_offset(coords, sizes, strides, s, t)] <= 0 or weight[f] == 0.0:
            continue
        through[t] = weight[f]
        seen[t] = f
        first, last = 0, 1
        queue[0] = t
        while first < last:  # backwards from t over the shortest-path DAG, farthest level first
            v = queue[first]
            first += 1
            if v == s:
                continue
            at_v = _offset(coords, sizes, strides, s, v)
            dv = base_dist[at_v]
            for k in range(in_starts[v], in_starts[v + 1]):
                e = in_ids[k]
                u = src[e]
                at_u = _offset(coords, sizes, strides, s, u)
                if base_dist[at_u] != dv - 1 or (u != s and not transit[u]):
                    continue
                share = base_sigma[at_u] / base_sigma[at_v] * through[v]
                loads[flow_set[f], e] += share
                if seen[u] != f:
                    seen[u] = f
                    through[u] = 0.0
                    queue[last] = u
                    last += 1
                through[u] += share
    return loads


@jit
def _shift(coords, sizes, strides, u, s):
    """The rank of ``u + s`` on the torus (coordinate-wise, modulo the sizes)."""
    total = 0
    for a in range(sizes.shape[0]):
        d = coords[u, a] + coords[s, a]
        if d >= sizes[a]:
            d -= sizes[a]
        total += d * strides[a]
    return total


@jit
def _moved_set(
    pred_starts,
    pred_tail,
    pred_orbit,
    pred_ratio,
    base_dist,
    coords,
    sizes,
    strides,
    table,
    flow_src,
    flow_dst,
    weight,
    lo,
    hi,
    row,
):
    # flows lo..hi-1 (one set) walked as chip 0's flow to t - s, backwards over chip 0's
    # shortest-path DAG (each node's in-edges from one link nearer chip 0, with sigma(tail) /
    # sigma(head)); each share lands in ``row`` on that edge moved by s: the edge of the same orbit
    # out of the moved tail
    n = pred_starts.shape[0] - 1
    through = np.zeros(n)
    seen = np.full(n, -1, np.int64)
    queue = np.empty(n, np.int64)
    for f in range(lo, hi):
        s = flow_src[f]
        o = _offset(coords, sizes, strides, s, flow_dst[f])
        if base_dist[o] <= 0 or weight[f] == 0.0:
            continue
        through[o] = weight[f]
        seen[o] = f
        first, last = 0, 1
        queue[0] = o
        while first < last:
            v = queue[first]
            first += 1
            if v == 0:
                continue
            for k in range(pred_starts[v], pred_starts[v + 1]):
                u = pred_tail[k]
                share = pred_ratio[k] * through[v]
                row[table[_shift(coords, sizes, strides, u, s), pred_orbit[k]]] += share
                if seen[u] != f:
                    seen[u] = f
                    through[u] = 0.0
                    queue[last] = u
                    last += 1
                through[u] += share


@parallel
def moved_flow_loads(
    pred_starts,
    pred_tail,
    pred_orbit,
    pred_ratio,
    base_dist,
    coords,
    sizes,
    strides,
    table,
    n_edges,
    flow_src,
    flow_dst,
    weight,
    bounds,
):
    # set j is flows bounds[j]..bounds[j+1]-1; sets run on the machine's threads, each set's flows
    # in order on one thread (the same sums whatever the threads)
    n_sets = bounds.shape[0] - 1
    loads = np.zeros((n_sets, n_edges))
    for j in numba.prange(n_sets):
        _moved_set(
            pred_starts, pred_tail, pred_orbit, pred_ratio, base_dist, coords, sizes, strides, table,
            flow_src, flow_dst, weight, bounds[j], bounds[j + 1], loads[j],
        )  # fmt: skip
    return loads
