"""Demands that are another's image under a symmetry of a translated torus: routed once.

Under ECMP a flow's shortest paths are its reverse's turned round, so a demand that is another one
turned round (a tree's broadcast after its reduce, a reduce-scatter stage after an all-gather's)
puts the other's load of each directed edge on that edge's reverse. On a wrapped torus whose node
indices are the ranks, the rank-order mirror ``r -> n - 1 - r`` (each coordinate ``x -> k - 1 - x``)
is an automorphism too: a demand equal to its own mirror image (NCCL's second tree mirrors the
first, a recursive-doubling exchange is its own mirror) is some flows and their images, so those
flows are routed and their loads added to their mirror image.

Used on large tori routed by translation (:class:`~trnsim.routing.translated.Translated`), where a
step's flows can number tens of thousands and each is walked over its own paths; the loads are the
same up to the order of additions.
"""

from functools import cached_property

import numpy as np

from trnsim.routing.loads import choose
from trnsim.routing.paths import GroupPaths
from trnsim.routing.strategies import pairs
from trnsim.routing.strategies.base import Demand, LinkLoads, Strategy


class Images:
    """Where each directed edge goes when flows are turned round, and under the rank-order mirror."""

    def __init__(self, paths: GroupPaths):
        self.paths = paths
        arrays = paths.arrays
        n = arrays.n_nodes
        self._codes = arrays.src.astype(np.int64) * n + arrays.dst
        self._order = np.argsort(self._codes)
        self._sorted = self._codes[self._order]

    def _edges(self, tails: np.ndarray, heads: np.ndarray) -> np.ndarray | None:
        """The directed edge from each tail to its head, or None if one is missing or doubled."""
        if np.any(self._sorted[1:] == self._sorted[:-1]):
            return None  # parallel edges: an edge is not named by its ends
        codes = tails.astype(np.int64) * self.paths.arrays.n_nodes + heads
        at = np.minimum(np.searchsorted(self._sorted, codes), len(self._sorted) - 1)
        if not np.array_equal(self._sorted[at], codes):
            return None
        return self._order[at]

    def _keeps(self, image: np.ndarray | None, nodes: np.ndarray | None = None) -> np.ndarray | None:
        """``image`` if it maps every edge onto one of the same bandwidth and latency (and, with
        ``nodes``, every node onto one of the same latency), else None."""
        a = self.paths.arrays
        if image is None or not np.array_equal(a.bw_gbps[image], a.bw_gbps):
            return None
        if not np.array_equal(a.link_latency_ns[image], a.link_latency_ns):
            return None
        if nodes is not None and not np.array_equal(a.node_latency_ns[nodes], a.node_latency_ns):
            return None
        return image

    @cached_property
    def reverse(self) -> np.ndarray | None:
        """Each directed edge's reverse (None: not every edge has one alike)."""
        a = self.paths.arrays
        return self._keeps(self._edges(a.dst, a.src))

    @cached_property
    def mirror(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(position, edge)`` images under the rank-order mirror: each member's position's image
        and each directed edge's; None when the members are not the whole torus."""
        t = self.paths.translated
        if t is None or not t.whole:
            return None
        a = self.paths.arrays
        n = a.n_nodes
        at = np.empty(n, dtype=np.int64)
        at[t.rows] = np.arange(n)
        edge = self._keeps(self._edges(n - 1 - a.src, n - 1 - a.dst), n - 1 - np.arange(n))
        return None if edge is None else (at[n - 1 - t.rows], edge)


def _key(src: np.ndarray, dst: np.ndarray, weight: np.ndarray) -> bytes:
    """The demand's flows as a multiset: sorted, as bytes."""
    order = np.lexsort((weight, dst, src))
    return b"".join(np.ascontiguousarray(x[order]).tobytes() for x in (src, dst, weight))


def loads(paths: GroupPaths, demands: list[Demand], seed: int, images: Images) -> list[LinkLoads]:
    """:func:`trnsim.routing.loads.loads`, routing once each demand walked flow by flow (the
    ``pairs`` strategy) that equals an earlier one, is an earlier one turned round, or is its own
    mirror image (half of it then); the other strategies' work does not grow with the flows' paths."""
    plan: list[tuple] = []  # per demand: ("same", i), ("reverse", i), ("mirror", i, j, flows), ("own", i)
    routed: list[tuple[Demand, Strategy]] = []
    seen: dict[bytes, int] = {}
    for demand in demands:
        strategy = choose(paths, demand)
        if strategy is not pairs.STRATEGY:
            plan.append(("own", len(routed)))
            routed.append((demand, strategy))
            continue
        src, dst, weight = demand.src, demand.dst, demand.weight
        key = _key(src, dst, weight)
        if key in seen:
            plan.append(("same", seen[key]))
            continue
        turned = _key(dst, src, weight)
        if turned in seen and images.reverse is not None:
            plan.append(("reverse", seen[turned]))
            continue
        seen[key] = len(plan)
        halves = _mirror_halves(demand, paths.p, images)
        if halves is None:
            plan.append(("own", len(routed)))
            routed.append((demand, strategy))
        else:
            plan.append(("mirror", len(routed), len(routed) + 1, demand.count(paths.p)))
            routed += [(half, choose(paths, half)) for half in halves]
    found = _route(paths, routed, seed)
    out: list[LinkLoads] = []
    for entry in plan:
        if entry[0] == "own":
            out.append(found[entry[1]])
        elif entry[0] == "same":
            out.append(out[entry[1]])
        elif entry[0] == "reverse":
            done = out[entry[1]]
            out.append(LinkLoads(done.loads[images.reverse], done.latency_ns, done.max_links, done.flows))
        else:
            out.append(_mirrored(found[entry[1]], found[entry[2]], entry[3], images))
    return out


def _route(paths: GroupPaths, routed: list[tuple[Demand, Strategy]], seed: int) -> list[LinkLoads]:
    """Each demand routed by its strategy, each strategy's demands in one batch (as
    :func:`trnsim.routing.loads.loads` does)."""
    batches: dict[str, tuple[Strategy, list[int]]] = {}
    for i, (_, strategy) in enumerate(routed):
        batches.setdefault(strategy.name, (strategy, []))[1].append(i)
    found: list[LinkLoads | None] = [None] * len(routed)
    for strategy, members in batches.values():
        for i, result in zip(
            members, strategy.loads(paths, [routed[i][0] for i in members], seed), strict=True
        ):
            found[i] = result
    return found


def _mirror_halves(demand: Demand, p: int, images: Images) -> list[Demand] | None:
    """A demand equal to its mirror image as the flows to route (those before their image, in the
    order of ``src x p + dst``) and those that are their own image; None if it is not its image."""
    if images.mirror is None or len(demand.src) < 2:
        return None
    position, _ = images.mirror
    src, dst, weight = demand.src, demand.dst, demand.weight
    if _key(position[src], position[dst], weight) != _key(src, dst, weight):
        return None
    code, image = src * p + dst, position[src] * p + position[dst]
    first, fixed = code < image, code == image
    return [Demand(src[first], dst[first], weight[first]), Demand(src[fixed], dst[fixed], weight[fixed])]


def _mirrored(half: LinkLoads, fixed: LinkLoads, flows: int, images: Images) -> LinkLoads:
    """The loads of some flows, plus their mirror images', plus the flows that are their own image."""
    _, edge = images.mirror
    moved = np.empty_like(half.loads)
    moved[edge] = half.loads
    latency = max(half.latency_ns, fixed.latency_ns)
    return LinkLoads(half.loads + moved + fixed.loads, latency, max(half.max_links, fixed.max_links), flows)
