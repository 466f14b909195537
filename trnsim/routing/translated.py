"""A wrapped torus routed by translation: chip 0's shortest paths stand for every member's.

On a wrapped torus whose node indices are the ranks, the distance, shortest-path count and path
latency from chip ``s`` to node ``v`` are chip 0's to ``v - s`` (:class:`TorusSymmetry`). A
:class:`Translated` keeps chip 0's three rows and reads any member's entries off them by index
arithmetic on the coordinates, so a group costs one BFS and memory linear in the torus, not
members x nodes matrices (32 GB at 32,768 chips). :func:`flow_loads` walks each flow's own
shortest-path DAG with distances read the same way: the numbers of
:func:`trnsim.routing.kernels.flow_loads` on the full matrices.
"""

import functools
from functools import cached_property

import numpy as np

from trnsim.routing.shortest import BFS, bfs, path_latency_ns
from trnsim.routing.symmetry import TorusSymmetry
from trnsim.topology.arrays import GraphArrays

# members x members entries compared at once when a group is not the whole torus
BLOCK_ENTRIES = 4_000_000
# flows whose shortest-path DAGs hold at most this many chips in all are walked in numpy, all at
# once; beyond, by the compiled kernel (importing numba and loading it costs about 0.8 s)
NUMPY_WALK = 4_000_000


