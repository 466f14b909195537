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
Candidates, then weights. Candidates: multiplicative weights over the links (Garg and Koenemann's
scheme for concurrent flows, with a shortest-path Steiner tree as the oracle), run once per hop
penalty in :data:`HOP_PENALTIES` (deeper and shallower trees): in each of ``rounds`` rounds, each
member in turn gets the tree of shortest paths to every other member under the current link prices,
and every link the tree loads gets dearer exponentially in its utilisation. Weights: a linear program
(HiGHS) gives each tree a share of its root's block, each root's shares summing to 1, minimising the
busiest link's utilisation; its vertex keeps few trees. Depth costs the pipeline (fill rounds, one
alpha per round), so only trees up to the least depth that packs within :data:`DEPTH_SLACK` of the
best are used (groups of up to :data:`LP_MEMBERS`; larger ones keep one multiplicative-weights run
of ``2 x rounds`` rounds at equal shares). Then column generation: each member's shortest-path tree under the program's dual
link prices joins when it would lower the optimum, until none does (or :data:`GENERATIONS`). The
shortest-path oracle is a heuristic for the cheapest Steiner tree, so the result is not proven
optimal; the engine's bound (an independent cut computation) measures it. On the catalog's switched
and torus fabrics the program's steady state reaches that bound (the pipeline's fill and per-round
alpha are what remains).
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
ROUNDS = 16  # rounds of each multiplicative-weights run: candidate trees per member for the linear program
GENERATIONS = (
    20  # column-generation rounds after them (each adds, per member, its cheapest tree under the duals)
)
HOP_PENALTIES = (1.0, 4.0, 16.0)  # one multiplicative-weights run each: deeper and shallower candidates
DEPTH_SLACK = 0.01  # the shallowest trees whose packing is within this of the best are kept (fewer levels)
PRICING_HOP = 0.01  # the hop share while pricing: small, so it only breaks ties towards shallow trees
# the linear program's time grows steeply with members x candidates (a 128-rank torus: minutes);
# larger groups keep the multiplicative weights' own packing, every tree at an equal share
LP_MEMBERS = 32
MIN_WEIGHT = 1e-9  # lighter trees are dropped (a vertex's zeros come back as roundoff)
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
    weight: float  # the share of its root's block it carries (a root's trees' weights sum to 1)
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


def _tree(graph, root: int, members: np.ndarray, prices: np.ndarray, hop: float) -> list[tuple[int, int]]:
    """The arcs (overlay indices) of the shortest-path tree from ``root`` to every member, each arc
    costing its bytes' prices plus ``hop`` times the mean arc's cost."""
    from scipy.sparse.csgraph import dijkstra

    cost = graph.loads @ prices
    # a share of the mean on every arc: fewer levels, so fewer pipeline rounds to fill
    cost = cost + hop * cost.mean() + 1e-12  # (never zero: csgraph drops zeros)
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
        self.loads = net.loads
        self.arc = {(int(a), int(b)): i for i, (a, b) in enumerate(zip(net.tail, net.head, strict=True))}


class _Columns:
    """The candidate trees: each one's root, arcs, depth and utilisation of every directed link (its
    bytes there per byte of its root's block, over the link's capacity), without repeats."""

    def __init__(self, graph: _Graph, cap: np.ndarray, members: np.ndarray):
        self.graph, self.cap, self.members = graph, cap, members
        self.roots: list[int] = []
        self.arcs: list[tuple[tuple[int, int, int], ...]] = []
        self.depth: list[int] = []
        self.use: list[np.ndarray] = []
        self.seen: dict[tuple, int] = {}
        self.count: list[int] = []  # how often the multiplicative weights chose each tree

    def utilisation(self, pairs: list[tuple[int, int]]) -> np.ndarray:
        arcs = np.fromiter((self.graph.arc[pair] for pair in pairs), dtype=np.int64, count=len(pairs))
        return np.asarray(self.graph.loads[arcs].sum(axis=0)).ravel() / self.cap

    def add(
        self, position: int, pairs: list[tuple[int, int]], use: np.ndarray, limit: int | None = None
    ) -> bool:
        """Add the tree unless it is known or deeper than ``limit``; whether it was added."""
        key = (position, tuple(pairs))
        if key in self.seen:
            self.count[self.seen[key]] += 1
            return False
        arcs = _depths(pairs, int(self.members[position]))
        depth = max(d for *_, d in arcs)
        if limit is not None and depth > limit:
            return False
        self.seen[key] = len(self.use)
        self.count.append(1)
        self.roots.append(position)
        self.arcs.append(arcs)
        self.depth.append(depth)
        self.use.append(use)
        return True


