"""Loads of flows on a torus routed by translation (:class:`~trnsim.routing.translated.Translated`).

Flow ``s -> t`` is chip 0's flow to ``t - s`` moved by ``s``: its shortest-path DAG is walked
backwards on chip 0's rows and each share lands on its edge's translate (the numbers of
:func:`trnsim.routing.kernels.flow_loads` on every member's own rows, up to the order of additions).
The work is the flows' DAG sizes, which :func:`dag_sizes` counts beforehand, and the walk is done
in numpy for all flows at once where that is little, else by a compiled kernel. Flows that share
few distinct offsets (a rank-order ring, recursive doubling) walk one template per offset, which
each flow adds moved by its source. A set of flows out of few chips (a scatter from the root) is
cheaper as one accumulation per chip over chip 0's DAG, its bytes to every offset at once
(Brandes); flows into few chips (a gather) the same turned round.
"""

import functools

import numpy as np

from trnsim.routing.symmetry import TorusSymmetry
from trnsim.routing.translated import Translated

# flows whose shortest-path DAGs hold at most this many chips in all are walked in numpy, all at
# once; beyond, by the compiled kernel (importing numba and loading it costs about 0.8 s)
NUMPY_WALK = 4_000_000
# flows that number this many times their distinct offsets are routed from one template per offset
TEMPLATES = 4
# flows x template entries moved at once (bounds the memory of a block to a few hundred MB)
TEMPLATE_ENTRIES = 4_000_000
# a set of flows is accumulated per source (or target) chip when that many passes over the whole
# DAG of chip 0 cost less than walking its flows' DAGs, counted as this many chips per pass
# per directed edge and node of the torus
PASS_COST = 4


def flow_loads(translated: Translated, flows: tuple, n_sets: int, transit: np.ndarray | None) -> np.ndarray:
    """Loads of sets of flows between members (``(src, dst, weight, owner)``, member positions, each
    flow in set ``owner``): ``n_sets`` x directed edges, split evenly over shortest paths.

    Where a chip has two edges of one orbit (a translate of an edge is then ambiguous) or some chips
    may not relay, every flow's DAG is walked from its own source, each distance read at its offset.
    """
    src, dst, weight, owner = flows
    arrays, sym, rows = translated.arrays, translated.symmetry, translated.rows
    tails = np.ascontiguousarray(rows[np.asarray(src, dtype=np.int64)], dtype=np.int64)
    heads = np.ascontiguousarray(rows[np.asarray(dst, dtype=np.int64)], dtype=np.int64)
    weight = np.ascontiguousarray(weight, dtype=float)
    owner = np.ascontiguousarray(owner, dtype=np.int64)
    if translated.mover is None or not (transit is None or transit.all()):
        forward = np.ones(arrays.n_nodes, dtype=np.bool_) if transit is None else transit.astype(np.bool_)
        in_starts, in_ids = arrays.in_edges
        edges = in_starts, in_ids, arrays.src.astype(np.int64), len(arrays.src)
        return _kernel("flow_loads")(
            *edges, forward, *_geometry(translated), tails, heads, weight, owner, n_sets
        )
    offsets = sym.offset(tails, heads)
    sizes = dag_sizes(sym, offsets)
    per_pass = PASS_COST * (arrays.n_nodes + len(arrays.src))
    loads = np.zeros((n_sets, len(arrays.src)))
    walked = np.zeros(len(tails), dtype=bool)
    by_set = np.argsort(owner, kind="stable")
    bounds = np.searchsorted(owner[by_set], np.arange(n_sets + 1))
    for j in range(n_sets):
        mine = by_set[bounds[j] : bounds[j + 1]]
        froms, intos = len(np.unique(tails[mine])), len(np.unique(heads[mine]))
        if min(froms, intos) * per_pass >= sizes[mine].sum():
            walked[mine] = True
        elif froms <= intos:
            loads[j] = _accumulated(translated, tails[mine], offsets[mine], weight[mine])
        else:  # flows into few chips: the same flows turned round, out of them
            back = _accumulated(translated, heads[mine], sym.offset(heads[mine], tails[mine]), weight[mine])
            loads[j, translated.reverse] = back
    if not walked.any():
        return loads
    chosen = tails[walked], offsets[walked], weight[walked], owner[walked]
    if TEMPLATES * len(np.unique(chosen[1])) <= len(chosen[1]):  # many flows share each offset
        return loads + _from_templates(translated, *chosen, n_sets)
    if sizes[walked].sum() <= NUMPY_WALK:
        return loads + _walk(translated, *chosen, n_sets)
    return loads + _compiled_walk(translated, *chosen, n_sets)