class Translated:
    """Chip 0's distances, path counts and path latencies on ``arrays``, and any member's by
    translation.

    Parameters
    ----------
    symmetry : TorusSymmetry
        The torus's translations (node index = rank).
    arrays : GraphArrays
        The torus, or a subgraph of it that every translation maps onto itself (some axes' links).
    rows : array of int
        The group's members (node indices).
    """

    def __init__(self, symmetry: TorusSymmetry, arrays: GraphArrays, rows: np.ndarray):
        self.symmetry, self.arrays, self.rows = symmetry, arrays, np.asarray(rows, dtype=np.int64)
        self.dist = self.base.dist[0]
        self.sigma = self.base.sigma[0]
        self.latency = path_latency_ns(arrays, self.base)[0]

    @cached_property
    def base(self) -> BFS:
        """The BFS from chip 0, with its DAG."""
        return bfs(self.arrays, np.array([0]))

    @cached_property
    def whole(self) -> bool:
        """Whether the group is every node of the torus (then pairs of members are every offset)."""
        return len(self.rows) == self.arrays.n_nodes and np.array_equal(
            np.sort(self.rows), np.arange(self.arrays.n_nodes)
        )

    @cached_property
    def mover(self) -> tuple | None:
        """Chip 0's shortest-path DAG for walking flows backwards, and how its edges move.

        ``(pred_starts, pred_tail, pred_orbit, pred_ratio, table)``: for each node (CSR), its
        in-edges from one link nearer chip 0 in in-edge order, each with its tail, its orbit (axis
        and direction) and ``sigma(tail) / sigma(head)``; and ``table``, the directed edge out of
        each node in each orbit (a translate of an edge is the entry at its moved tail and its
        orbit). None when a node has two edges of one orbit: a translate is then ambiguous.
        """
        arrays = self.arrays
        orbit = self.symmetry.edge_orbits(arrays.src, arrays.dst)
        table = np.full((arrays.n_nodes, int(orbit.max(initial=0)) + 1), -1, dtype=np.int64)
        table[arrays.src, orbit] = np.arange(len(orbit))
        if np.count_nonzero(table >= 0) != len(orbit):
            return None
        starts, in_ids = arrays.in_edges
        tails, heads = arrays.src[in_ids], arrays.dst[in_ids]
        on_dag = (self.dist[tails] >= 0) & (self.dist[tails] + 1 == self.dist[heads])
        kept = in_ids[on_dag]
        pred_starts = np.r_[0, np.cumsum(np.bincount(arrays.dst[kept], minlength=arrays.n_nodes))]
        ratio = self.sigma[arrays.src[kept]] / self.sigma[arrays.dst[kept]]
        tail = arrays.src[kept].astype(np.int64)
        return pred_starts.astype(np.int64), tail, orbit[kept].astype(np.int64), ratio, table

    def offsets(self, members: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """The rank of ``node - member`` for member positions and node indices (broadcast)."""
        return self.symmetry.offset(self.rows[members], nodes)

    def matrix(self, base: np.ndarray, columns: np.ndarray | None = None) -> np.ndarray:
        """``base`` translated to every member: members x nodes (or x ``columns``); memory grows with
        members x nodes, for the small groups whose strategies read whole matrices."""
        rows = self.symmetry.shifted(base, self.rows)
        return rows if columns is None else rows[:, columns]

    def among_max(self, base: np.ndarray) -> float:
        """The largest entry of ``base`` between two members (at every offset when the group is the
        whole torus; else pair by pair, in blocks)."""
        if self.whole:
            return base.max()
        return max(block.max() for _, block in self._among(base))

    def first_negative(self, base: np.ndarray) -> tuple[int, int] | None:
        """The first pair of member positions (row-major) whose entry of ``base`` is negative."""
        if base.min() >= 0:
            return None
        for lo, block in self._among(base):
            if np.any(block < 0):
                a, b = np.argwhere(block < 0)[0]
                return lo + int(a), int(b)
        return None

    def _among(self, base: np.ndarray):
        p = len(self.rows)
        step = max(1, BLOCK_ENTRIES // max(p, 1))
        for lo in range(0, p, step):
            members = np.arange(lo, min(lo + step, p))
            yield lo, base[self.offsets(members[:, None], self.rows[None, :])]


def invariant(symmetry: TorusSymmetry | None, arrays: GraphArrays, edges: np.ndarray) -> TorusSymmetry | None:
    """``symmetry`` when the directed ``edges`` (indices in ``arrays``, the whole torus) are whole
    orbits of its translations (some axes' links: every translation maps them onto themselves), else
    None."""
    if symmetry is None:
        return None
    orbit = symmetry.edge_orbits(arrays.src, arrays.dst)
    everywhere = np.bincount(orbit)
    kept = np.bincount(orbit[edges], minlength=len(everywhere))
    return symmetry if np.all((kept == 0) | (kept == everywhere)) else None


def flow_loads(translated: Translated, flows: tuple, n_sets: int, transit: np.ndarray | None) -> np.ndarray:
    """Loads of sets of flows between members (``(src, dst, weight, owner)``, member positions),
    flow by flow over each flow's shortest-path DAG, from chip 0's rows by translation: what
    :func:`trnsim.routing.kernels.flow_loads` gives on the members' full matrices (up to the order
    of additions), with work the flows' path sizes and no members x nodes matrix.

    Flow ``s -> t`` is chip 0's flow to ``t - s`` moved by ``s``: its DAG is walked on chip 0's rows
    and each share lands on its edge's translate. Where a chip has two edges of one orbit (a
    translation's image of an edge is then ambiguous) or some chips may not relay, the DAG is
    walked from ``s`` itself, reading each distance at its offset.
    """
    src, dst, weight, owner = flows
    arrays, sym, rows = translated.arrays, translated.symmetry, translated.rows
    in_starts, in_ids = arrays.in_edges
    common = (
        np.ascontiguousarray(translated.dist, dtype=np.int32),  # one signature: see jitcache
        np.ascontiguousarray(translated.sigma, dtype=float),
        np.ascontiguousarray(sym.coords, dtype=np.int64),
        np.asarray(sym.sizes, dtype=np.int64),
        np.asarray(sym.strides, dtype=np.int64),
    )
    ends = (
        np.ascontiguousarray(rows[np.asarray(src, dtype=np.int64)], dtype=np.int64),
        np.ascontiguousarray(rows[np.asarray(dst, dtype=np.int64)], dtype=np.int64),
        np.ascontiguousarray(weight, dtype=float),
        np.ascontiguousarray(owner, dtype=np.int64),
        n_sets,
    )
    edges = in_starts, in_ids, arrays.src.astype(np.int64), len(arrays.src)
    mover = translated.mover
    if mover is not None and (transit is None or transit.all()):
        offsets = sym.offset(ends[0], ends[1])
        if dag_sizes(sym, offsets).sum() <= NUMPY_WALK:
            return _walk(translated, ends[0], offsets, ends[2], ends[3], n_sets)
        pred_starts, pred_tail, pred_orbit, ratio, table = mover
        geometry = common[0], *common[2:], table, len(arrays.src)
        order = np.argsort(ends[3], kind="stable")  # by set, each set's flows in their order
        bounds = np.searchsorted(ends[3][order], np.arange(n_sets + 1)).astype(np.int64)
        flows_by_set = ends[0][order], ends[1][order], ends[2][order], bounds
        return _kernel("moved_flow_loads")(
            pred_starts, pred_tail, pred_orbit, ratio, *geometry, *flows_by_set
        )
    forward = np.ones(arrays.n_nodes, dtype=np.bool_) if transit is None else transit.astype(np.bool_)
    return _kernel("flow_loads")(*edges, forward, *common, *ends)


def dag_sizes(symmetry: TorusSymmetry, offsets: np.ndarray) -> np.ndarray:
    """How many chips lie on chip 0's shortest paths to each offset: per axis the chips between,
    the whole ring where it is half way round an even one (both ways are shortest)."""
    sizes = np.asarray(symmetry.sizes)
    c = symmetry.coords[offsets].astype(np.int64)
    return np.where(2 * c == sizes, sizes, np.minimum(c, sizes - c) + 1).prod(axis=1)


def _walk(translated: Translated, sources, offsets, weight, owner, n_sets: int) -> np.ndarray:
    """The compiled ``moved_flow_loads`` in numpy: every flow's DAG walked backwards at once, one
    distance from chip 0 at a time, each (flow, chip) once with the bytes through it summed."""
    pred_starts, pred_tail, pred_orbit, ratio, table = translated.mover
    sym, dist, n = translated.symmetry, translated.dist, translated.arrays.n_nodes
    coords, sizes, strides = sym.coords.astype(np.int64), np.asarray(sym.sizes), np.asarray(sym.strides)
    n_edges = len(translated.arrays.src)
    loads = np.zeros(n_sets * n_edges)
    start = (dist[offsets] > 0) & (weight != 0)
    flow, node, through = np.flatnonzero(start), offsets[start], weight[start]
    waiting = dist[node]  # each flow's walk starts at its own distance
    if not len(flow):
        return loads.reshape(n_sets, n_edges)
    now = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
    for level in range(int(waiting.max()), 0, -1):
        joining = waiting == level
        f, v, th = (
            np.r_[now[0], flow[joining]],
            np.r_[now[1], node[joining]],
            np.r_[now[2], through[joining]],
        )
        degree = pred_starts[v + 1] - pred_starts[v]
        which = np.repeat(np.arange(len(v)), degree)
        k = (
            np.repeat(pred_starts[v], degree)
            + np.arange(degree.sum())
            - np.repeat(np.cumsum(degree) - degree, degree)
        )
        f, u, share = f[which], pred_tail[k], ratio[k] * th[which]
        moved = ((coords[u] + coords[sources[f]]) % sizes) @ strides
        loads += np.bincount(owner[f] * n_edges + table[moved, pred_orbit[k]], share, len(loads))
        keys, inverse = np.unique(f * n + u, return_inverse=True)
        now = (keys // n, keys % n, np.bincount(inverse.ravel(), share))
    return loads.reshape(n_sets, n_edges)


@functools.cache
def _module():
    from trnsim.routing.jitcache import Compiled

    return Compiled("trnsim.routing._translated")


def _kernel(name: str):
    return functools.partial(_module().call, name)
