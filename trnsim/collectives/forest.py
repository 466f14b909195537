"""Broadcast trees packed over the whole fabric, relaying through chips outside the group.

An all-gather on a group ``C`` is ``p`` broadcasts, one from each member. Its exact optimum
(:mod:`trnsim.model.optimum`: the min-ratio cut, ``|X n C| (S/p) / B(X)``) lets every other chip
relay, and is reached by packing, for each member, broadcast trees that span the group and may pass
through any chip (ForestColl, Zhao et al. 2024). This module finds such a packing; the algorithm
``forest`` (:mod:`trnsim.collectives.algorithms.forest`) turns it into a schedule and a program.

The overlay
-----------
Trees are built over an *overlay* whose nodes are the chips and whose arcs are the chip pairs joined
by shortest paths that pass through switches only (on a torus: the direct links; on a switched
fabric: the chips one switch apart, and direct cables). Each arc's bytes spread over the physical
links exactly as the router spreads a flow between those two chips (ECMP: evenly over the shortest
paths); an arc is kept only when the router's shortest paths between its ends are the same with and
without chips forwarding, so the load the packing plans is the load the cost model charges.

The packing
-----------
Multiplicative weights over the links (Garg and Koenemann's scheme for concurrent flows, with a
shortest-path Steiner tree as the oracle): in each of ``rounds`` rounds, each member in turn gets
the tree of shortest paths to every other member under the current link prices, and every link the
tree loads gets dearer exponentially in its utilisation. Every tree carries ``1 / rounds`` of its
root's block, so each member ends with ``rounds`` trees of equal share (the program's parts). The
result is not proven optimal; the engine's bound (an independent cut computation) measures it.
"""

from dataclasses import dataclass

import numpy as np

from trnsim.collectives.schedule import NotApplicable
from trnsim.topology.arrays import GraphArrays, graph_arrays
from trnsim.topology.graph import Topology

# Assumptions (work limits, not model parameters): the overlay is built from every chip (BFS rows x
# nodes) and each round runs one Dijkstra per member, so the work grows as chips x devices and
# members x rounds x overlay arcs; beyond these the algorithm declines rather than run for minutes.
MAX_CHIPS = 1024
MAX_MEMBERS = 128
MAX_OVERLAY_ARCS = 200_000
ROUNDS = 32  # trees per member (the program's parts); more pack closer to the bound, at more transfers
HOP_PENALTY = 1.0
SHARPNESS = 12.0  # how steeply a link's price grows with its utilisation relative to the busiest


@dataclass(frozen=True)
class Overlay:
    """Chip-to-chip arcs and the bytes each puts on every directed link per byte it carries."""

    tail: np.ndarray  # chip node index of each arc's source
    head: np.ndarray  # and of its destination
    loads: object  # scipy CSR, arcs x directed edges
    n_chips: int


@dataclass(frozen=True)
class Tree:
    """One broadcast tree: ``(parent, child, depth of the child)`` arcs as chip node indices."""

    root: int  # the root's group position
    part: int  # which of its root's ``rounds`` equal parts it carries
    arcs: tuple[tuple[int, int, int], ...]


def _refuse(arrays: GraphArrays, p: int) -> None:
    if arrays.n_chips > MAX_CHIPS:
        raise NotApplicable(
            f"packs trees over at most {MAX_CHIPS:,} chips; this fabric has {arrays.n_chips:,}"
        )
    if p > MAX_MEMBERS:
        raise NotApplicable(f"packs trees for at most {MAX_MEMBERS} ranks; this group has {p}")


def _arc_entries(arrays: GraphArrays, dist, sigma, pairs, transit) -> tuple[np.ndarray, ...]:
    """(arc, directed edge, share) for each arc's ECMP spread over switch-only shortest paths
    (as :func:`trnsim.routing.ecmp.pair_loads`, kept sparse)."""
    s, t = pairs
    d = dist[s, t]
    flow, nodes = np.nonzero((dist[s] + dist[t] == d[:, None]) & (dist[t] > 0) & (dist[s] >= 0))
    keep = transit[nodes] | (dist[s[flow], nodes] == 0)
    flow, nodes = flow[keep], nodes[keep]
    which, edges = arrays.expand(nodes)
    flow, tails, heads = flow[which], nodes[which], arrays.dst[edges]
    s_f, t_f = s[flow], t[flow]
    onward = (dist[s_f, heads] == dist[s_f, tails] + 1) & (dist[t_f, heads] == dist[t_f, tails] - 1)
    onward &= transit[heads] | (dist[t_f, heads] == 0)
    flow, tails, heads, edges = flow[onward], tails[onward], heads[onward], edges[onward]
    share = sigma[s_f[onward], tails] * sigma[t_f[onward], heads] / sigma[s_f[onward], t_f[onward]]
    return flow, edges, share