def _geometry(translated: Translated) -> tuple:
    """Chip 0's rows and the torus's coordinates, as the kernels take them."""
    sym = translated.symmetry
    return (
        np.ascontiguousarray(translated.dist, dtype=np.int32),  # one signature: see jitcache
        np.ascontiguousarray(translated.sigma, dtype=float),
        np.ascontiguousarray(sym.coords, dtype=np.int64),
        np.asarray(sym.sizes, dtype=np.int64),
        np.asarray(sym.strides, dtype=np.int64),
    )


def _compiled_walk(translated: Translated, sources, offsets, weight, owner, n_sets: int) -> np.ndarray:
    """:func:`_walk` by the compiled kernel, each set's flows in order on one of the machine's threads."""
    pred_starts, pred_tail, pred_orbit, ratio, table = translated.mover
    dist, _, coords, sizes, strides = _geometry(translated)
    order = np.argsort(owner, kind="stable")  # by set, each set's flows in their order
    bounds = np.searchsorted(owner[order], np.arange(n_sets + 1)).astype(np.int64)
    targets = translated.symmetry.translate(sources[order], coords[offsets[order]])
    return _kernel("moved_flow_loads")(
        pred_starts, pred_tail, pred_orbit, ratio, dist, coords, sizes, strides, table,
        len(translated.arrays.src), sources[order], targets, weight[order], bounds,
    )  # fmt: skip


def _accumulated(translated: Translated, sources, offsets, weight) -> np.ndarray:
    """Loads of flows out of a few chips: per chip, its bytes to each offset pushed back up chip 0's
    shortest-path DAG at once (:func:`trnsim.routing.ecmp.ecmp_loads`), moved onto that chip's edges."""
    from trnsim.routing.ecmp import ecmp_loads

    arrays = translated.arrays
    table, orbit = translated.mover[4], translated.edge_orbit
    loads = np.zeros(len(arrays.src))
    order = np.argsort(sources, kind="stable")
    chips, starts = np.unique(sources[order], return_index=True)
    for chip, lo, hi in zip(chips.tolist(), starts.tolist(), [*starts[1:].tolist(), len(order)], strict=True):
        row = np.zeros((1, arrays.n_nodes))
        np.add.at(row[0], offsets[order[lo:hi]], weight[order[lo:hi]])
        moved = table[translated.symmetry.translate(arrays.src, translated.symmetry.coords[chip]), orbit]
        loads[moved] += ecmp_loads(arrays, translated.base, row)
    return loads


def dag_sizes(symmetry: TorusSymmetry, offsets: np.ndarray) -> np.ndarray:
    """How many chips lie on chip 0's shortest paths to each offset: per axis the chips between,
    the whole ring where it is half way round an even one (both ways are shortest)."""
    sizes = np.asarray(symmetry.sizes)
    c = symmetry.coords[offsets].astype(np.int64)
    return np.where(2 * c == sizes, sizes, np.minimum(c, sizes - c) + 1).prod(axis=1)


def _walk(translated: Translated, sources, offsets, weight, owner, n_sets: int) -> np.ndarray:
    """The compiled ``moved_flow_loads`` in numpy: every flow's DAG walked backwards at once, one
    distance from chip 0 at a time, each (flow, chip) once with the bytes through it summed."""
    n_edges = len(translated.arrays.src)
    loads = np.zeros(n_sets * n_edges)
    for flow, edge, share in _dag_entries(translated, sources, offsets, weight):
        loads += np.bincount(owner[flow] * n_edges + edge, share, len(loads))
    return loads.reshape(n_sets, n_edges)


