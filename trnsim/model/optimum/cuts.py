"""Cut searches for the exact bounds: the min-ratio cut (all-gather) and the smallest cut splitting
the group (all-reduce's reduction cut), by max-flow.

``B(X)`` is the bandwidth of the directed links leaving a vertex set ``X``. All-gather's optimum is
the largest ``|X n C| (S/p) / B(X)`` over ``X`` holding some members but not all, achievable by a
packing of broadcast trees (ForestColl: Zhao et al. 2024, arXiv 2402.06787, building on Edmonds'
arborescence packing). It is found by Dinkelbach's method with a max-flow per target member ``t``:
with a super source sending ``lambda`` to every member, all of it reaches ``t`` exactly when no ``X``
without ``t`` has ``B(X) < lambda |X n C|``; otherwise the min cut's source side is such an ``X``, and
``lambda`` drops to its ratio. Symmetries of the graph and the group let one target per orbit stand
for all (:mod:`trnsim.model.optimum.symmetry`).

Max-flow is scipy.sparse.csgraph's, imported lazily: start-up time matters for the CLI. Any cut is a
valid bound, so a search stopped by its work budget still returns one, flagged ``exact=False``.
"""

from dataclasses import dataclass

import numpy as np

from trnsim.model.optimum.graph import Network

# all-gather: work budget in max-flow calls x (devices + directed links); past it the search stops
# with the best cut so far (about 1.5 s on a 2-core machine, so that a run near the routing limit
# stays within ~20 s); the member cut has the same budget
FLOW_WORK = 15_000_000
# max-flow runs on int32 capacities: the super source's total supply is scaled to at most this many
# units (supplies rounded down, links rounded up, so every cut the flow reports is a real violating
# cut); a link rounds by at most one unit, so a cut can be missed only when it is within (its links)
# units of the best one; the reported ratio is always recomputed in floats from the real cut
SUPPLY_UNITS = 1 << 30


@dataclass(frozen=True)
class Cut:
    """A vertex set ``side`` and its ratio ``B(side) / |side n C|`` (GB/s per member)."""

    ratio: float
    side: np.ndarray  # node mask
    exact: bool  # proven the minimum (over the targets searched)


class _FlowGraph:
    """The network plus a super source (node ``n``) feeding every member, as a CSR of int32."""

    def __init__(self, net: Network):
        n, m, p = net.n, len(net.src), net.p
        rows = np.concatenate([net.src, np.full(p, n)])
        cols = np.concatenate([net.dst, net.members])
        order = np.lexsort((cols, rows))
        self.net = net
        self.order = order
        self.indices = cols[order].astype(np.int32)
        self.indptr = np.searchsorted(rows[order], np.arange(n + 2)).astype(np.int32)
        self.m = m

    def graph(self, link_scale: float, supply: int, clip: int):
        """Links scaled and rounded up (at most ``clip``), every supply edge ``supply``."""
        import scipy.sparse as sp

        data = np.empty(self.m + self.net.p, dtype=np.int64)
        data[: self.m] = np.minimum(np.ceil(self.net.cap * link_scale), clip)
        data[self.m :] = supply
        n = self.net.n + 1
        return sp.csr_array((data[self.order].astype(np.int32), self.indices, self.indptr), shape=(n, n))


def _source_side(graph, result, source: int, n: int) -> np.ndarray:
    """The min cut's source side: what the source still reaches in the residual graph."""
    from scipy.sparse.csgraph import breadth_first_order

    residual = graph - result.flow  # reverse entries (flow < 0) become residual capacity
    residual.data[residual.data < 0] = 0
    residual.eliminate_zeros()
    reached = breadth_first_order(residual, source, directed=True, return_predecessors=False)
    side = np.zeros(n + 1, dtype=bool)
    side[reached] = True
    return side[:n]


