"""The all-to-all dual at given edge lengths: distances, the ECMP flow on shortest paths, and the
supergradient.

For any edge lengths ``l >= 0``, ``time >= sum over ordered member pairs of (S/p) dist_l(s, t) /
sum_e cap_e l_e`` (the maximum concurrent flow's LP dual: Shahrokhi and Matula, JACM 1990; Leighton
and Rao, JACM 1999). :func:`dual_value` gives the numerator ``g(l)`` for lengths constant on edge
classes, a supergradient of ``g`` per class (each pair's demand split evenly over all its shortest
paths, summed per class) and, optionally, that flow's load on every directed edge (the routing behind
the cutting plane, for the primal certificate). Three ways, the same numbers: equal lengths are a BFS
(compiled), large ones run Dijkstra per source compiled, small ones Dijkstra per block of sources in
numpy.
"""

import numpy as np

from trnsim.model.optimum.graph import Network

# every edge length is at least LENGTH_FLOOR (lengths are normalised so that the capacity-weighted
# sum is 1), so Dijkstra never sees a zero length; this lowers the bound by a relative 1e-7 at most
LENGTH_FLOOR = 1e-7
# two paths tie (both shortest) within this fraction of LENGTH_FLOOR; below half the smallest length,
# so the tie graph has no cycles
TIE_FRACTION = 0.25
# sources per Dijkstra block so that sources x directed links stays about this
BLOCK_ENTRIES = 4_000_000


def csr_layout(net: Network):
    """The CSR layout of the directed edges (edge order, column indices, row pointers)."""
    order = np.lexsort((net.dst, net.src))
    return (
        order,
        net.dst[order].astype(np.int32),
        np.searchsorted(net.src[order], np.arange(net.n + 1)).astype(np.int32),
    )


def dual_value(net: Network, structure, classes, w, sources, member_mask, keep_loads):
    """g(l), its supergradient per class and (optionally) the per-edge loads, at lengths ``w[classes]``.

    Each ordered pair of members carries ``1/p``; ECMP on the shortest-path DAG of every source.
    ``structure`` is :func:`csr_layout` of ``net``; ``sources`` the members to route from (one per
    orbit under a symmetry). Returns ``(g, grad, loads or None, work)``, ``g`` infinite when some
    member cannot reach another.
    """
    from trnsim.routing.kernels import COMPILED_FROM

    n, m = net.n, len(net.src)
    lengths = w[classes]
    if len(sources) * (n + m) >= COMPILED_FROM and np.all(lengths == lengths[0]):
        return _equal_lengths(net, structure, classes, w, lengths, sources, member_mask, keep_loads)
    if len(sources) * (n + m) >= COMPILED_FROM:
        return _compiled(net, structure, classes, w, lengths, sources, member_mask, keep_loads)
    return _numpy(net, structure, classes, w, lengths, sources, member_mask, keep_loads)


def _equal_lengths(net, structure, classes, w, lengths, sources, member_mask, keep_loads):
    """Equal lengths: shortest paths are fewest-link paths, so a BFS serves (a loaded topology is
    connected), and every pair's flow crosses d links: the distance sum is the loads' sum."""
    from trnsim.routing.kernels import demand_loads

    n, m, p = net.n, len(net.src), net.p
    order, _, indptr = structure
    demand = np.zeros((1, n))
    demand[0, member_mask] = 1.0 / p
    loads = demand_loads(net.src, net.dst, n, sources, None, demand, (indptr, order))
    grad = np.bincount(classes, weights=loads, minlength=len(w))
    total = float(lengths[0] * loads.sum())
    return total, grad, (loads if keep_loads else None), len(sources) * (n + m)


def _compiled(net, structure, classes, w, lengths, sources, member_mask, keep_loads):
    """One source at a time at compiled speed (Dijkstra, then the same ECMP split on the DAG)."""
    from trnsim.routing.kernels import kernels

    n, m, p = net.n, len(net.src), net.p
    order, _, indptr = structure
    total, loads = kernels()["length_loads"](
        indptr.astype(np.int64),
        order.astype(np.int64),
        net.dst.astype(np.int64),
        m,
        lengths.astype(float),
        np.asarray(sources, dtype=np.int64),
        member_mask,
        1.0 / p,
        TIE_FRACTION * LENGTH_FLOOR,
    )
    grad = np.bincount(classes, weights=loads, minlength=len(w))
    return float(total), grad, (loads if keep_loads else None), len(sources) * (n + m)


