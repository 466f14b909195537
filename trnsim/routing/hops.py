"""Hop statistics between chips: distances, histograms, diameters and one shortest path.

Two hop metrics are always kept apart: ``links`` is the number of links on a shortest path (the
torus convention) and ``hops`` the number of devices passed through between source and destination
(switches and relaying chips: the convention of the Trainium3 descriptions). On any shortest path
between two distinct chips, ``hops = links - 1``.
"""

from collections import deque
from dataclasses import dataclass

import numpy as np

from trnsim import limits
from trnsim.errors import UsageError
from trnsim.routing.shortest import bfs, source_chunks, transit_mask
from trnsim.topology.arrays import graph_arrays
from trnsim.topology.graph import Topology


@dataclass(frozen=True)
class HopStats:
    """Shortest-path statistics over unordered pairs of distinct chips."""

    pairs: int
    diameter_links: int
    avg_links: float
    histogram_links: dict[int, int]

    @property
    def diameter_hops(self) -> int:
        # a one-chip system has no pairs: diameter 0 links and 0 hops, not -1
        return max(self.diameter_links - 1, 0)

    @property
    def avg_hops(self) -> float:
        return max(self.avg_links - 1, 0.0)

    @property
    def histogram_hops(self) -> dict[int, int]:
        return {links - 1: count for links, count in self.histogram_links.items()}


def _connected(topology: Topology, sources: list[str], targets: list[str], dist: np.ndarray) -> np.ndarray:
    """``dist`` itself, or a UsageError naming a pair that cannot meet (only without relay)."""
    if np.any(dist < 0):
        a, b = np.argwhere(dist < 0)[0]
        raise UsageError(
            f"{topology.where}: {sources[a]} cannot reach {targets[b]} when only switches forward "
            "traffic (routing without relay)"
        )
    return dist


def _transit(topology: Topology, arrays) -> np.ndarray | None:
    """Devices a path may pass through under the file's routing (switches only without relay)."""
    return transit_mask(arrays, topology.spec.routing.relay)


def link_distances(topology: Topology, sources: list[str] | None = None) -> np.ndarray:
    """Links on a shortest path from each source chip to every chip (a sources x chips matrix).

    A level-synchronous BFS from all sources at once.
    """
    arrays = graph_arrays(topology)
    names = sources if sources is not None else topology.chips
    rows = np.asarray([arrays.index[s] for s in names])
    limits.PAIRS_WORK.check(
        len(rows) * (arrays.n_nodes + len(arrays.src)),
        f"{topology.where}: distances from {len(rows):,} chips need",
    )
    dist = _distances(arrays, rows, _transit(topology, arrays))[:, : topology.n_ranks]
    return _connected(topology, names, topology.chips, dist)


def _distances(arrays, rows: np.ndarray, transit) -> np.ndarray:
    """Links from each source to every node: compiled one source at a time on big graphs."""
    from trnsim.routing.kernels import COMPILED_FROM, bfs_all

    if len(rows) * (arrays.n_nodes + len(arrays.src)) >= COMPILED_FROM:
        return bfs_all(arrays, rows, transit, with_latency=False)[0]
    return bfs(arrays, rows, transit).dist


def hop_stats(topology: Topology, chips: list[str] | None = None) -> HopStats:
    """Hop statistics over all unordered pairs of the given endpoints (all ranks by default).

    Where chips host several ranks, a rank's path starts and ends on its chip's on-chip link:
    between ranks of two chips it is two links (and two hops) longer than between the chips
    (:func:`chip_hop_stats`).
    """
    return hop_histogram(topology, chips)


def chip_hop_stats(topology: Topology) -> HopStats:
    """Hop statistics over all unordered pairs of physical chips (the ranks' when one per chip)."""
    if topology.ranks_per_chip == 1:
        return hop_stats(topology)
    return hop_histogram(topology, topology.physical_chips)


def _ring_distance_counts(size: int, wrap: bool) -> np.ndarray:
    """How many ordered coordinate pairs of one axis lie 0, 1, 2, ... links apart."""
    a = np.arange(size)
    gap = np.abs(a[:, None] - a[None, :])
    if wrap:
        gap = np.minimum(gap, size - gap)
    return np.bincount(gap.ravel())


def hop_histogram(topology: Topology, chips: list[str] | None = None):
    """Hop statistics over unordered pairs of distinct chips (all chips by default).

    On a torus the distance is the sum of per-axis ring distances and coordinates pair up
    independently, so the histogram over all chips is the convolution of the axes' histograms: exact
    and instant at any size. Otherwise a BFS from every chip: compiled and bit-parallel on big graphs,
    else vectorised in chunks that bound memory.
    """

    spec = topology.spec
    if (
        chips is None
        and spec.kind == "torus"
        and spec.chip.ranks == 1
        and spec.routing.relay
        and not topology.faults
        and not any(axis.twist for axis in spec.torus.axes)  # a twisted torus is no product of rings
    ):
        ordered = np.array([1], dtype=np.int64)
        for axis in topology.spec.torus.axes:
            ordered = np.convolve(ordered, _ring_distance_counts(axis.size, axis.wrap))
        ordered[0] -= topology.n_ranks  # a chip and itself
        counts = ordered // 2
        links = np.flatnonzero(counts)
        histogram = {int(d): int(counts[d]) for d in links}
    else:
        arrays = graph_arrays(topology)
        names = chips if chips is not None else topology.chips
        idx = np.asarray([arrays.index[c] for c in names], dtype=np.int64)
        limits.PAIRS_WORK.check(
            len(idx) * (arrays.n_nodes + len(arrays.src)),
            f"{topology.where}: all-pairs hop statistics over {len(idx):,} chips need",
        )
        total = _compiled_counts(topology, arrays, idx)
        if total is None:
            total = _walked_counts(topology, arrays, list(names), idx)
        histogram = {int(v): int(total[v]) for v in np.flatnonzero(total)}
    pairs = sum(histogram.values())
    return HopStats(
        pairs=pairs,
        diameter_links=max(histogram, default=0),
        avg_links=sum(d * c for d, c in histogram.items()) / pairs if pairs else 0.0,
        histogram_links=histogram,
    )