def _weights(columns: _Columns, limit: int) -> tuple[np.ndarray, float, np.ndarray, np.ndarray] | None:
    """The weights of the trees at most ``limit`` deep, by linear program: each member's sum to 1, the
    busiest link's utilisation as low as it goes. Returns the weights (zero for deeper trees), that
    utilisation, and the duals: the links' prices and each member's price (a tree whose utilisation
    costs less than its root's price would lower it); None if a member has no such tree."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    p = len(columns.members)
    pick = np.flatnonzero(np.asarray(columns.depth) <= limit)
    roots = np.asarray(columns.roots)[pick]
    if len(set(roots.tolist())) < p:
        return None
    n = len(pick)
    use = sp.csr_array(np.column_stack([columns.use[i] for i in pick]))
    live = np.flatnonzero(use.sum(axis=1) > 0)  # the links some tree loads
    a_ub = sp.hstack([use[live], sp.csr_array(-np.ones((len(live), 1)))], format="csc")
    a_eq = sp.csc_array((np.ones(n), (roots, np.arange(n))), shape=(p, n + 1))
    objective = np.zeros(n + 1)
    objective[-1] = 1.0
    # dual simplex: a vertex, so few trees carry weight (at most one per member and per busy link)
    res = linprog(objective, a_ub, np.zeros(len(live)), a_eq, np.ones(p), bounds=(0, None), method="highs-ds")
    if res.status != 0:
        raise NotApplicable(f"the trees' weights have no solution ({res.message})")
    weights, prices = np.zeros(len(columns.use)), np.zeros(len(columns.cap))
    weights[pick] = res.x[:-1]
    prices[live] = -res.ineqlin.marginals
    return weights, float(res.x[-1]), prices, res.eqlin.marginals


def _candidates(columns: _Columns, graph: _Graph, rounds: int, penalties: tuple[float, ...]) -> None:
    """Multiplicative weights, once per hop penalty: each round, each member's shortest-path tree
    under the links' prices, every loaded link then dearer exponentially in its utilisation."""
    cap = columns.cap
    for hop in penalties:
        used = np.zeros(len(cap))
        prices = 1.0 / cap
        for _ in range(rounds):
            for position, root in enumerate(columns.members):
                pairs = _tree(graph, int(root), columns.members, prices, hop)
                use = columns.utilisation(pairs)
                columns.add(position, pairs, use)
                used += use
                prices = np.exp(SHARPNESS * (used / used.max() - 1.0)) / cap


def _shallowest(columns: _Columns) -> int:
    """The least depth whose trees pack within :data:`DEPTH_SLACK` of the deepest's packing."""
    depths = sorted(set(columns.depth))
    best = _weights(columns, depths[-1])[1]
    for limit in depths:
        found = _weights(columns, limit)
        if found is not None and found[1] <= best * (1 + DEPTH_SLACK):
            return limit
    return depths[-1]


def pack(
    topology: Topology, group: list[str], rounds: int = ROUNDS, generations: int = GENERATIONS
) -> list[Tree]:
    """Broadcast trees per member, spanning the group, and their weights (module docstring); kept
    on the topology, as a group's schedule and its program both pack the same trees (seconds each)."""
    key = (tuple(group), rounds, generations)
    if key not in topology.cache.forest_trees:
        topology.cache.forest_trees[key] = tuple(_pack(topology, group, rounds, generations))
    return list(topology.cache.forest_trees[key])


def _pack(topology: Topology, group: list[str], rounds: int, generations: int) -> list[Tree]:
    arrays = graph_arrays(topology)
    _refuse(arrays, len(group))
    net = overlay(topology, len(group))
    members = np.asarray([arrays.index[chip] for chip in group], dtype=np.int64)
    if np.any(members >= arrays.n_chips):
        raise NotApplicable("a member is not a chip of the fabric")
    graph = _Graph(net)
    columns = _Columns(graph, arrays.bw_gbps, members)
    if len(group) > LP_MEMBERS:  # one run, every choice of the multiplicative weights at an equal share
        _candidates(columns, graph, 2 * rounds, HOP_PENALTIES[:1])
        return _trees(columns, np.asarray(columns.count, dtype=float))
    _candidates(columns, graph, rounds, HOP_PENALTIES)
    limit = _shallowest(columns)
    for _ in range(generations):
        weights, top, link_prices, member_prices = _weights(columns, limit)
        added = False
        for position, root in enumerate(members):
            pairs = _tree(graph, int(root), members, link_prices / columns.cap, PRICING_HOP)
            use = columns.utilisation(pairs)
            if use @ link_prices < member_prices[position] - 1e-9 * top:
                added |= columns.add(position, pairs, use, limit)
        if not added:
            break
    else:
        weights = _weights(columns, limit)[0]
    return _trees(columns, weights)


def _trees(columns: _Columns, weights: np.ndarray) -> list[Tree]:
    """The trees the weights keep, each root's scaled to sum to exactly 1."""
    keep = np.flatnonzero(weights > MIN_WEIGHT)
    roots = np.asarray(columns.roots)
    total = np.bincount(roots[keep], weights[keep], minlength=len(columns.members))
    return [Tree(int(roots[i]), float(weights[i] / total[roots[i]]), columns.arcs[i]) for i in keep]


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