def _numpy(net, structure, classes, w, lengths, sources, member_mask, keep_loads):
    """Dijkstra (scipy) per block of sources, then the ECMP split on each source's shortest-path DAG."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import dijkstra

    n, m, p = net.n, len(net.src), net.p
    order, indices, indptr = structure
    graph = sp.csr_array((lengths[order], indices, indptr), shape=(n, n))
    tol = TIE_FRACTION * LENGTH_FLOOR
    total = 0.0
    grad = np.zeros(w.shape)
    loads = np.zeros(m) if keep_loads else None
    work = 0
    block = max(1, BLOCK_ENTRIES // max(m, 1))
    for lo in range(0, len(sources), block):
        chunk = sources[lo : lo + block]
        rows = len(chunk)
        dist = np.atleast_2d(dijkstra(graph, directed=True, indices=chunk))
        demand = np.zeros((rows, n))
        demand[:, member_mask] = 1.0 / p
        demand[np.arange(rows), chunk] = 0.0
        if not np.all(np.isfinite(dist[demand > 0])):
            return float("inf"), grad, loads, work
        total += float(np.sum(demand * np.where(np.isfinite(dist), dist, 0.0)))
        reached = np.isfinite(dist[:, net.src])
        with np.errstate(invalid="ignore"):
            on_dag = reached & (dist[:, net.src] + lengths[None, :] <= dist[:, net.dst] + tol)
        r, e = np.nonzero(on_dag)
        fu = r * n + net.src[e]
        fv = r * n + net.dst[e]
        size = rows * n
        starts = np.arange(rows) * n + chunk
        sigma, touched = path_sums(starts, np.ones(rows), fu, fv, None, size)
        ratio = sigma[fu] / sigma[fv]
        flat_demand = demand.ravel()
        needing = np.flatnonzero(flat_demand)
        # bytes entering each node bound for it or beyond (Brandes), summed backwards along the DAG
        through, back = path_sums(needing, flat_demand[needing], fv, fu, ratio, size)
        work += rows * (n + m) + touched + back
        share = ratio * through[fv]
        grad += np.bincount(classes[e], weights=share, minlength=len(w))
        if keep_loads:
            loads += np.bincount(e, weights=share, minlength=m)
    return total, grad, loads, work


def path_sums(starts, values, tails, heads, weights, size):
    """Sums over the paths of a DAG: ``x[v] = sum over paths y -> v of values[y] * prod(weights)``.

    The DAG's edges are ``tails[i] -> heads[i]`` (flat node ids below ``size``). One wave per path
    length, each touching only the edges out of nodes that the last wave reached, so a DAG whose
    paths to a node all have the same number of edges is walked once. Returns the sums and the
    number of edges touched.

    Examples
    --------
    Paths from node 0 in the diamond 0 -> {1, 2} -> 3: one path to each of 1 and 2, two to 3.

    >>> import numpy as np
    >>> tails, heads = np.array([0, 0, 1, 2]), np.array([1, 2, 3, 3])
    >>> sums, touched = path_sums(np.array([0]), np.array([1.0]), tails, heads, None, 4)
    >>> sums.tolist(), touched
    ([1.0, 1.0, 1.0, 2.0], 4)
    """
    order = np.argsort(tails, kind="stable")
    pointer = np.searchsorted(tails[order], np.arange(size + 1))
    total = np.zeros(size)
    np.add.at(total, starts, values)
    nodes, vals, touched = starts, values, 0
    while len(nodes):
        degree = pointer[nodes + 1] - pointer[nodes]
        count = int(degree.sum())
        if count == 0:
            break
        owner = np.repeat(np.arange(len(nodes)), degree)
        offsets = np.arange(count) - np.repeat(np.cumsum(degree) - degree, degree)
        edges = order[np.repeat(pointer[nodes], degree) + offsets]
        contribution = vals[owner] if weights is None else vals[owner] * weights[edges]
        wave = np.bincount(heads[edges], weights=contribution, minlength=size)
        nodes = np.flatnonzero(wave)
        vals = wave[nodes]
        total[nodes] += vals
        touched += count
    return total, touched