def overlay(topology: Topology, p: int) -> Overlay:
    """The chip overlay of ``topology`` (module docstring), cached on the topology."""
    import scipy.sparse as sp

    from trnsim.routing.shortest import bfs

    arrays = graph_arrays(topology)
    _refuse(arrays, p)
    if topology.cache.forest_overlay is not None:
        return topology.cache.forest_overlay
    n = arrays.n_chips
    transit = np.arange(arrays.n_nodes) >= n  # switches forward; chips only end a path
    through = bfs(arrays, np.arange(n), transit)
    anywhere = bfs(arrays, np.arange(n))
    # rows are chips, so ``dist[t]`` is the distance from chip t, read as the distance to it (the
    # fabric's links run both ways, at equal counts of paths)
    dist, sigma = through.dist, through.sigma
    same = (dist[:, :n] > 0) & (dist[:, :n] == anywhere.dist[:, :n]) & (sigma[:, :n] == anywhere.sigma[:, :n])
    tail, head = np.nonzero(same)
    if len(tail) > MAX_OVERLAY_ARCS:
        raise NotApplicable(f"the chip overlay has {len(tail):,} arcs; at most {MAX_OVERLAY_ARCS:,}")
    rows, cols, vals = [], [], []
    step = max(1, 2_000_000 // max(arrays.n_nodes, 1))
    for lo in range(0, len(tail), step):
        flow, edges, share = _arc_entries(
            arrays, dist, sigma, (tail[lo : lo + step], head[lo : lo + step]), transit
        )
        rows.append(flow + lo)
        cols.append(edges)
        vals.append(share)
    loads = sp.csr_array(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(len(tail), len(arrays.src)),
    )
    topology.cache.forest_overlay = Overlay(tail, head, loads, n)
    return topology.cache.forest_overlay


def _tree(graph, root: int, members: np.ndarray, prices: np.ndarray, net: Overlay) -> list[tuple[int, int]]:
    """The arcs (overlay indices) of the shortest-path tree from ``root`` to every member."""
    from scipy.sparse.csgraph import dijkstra

    cost = net.loads @ prices
    # every arc also costs a share of the mean: fewer levels, so fewer pipeline rounds to fill
    cost = cost + HOP_PENALTY * cost.mean() + 1e-12  # (never zero: csgraph drops zeros)
    graph.data[:] = cost[graph.indices_order]
    _, pred = dijkstra(graph.matrix, indices=root, return_predecessors=True)
    used: set[tuple[int, int]] = set()
    for member in members:
        node = int(member)
        if pred[node] < 0 and node != root:
            raise NotApplicable("a member cannot be reached over the chip overlay")
        while node != root and (int(pred[node]), node) not in used:
            used.add((int(pred[node]), node))
            node = int(pred[node])
    return sorted(used)


class _Graph:
    """The overlay as a CSR matrix whose weights are rewritten per tree (its structure is fixed)."""

    def __init__(self, net: Overlay):
        import scipy.sparse as sp

        n = net.n_chips
        order = np.lexsort((net.head, net.tail))
        self.matrix = sp.csr_matrix((np.ones(len(order)), (net.tail[order], net.head[order])), shape=(n, n))
        self.matrix.sort_indices()
        self.indices_order = order  # the CSR holds the arcs in (tail, head) order
        self.data = self.matrix.data
        self.arc = {(int(a), int(b)): i for i, (a, b) in enumerate(zip(net.tail, net.head, strict=True))}


def pack(topology: Topology, group: list[str], rounds: int = ROUNDS) -> list[Tree]:
    """``rounds`` broadcast trees per member, spanning the group (module docstring)."""
    arrays = graph_arrays(topology)
    _refuse(arrays, len(group))
    net = overlay(topology, len(group))
    members = np.asarray([arrays.index[chip] for chip in group], dtype=np.int64)
    if np.any(members >= arrays.n_chips):
        raise NotApplicable("a member is not a chip of the fabric")
    graph = _Graph(net)
    cap = arrays.bw_gbps
    used = np.zeros(len(cap))  # utilisation: bytes per unit of capacity
    prices = 1.0 / cap
    trees = []
    for part in range(rounds):
        for position, root in enumerate(members):
            pairs = _tree(graph, int(root), members, prices, net)
            arcs = np.fromiter((graph.arc[pair] for pair in pairs), dtype=np.int64, count=len(pairs))
            used += np.asarray(net.loads[arcs].sum(axis=0)).ravel() / cap
            top = used.max()
            prices = np.exp(SHARPNESS * (used / top - 1.0)) / cap
            trees.append(Tree(position, part, _depths(pairs, int(root))))
    return trees


def _depths(pairs: list[tuple[int, int]], root: int) -> tuple[tuple[int, int, int], ...]:
    """The tree's arcs with the depth of each child (the root at 0), parents before children."""
    children: dict[int, list[int]] = {}
    for a, b in pairs:
        children.setdefault(a, []).append(b)
    out, level, depth = [], [root], 0
    while level:
        depth += 1
        nxt = []
        for a in level:
            for b in children.get(a, ()):
                out.append((a, b, depth))
                nxt.append(b)
        level = nxt
    return tuple(out)