def _dag_entries(translated: Translated, sources, offsets, weight):
    """Each flow's shares of its bytes on the directed edges of its shortest-path DAG, one level
    at a time from its target back: ``(flow, edge, share)`` arrays (a flow's edge once per level)."""
    pred_starts, pred_tail, pred_orbit, ratio, table = translated.mover
    sym, dist, n = translated.symmetry, translated.dist, translated.arrays.n_nodes
    coords, sizes, strides = sym.coords.astype(np.int64), np.asarray(sym.sizes), np.asarray(sym.strides)
    start = (dist[offsets] > 0) & (weight != 0)
    flow, node, through = np.flatnonzero(start), offsets[start], weight[start]
    waiting = dist[node]  # each flow's walk starts at its own distance
    now = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
    for level in range(int(waiting.max(initial=0)), 0, -1):
        joining = waiting == level
        f, v, th = (
            np.r_[now[0], flow[joining]],
            np.r_[now[1], node[joining]],
            np.r_[now[2], through[joining]],
        )
        degree = pred_starts[v + 1] - pred_starts[v]
        which = np.repeat(np.arange(len(v)), degree)
        k = np.repeat(pred_starts[v] - np.cumsum(degree) + degree, degree) + np.arange(degree.sum())
        f, u, share = f[which], pred_tail[k], ratio[k] * th[which]
        moved = ((coords[u] + coords[sources[f]]) % sizes) @ strides
        yield f, table[moved, pred_orbit[k]], share
        keys, inverse = np.unique(f * n + u, return_inverse=True)
        now = (keys // n, keys % n, np.bincount(inverse.ravel(), share))


def _from_templates(translated: Translated, sources, offsets, weight, owner, n_sets: int) -> np.ndarray:
    """Flows of few distinct offsets: each offset's DAG walked once from chip 0 at unit weight (its
    template: edges and shares), then every flow adds its weight times its template, the edges moved
    by its source; in blocks of about :data:`TEMPLATE_ENTRIES` entries."""
    arrays, sym = translated.arrays, translated.symmetry
    n_edges, orbit, table = len(arrays.src), translated.edge_orbit, translated.mover[4]
    distinct, group = np.unique(offsets, return_inverse=True)
    group = group.ravel()
    pieces = list(
        _dag_entries(translated, np.zeros(len(distinct), dtype=np.int64), distinct, np.ones(len(distinct)))
    )
    which = np.concatenate([f for f, _, _ in pieces]) if pieces else np.zeros(0, dtype=np.int64)
    order = np.argsort(which, kind="stable")
    edges = np.concatenate([e for _, e, _ in pieces])[order] if pieces else which
    shares = np.concatenate([v for _, _, v in pieces])[order] if pieces else np.zeros(0)
    starts = np.searchsorted(which[order], np.arange(len(distinct) + 1))
    count = np.diff(starts)[group]  # each flow's template size
    coords, sizes, strides = sym.coords.astype(np.int64), np.asarray(sym.sizes), np.asarray(sym.strides)
    tails = arrays.src[edges]
    loads = np.zeros(n_sets * n_edges)
    block = max(1, TEMPLATE_ENTRIES // max(int(count.max(initial=1)), 1))
    for lo in range(0, len(group), block):
        mine = np.arange(lo, min(lo + block, len(group)))
        c = count[mine]
        f = np.repeat(mine, c)
        k = np.repeat(starts[group[mine]] - np.cumsum(c) + c, c) + np.arange(c.sum())
        moved = ((coords[tails[k]] + coords[sources[f]]) % sizes) @ strides
        loads += np.bincount(
            owner[f] * n_edges + table[moved, orbit[edges[k]]], weight[f] * shares[k], len(loads)
        )
    return loads.reshape(n_sets, n_edges)


@functools.cache
def _module():
    from trnsim.routing.jitcache import Compiled

    return Compiled("trnsim.routing._translated")


def _kernel(name: str):
    return functools.partial(_module().call, name)
