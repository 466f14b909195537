"""Shortest paths among a group's members: what every load strategy reads.

A :class:`GroupPaths` holds, for the members of one group on one graph (:class:`GraphArrays`) under
one routing policy, the distances, shortest-path counts and path latencies from each member, and
what makes some strategies possible: the torus translations (:class:`TorusSymmetry`), the
automorphisms node names suggest (:func:`trnsim.routing.symmetry.member_orbits`), whether the
compiled kernels pay off. It is computed once per group and shared by every hash seed.

On a large wrapped torus, one BFS from chip 0 stands for all: every other member's distances, path
counts and latencies are read off it by translation.
"""

from functools import cached_property

import numpy as np

from trnsim.routing import kernels
from trnsim.routing.policy import RoutingPolicy
from trnsim.routing.shortest import BFS, bfs, path_latency_ns, transit_mask
from trnsim.routing.symmetry import MemberOrbits, TorusSymmetry, member_orbits, torus_symmetry
from trnsim.routing.translated import Translated
from trnsim.topology.arrays import GraphArrays
from trnsim.topology.graph import Topology

# tori at least this large are routed from one BFS and translations
SYMMETRY_FROM = 512


def translations(topology: Topology, policy: RoutingPolicy) -> TorusSymmetry | None:
    """The torus translations a whole-topology route may use: a wrapped torus of at least
    :data:`SYMMETRY_FROM` ranks under ECMP with relay (a restricted policy breaks the symmetry of
    paths), else None."""
    if policy.policy != "ecmp" or not policy.relay or topology.n_ranks < SYMMETRY_FROM:
        return None
    return torus_symmetry(topology)


def routing_work(topology: Topology, group: list[str]) -> int:
    """What routing ``group`` costs, in the units of :data:`trnsim.limits.ROUTING`.

    A BFS from every member touches every device and directed link; a whole wrapped torus large
    enough to be routed by translation does one BFS (from chip 0) and reads every member's rows off
    it, keeping no members x devices matrix.
    """
    devices, directed = len(topology.nodes), 2 * len(topology.links)
    if len(group) == topology.n_ranks >= SYMMETRY_FROM and torus_symmetry(topology) is not None:
        return devices + directed + len(group)
    return len(group) * (devices + directed)