def shortest_path(topology: Topology, src: str, dst: str) -> tuple[list[str], int]:
    """One shortest path (fewest links) from ``src`` to ``dst`` and the number of such paths.

    Without relay (the file's ``routing.relay``), paths pass through switches only.
    """
    graph = topology.graph
    relay = topology.spec.routing.relay
    dist, sigma, parents = {src: 0}, {src: 1}, {src: []}
    queue = deque([src])
    while queue:
        node = queue.popleft()
        if node == dst:
            break
        if not relay and node != src and topology.nodes[node]["kind"] == "chip":
            continue  # a chip that may not forward ends paths, it does not pass them on
        for nbr in graph.adj[node]:
            if nbr not in dist:
                dist[nbr], sigma[nbr], parents[nbr] = dist[node] + 1, 0, []
                queue.append(nbr)
            if dist[nbr] == dist[node] + 1:
                sigma[nbr] += sigma[node]
                parents[nbr].append(node)
    if dst not in dist:
        return [], 0
    # sigma[dst] is complete: every parent of dst was dequeued before dst
    path = [dst]
    while path[-1] != src:
        path.append(min(parents[path[-1]]))
    return path[::-1], sigma[dst]


def policy_path(topology: Topology, src: str, dst: str, seed: int = 0) -> list[str]:
    """The one path the file's single-path policy gives ``src -> dst`` (``single``, or ``hash`` with
    ``seed``); under ``ecmp`` the same path as :func:`shortest_path` (the flow is spread over all)."""
    from trnsim.routing.hashed import route_hashed
    from trnsim.routing.single import route_single

    routing = topology.spec.routing
    if routing.policy == "ecmp":
        return shortest_path(topology, src, dst)[0]
    arrays = graph_arrays(topology)
    transit = _transit(topology, arrays)
    s, t = arrays.index[src], arrays.index[dst]
    dist_to = bfs(arrays, np.array([t]), transit).dist
    if dist_to[0, s] < 0:
        return []
    args = (arrays, dist_to, np.array([s]), np.array([0]), np.array([t]), np.array([1.0]))
    if routing.policy == "single":
        torus = topology.spec.torus
        walked = route_single(
            *args, transit=transit, axis_order=[a.name for a in torus.axes] if torus else None
        )
    else:
        walked = route_hashed(*args, seed=seed, transit=transit)
    nxt = {int(arrays.src[e]): int(arrays.dst[e]) for e in np.flatnonzero(walked.loads > 0)}
    path, at = [src], s
    while at != t:
        at = nxt[at]
        path.append(arrays.nodes[at])
    return path


def _walked_counts(topology: Topology, arrays, names: list[str], idx: np.ndarray) -> np.ndarray:
    """Unordered pairs of the nodes ``idx`` at each distance: BFS distances from every one, in
    chunks that bound memory (a pair that cannot meet is a UsageError naming it)."""
    total = np.zeros(1, dtype=np.int64)
    for start, chunk in source_chunks(arrays, idx):
        d = _distances(arrays, chunk, _transit(topology, arrays))[:, idx]
        d = _connected(topology, names[start : start + len(chunk)], names, d)
        # each unordered pair once: only targets after the source in the list
        keep = np.arange(len(idx))[None, :] > (start + np.arange(len(chunk)))[:, None]
        found = np.bincount(d[keep])
        width = max(len(found), len(total))
        total = np.pad(total, (0, width - len(total))) + np.pad(found, (0, width - len(found)))
    return total


def _compiled_counts(topology: Topology, arrays, idx: np.ndarray) -> np.ndarray | None:
    """Unordered pairs of the nodes ``idx`` at each distance, from the compiled bit-parallel BFS
    (:func:`trnsim.routing.kernels.hop_counts`), on graphs large enough for the compiled kernels;
    None below that size, for a list with repeats (pairs at distance 0) and when some pair cannot meet
    (the BFS walk then names one)."""
    from trnsim.routing import kernels

    if len(idx) * (arrays.n_nodes + len(arrays.src)) < kernels.COMPILED_FROM:
        return None
    if len(np.unique(idx)) != len(idx):
        return None
    counts, missing = kernels.hop_counts(arrays, idx, _transit(topology, arrays))
    if missing:
        return None
    return counts // 2  # distances are symmetric: each unordered pair was counted from both ends