def gather_cut(
    net: Network,
    targets: np.ndarray | None = None,
    hints: list[np.ndarray] = (),
    weights: np.ndarray | None = None,
) -> Cut:
    """The min-ratio cut ``min B(X) / w(X n C)`` over ``X`` holding some weight but not all members.

    Parameters
    ----------
    targets : array of node indices, optional
        The target members to search (every member by default). Without ``weights`` fewer are sound
        when symmetries of the graph and the group map every member to one of them; with ``weights``
        the cuts searched are exactly those missing a target (a rooted flow: ``X`` must miss the
        root).
    hints : list of node masks
        Cuts to start from (natural cuts); any real cut is a valid start.
    weights : array, optional
        Each member's weight ``w`` (in group order; None: 1 each, the all-gather). The super source
        feeds member ``i`` with ``lambda w_i``: an all-gatherv's blocks, a rooted flow's demands.

    Examples
    --------
    Four chips joined pairwise by 100 GB/s: three members against the fourth send over 3 links, 100
    GB/s per member, the least of any split (one member alone has all 300 GB/s).

    >>> from trnsim.model.optimum.graph import network
    >>> from trnsim.topology.synthetic import complete_topology
    >>> square = complete_topology(4, bw_gbps=100.0)
    >>> cut = gather_cut(network(square, square.chips))
    >>> cut.ratio, int(cut.side.sum()), cut.exact
    (100.0, 3, True)

    All the weight on chip 0 and chip 3 the target: the cut is chip 3's 300 GB/s in (or chip 0's
    out), the max-flow from 0 to 3.

    >>> import numpy as np
    >>> gather_cut(network(square, square.chips), np.array([3]), weights=np.array([1.0, 0, 0, 0])).ratio
    300.0
    """
    p, n = net.p, net.n
    if p < 2:
        return Cut(float("inf"), np.zeros(n, dtype=bool), True)
    from scipy.sparse.csgraph import maximum_flow

    member = np.zeros(n, dtype=bool)
    member[net.members] = True
    weight = np.zeros(n)
    weight[net.members] = 1.0 if weights is None else np.asarray(weights, dtype=float)
    total = float(weight.sum())
    in_bw = np.bincount(net.dst, weights=net.cap, minlength=n)
    # the cuts searched miss a member of the pool: any member for the all-gather
    pool = net.members if weights is None or targets is None else np.asarray(targets)
    best = _first_cut(net, pool, weight, in_bw, hints)
    if best.ratio == float("inf"):
        return Cut(best.ratio, best.side, True)  # nothing has to move
    if best.ratio <= 0:
        return Cut(0.0, best.side, True)  # a disconnected group: no finite time
    flows = _FlowGraph(net)
    if targets is None:
        targets = net.members
    targets = list(targets[np.argsort(in_bw[targets], kind="stable")])
    work, budget = 0, FLOW_WORK
    lam = None
    exact = True
    for t in targets:
        while True:
            if work > budget:
                exact = False
                break
            if lam != best.ratio:  # rescale for the current lambda
                lam = best.ratio
                scale = SUPPLY_UNITS / (lam * total)
                supply = np.floor(lam * scale * weight[net.members]).astype(np.int64)
                graph = flows.graph(scale, supply, SUPPLY_UNITS + 1)
            work += n + len(net.src)
            result = maximum_flow(graph, n, int(t))
            if result.flow_value >= supply.sum():
                break  # no X without t has B(X) < lambda w(X n C)
            side = _source_side(graph, result, n, n)
            inside = float(weight[side].sum())
            ratio = net.out_bandwidth(side) / inside if inside else float("inf")
            if not ratio < best.ratio:  # cannot happen with the rounding directions; never loop
                break
            best = Cut(ratio, side, False)
        if not exact:
            break
    return Cut(best.ratio, best.side, exact)


def _first_cut(net: Network, pool: np.ndarray, weight: np.ndarray, in_bw: np.ndarray, hints) -> Cut:
    """The starting cut: the best of "everything but t" (t's reception) for t in ``pool`` and the
    hints, all real cuts; a hint counts when it misses a member of the pool and holds some weight."""
    n, total = net.n, float(weight.sum())
    with np.errstate(divide="ignore"):
        ratios = in_bw[pool] / (total - weight[pool])
    best_t = pool[np.argmin(ratios)]
    side = np.ones(n, dtype=bool)
    side[best_t] = False
    inside = total - float(weight[best_t])
    best = Cut(net.out_bandwidth(side) / inside if inside > 0 else float("inf"), side, False)
    in_pool = np.zeros(n, dtype=bool)
    in_pool[pool] = True
    for hint in hints:
        for candidate in (hint, ~hint):
            inside = float(weight[candidate].sum())
            if inside > 0 and not np.all(candidate[in_pool]):
                ratio = net.out_bandwidth(candidate) / inside
                if ratio < best.ratio:
                    best = Cut(ratio, candidate.copy(), False)
    return best


def member_cut(net: Network) -> Cut:
    """The smallest ``B(X)`` over ``X`` splitting the group (``ratio`` holds ``B(X)`` itself).

    Fixes the first member ``s``: the best ``X`` either holds ``s`` and misses some ``t`` (a max-flow
    ``s -> t``) or misses ``s`` and holds some ``t`` (``t -> s``; the same value on symmetric graphs).

    Examples
    --------
    Four chips joined pairwise by 100 GB/s: one chip against the rest is the thinnest split (3
    links; two against two cross 4).

    >>> from trnsim.model.optimum.graph import network
    >>> from trnsim.topology.synthetic import complete_topology
    >>> square = complete_topology(4, bw_gbps=100.0)
    >>> member_cut(network(square, square.chips)).ratio
    300.0
    """
    p, n = net.p, net.n
    if p < 2:
        return Cut(float("inf"), np.zeros(n, dtype=bool), True)
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_flow

    s = int(net.members[0])
    single = np.zeros(n, dtype=bool)
    single[s] = True
    out_s, in_s = net.out_bandwidth(single), net.out_bandwidth(~single)
    upper = max(min(out_s, in_s), 1e-300)
    scale = SUPPLY_UNITS / upper
    data = np.minimum(np.ceil(net.cap * scale), SUPPLY_UNITS + 1).astype(np.int32)
    graph = sp.csr_array((data, (net.src, net.dst)), shape=(n, n))
    graph.sort_indices()
    pairs = [(s, int(t)) for t in net.members[1:]]
    if not net.is_symmetric():
        pairs += [(t, s) for s, t in pairs]
    # past the work budget the pairs not yet tried are skipped: the smallest cut found so far is
    # no smaller than the true one, so S over it is still a valid (weaker) bound
    affordable = max(1, FLOW_WORK // (n + len(net.src)))
    exact = len(pairs) <= affordable
    pairs = pairs[:affordable]
    values = [maximum_flow(graph, a, b).flow_value for a, b in pairs]
    a, b = pairs[int(np.argmin(values))]
    side = _source_side(graph, maximum_flow(graph, a, b), a, n)
    candidates = [(out_s, single), (in_s, ~single), (net.out_bandwidth(side), side)]
    value, side = min(candidates, key=lambda c: c[0])
    return Cut(value, side, exact)