class GroupPaths:
    """Shortest paths from each member of a group (rows: members in group order).

    Parameters
    ----------
    arrays : GraphArrays
        The graph (the whole topology, or a subgraph of some link classes).
    rows : array of int
        Each member's node index in ``arrays``.
    policy : RoutingPolicy
        How flows are spread (and whether chips relay: the transit mask).
    symmetry : TorusSymmetry, optional
        Translations of a wrapped torus whose node indices are the ranks (see :func:`translations`).
    partitioned : bool
        The graph falls apart into parts that each hold some members (a subgraph of some link
        classes): flows never leave their part.
    axis_order : list of str, optional
        Torus axes in dimension order, for the ``single`` policy.

    Attributes
    ----------
    dist, sigma : ndarray, members x nodes
        Links on a shortest path and the number of shortest paths (-1 and 0 where unreachable).
    latency : ndarray, members x members
        The largest path latency (ns) among each pair's shortest paths.
    compiled : bool
        Whether the group is large enough for the compiled kernels (:data:`kernels.COMPILED_FROM`).
    """

    def __init__(
        self,
        arrays: GraphArrays,
        rows: np.ndarray,
        policy: RoutingPolicy,
        symmetry: TorusSymmetry | None = None,
        partitioned: bool = False,
        axis_order: list[str] | None = None,
    ):
        self.arrays, self.rows, self.policy = arrays, rows, policy
        self.partitioned, self.axis_order = partitioned, axis_order
        self.transit = transit_mask(arrays, policy.relay)
        self.symmetry = symmetry
        self.compiled = len(rows) * (arrays.n_nodes + len(arrays.src)) >= kernels.COMPILED_FROM
        self.translated = None if symmetry is None else Translated(symmetry, arrays, rows)
        self._matrices = None
        if symmetry is None and self.compiled:
            # one source at a time at compiled speed; no DAG is kept (loads are recomputed per step)
            self._matrices = kernels.bfs_all(arrays, rows, self.transit, columns=rows)
        elif symmetry is None:
            self._matrices = self.bfs.dist, self.bfs.sigma, path_latency_ns(arrays, self.bfs)[:, rows]

    @property
    def dist(self) -> np.ndarray:
        return self._whole()[0]

    @property
    def sigma(self) -> np.ndarray:
        return self._whole()[1]

    @property
    def latency(self) -> np.ndarray:
        return self._whole()[2]

    def _whole(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The members x nodes matrices (and members x members latencies); under translations they
        are built from chip 0's rows only when a strategy reads whole matrices (small groups)."""
        if self._matrices is None:
            t = self.translated
            self._matrices = t.matrix(t.dist), t.matrix(t.sigma), t.matrix(t.latency, self.rows)
        return self._matrices

    def distance(self, members: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """Links on a shortest path from member positions to node indices (broadcast; -1:
        unreachable)."""
        if self._matrices is None and self.translated is not None:
            return self.translated.dist[self.translated.offsets(members, nodes)]
        return self.dist[members, nodes]

    def latency_between(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The largest path latency (ns) among the shortest paths between member positions."""
        if self._matrices is None and self.translated is not None:
            return self.translated.latency[self.translated.offsets(a, self.rows[b])]
        return self.latency[a, b]

    @cached_property
    def max_latency(self) -> float:
        """The largest path latency (ns) between two members."""
        if self._matrices is None and self.translated is not None:
            return float(self.translated.among_max(self.translated.latency))
        return float(self.latency.max())

    @property
    def p(self) -> int:
        """Members."""
        return len(self.rows)

    @property
    def ecmp(self) -> bool:
        return self.policy.policy == "ecmp"

    @cached_property
    def narrow_dist(self) -> np.ndarray:
        """``dist`` in the narrowest integers that hold a sum of two distances (the on-path test of
        :func:`trnsim.routing.ecmp.pair_loads` is memory-bound)."""
        return self.dist.astype(np.int8 if self.dist.max() < 60 else np.int16)

    @cached_property
    def bfs(self) -> BFS:
        """A BFS from every member, with its DAG (computed only when a strategy needs it)."""
        return bfs(self.arrays, self.rows, self.transit)

    @property
    def base_bfs(self) -> BFS:
        """The BFS from node 0 (chip 0 of a torus: what translations shift)."""
        return self.translated.base

    @cached_property
    def max_links(self) -> int:
        """The fewest links between the group's farthest two members."""
        if self._matrices is None and self.translated is not None:
            return int(self.translated.among_max(self.translated.dist))
        return int(self._among_members().max())

    def _among_members(self) -> np.ndarray:
        """``dist`` between members (members x members): a view when the members are consecutive
        nodes (a whole system's chips), not a copy of a matrix that can take hundreds of MB."""
        rows = self.rows
        if len(rows) and np.array_equal(rows, np.arange(rows[0], rows[0] + len(rows))):
            return self.dist[:, rows[0] : rows[0] + len(rows)]
        return self.dist[:, rows]

    @cached_property
    def member_orbits(self) -> MemberOrbits | None:
        """The members' and directed edges' orbits under the automorphisms node names suggest
        (:func:`trnsim.routing.symmetry.member_orbits`); None under another policy than ECMP, on a
        partitioned graph, or when none is found."""
        if not self.ecmp or self.partitioned:
            return None
        return member_orbits(self.arrays, self.rows, self.transit)

    def unreachable(self) -> tuple[int, int] | None:
        """The first pair of members (positions) with no path between them, or None."""
        if self._matrices is None and self.translated is not None:
            return self.translated.first_negative(self.translated.dist)
        among = self._among_members()
        if not np.any(among < 0):
            return None
        a, b = np.argwhere(among < 0)[0]
        return int(a), int(b)
