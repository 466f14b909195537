"""A wrapped torus routed by translation: chip 0's shortest paths stand for every member's.

On a wrapped torus whose node indices are the ranks, the distance, shortest-path count and path
latency from chip ``s`` to node ``v`` are chip 0's to ``v - s`` (:class:`TorusSymmetry`). A
:class:`Translated` keeps chip 0's three rows and reads any member's entries off them by index
arithmetic on the coordinates, so a group costs one BFS and memory linear in the torus, not
members x nodes matrices (32 GB at 32,768 chips). :func:`flow_loads` walks each flow's own
shortest-path DAG with distances read the same way: the numbers of
:func:`trnsim.routing.kernels.flow_loads` on the full matrices.
"""

from functools import cached_property

import numpy as np

from trnsim.routing.shortest import BFS, bfs, path_latency_ns
from trnsim.routing.symmetry import TorusSymmetry
from trnsim.topology.arrays import GraphArrays

# members x members entries compared at once when a group is not the whole torus
BLOCK_ENTRIES = 4_000_000


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
        orbit = self.edge_orbit
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

    @cached_property
    def edge_orbit(self) -> np.ndarray:
        """Each directed edge's orbit under the translations (its axis and direction)."""
        return self.symmetry.edge_orbits(self.arrays.src, self.arrays.dst).astype(np.int64)

    @cached_property
    def reverse(self) -> np.ndarray:
        """Each directed edge's reverse (a link's two directions)."""
        n = self.arrays.n_nodes
        codes = self.arrays.src.astype(np.int64) * n + self.arrays.dst
        order = np.argsort(codes)
        return order[np.searchsorted(codes[order], self.arrays.dst.astype(np.int64) * n + self.arrays.src)]

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
