"""Exact bandwidth lower bounds for collectives on any fabric: min-ratio cuts and multicommodity flow.

Conventions: ``S`` is the nccl-tests size, the group ``C`` has ``p`` member chips, and every other
device (switches, chips outside the group) may relay. Links carry ``bw_gbps`` (1e9 B/s) in each
direction. Bounds are seconds per byte of ``S``; ``B(X)`` is the bandwidth of the directed links
leaving a vertex set ``X``.

* **All-gather.** Each member holds ``S/p`` and needs all of it. For any ``X`` holding some members
  but not all, the blocks of the members in ``X`` must leave it:
  ``time >= |X n C| (S/p) / B(X)``. The largest such ratio (the min-ratio cut) is achievable by a
  packing of broadcast trees (ForestColl: Zhao et al. 2024, arXiv 2402.06787, building on Edmonds'
  arborescence packing), so it is the exact optimum. It is found by Dinkelbach's method with a
  max-flow per target member ``t``: with a super source sending ``lambda`` to every member, all of it
  reaches ``t`` exactly when no ``X`` without ``t`` has ``B(X) < lambda |X n C|``; otherwise the min
  cut's source side is such an ``X``, and ``lambda`` drops to its ratio. On a wrapped torus, the
  translations that map the group onto itself map targets onto targets, so one target per orbit
  is enough (one for the whole torus); elsewhere every member is a target.
* **Reduce-scatter.** The same on the reversed graph (the data flows the other way). trnsim's links
  carry the same bandwidth both ways, so reversal maps the graph onto itself and the two are equal;
  a graph without that symmetry is solved reversed.
* **All-reduce.** The larger of (a) injection (:func:`injection`: with equal chips ``2(p-1)/p S``
  over a chip's link bandwidth, Patarasuk and Yuan, JPDC 2009), and (b) the reduction cut: every member's result
  depends on every input, so ``S`` crosses any cut splitting the group, each way: ``S / min B(X)``.
  Both bind every schedule, trees included. The reduce-scatter optimum plus the all-gather optimum
  would be tighter on some irregular groups but binds only schedules that run the two in sequence
  (a pipelined reduce-then-broadcast through a thin link beats it by nearly 2x), so it is not used.
  It is exact when it is injection and the reduce-scatter and all-gather optima add up to it: running
  those two optimal schedules in turn then reaches it (every catalog system, whole).
* **All-to-all.** Every member sends ``S/p`` to every other: the bound is the maximum concurrent
  multicommodity flow, through its LP dual (Shahrokhi and Matula, JACM 1990; Leighton and Rao, JACM
  1999): for any edge lengths ``l >= 0``, ``time >= sum over ordered member pairs of (S/p)
  dist_l(s, t) / sum_e cap_e l_e``. Lengths are constant on edge classes: the translation orbits of
  a whole wrapped torus, or else (link class, bandwidth, and the end devices' colours after 1-WL
  colour refinement from kind, role and group membership). Translations fixing the group also fix
  such lengths, so Dijkstra runs from one member per orbit (one for the whole torus).
  Averaging the optimal lengths over the fabric's automorphisms keeps the value (the objective is
  concave and invariant), so the restricted dual is exact when the classes are orbits. Colour
  classes are unions of orbits: on the catalog's regular fabrics they are the orbits, but they can
  merge orbits on unusual graphs, and a scattered group breaks the symmetry into many classes.
  With few classes the dual is maximised by Kelley's cutting planes (HiGHS LPs): at lengths ``l`` a
  supergradient is the pairs' demand times the class counts of their shortest paths, split evenly
  over all shortest paths. With many classes and a small graph the whole source-aggregated LP is
  solved instead, its dual values re-evaluated here as lengths; with many classes on a large graph,
  Kelley runs on the last refinement round with few enough classes (a valid bound that may be
  loose). Kelley's queries are stabilised (in-out). Every evaluated point is a valid bound and the
  best one is reported. It is called exact when a real flow is no slower than the bound to within
  ``GAP``: the routings behind Kelley's planes mixed by the LP's dual weights (checked link by
  link), or the whole LP's optimum.

Before any of this, non-member twins (the switches of a tray or of a plane: same neighbours, same
link classes, proportional capacities) are merged, which changes no cut and no flow value (see
:func:`merge_twins`) and makes nl72x2's graph 188 devices instead of 512.

Any cut or any lengths give a valid bound, so a search stopped by a budget still returns a valid (if
possibly loose) bound, flagged ``exact=False``.
"""

from dataclasses import dataclass

import numpy as np

from trnsim.topology.graph import Topology

# --- numbers that are not proofs ---
# all-to-all: Kelley stops when (upper - lower) / lower <= GAP, and the primal certificate must come
# within GAP of the bound for "exact"
GAP = 1e-4
# all-to-all: at most this many cutting planes (dual evaluations)
MAX_CUTS = 200
# all-to-all: with more than KELLEY_FAST classes, Kelley's next point is this far from the best point
# towards the LP's solution (in-out stabilisation, Ben-Ameur and Neto 2007), or the LP's solution
# itself when the last plane did not lower the LP's bound
IN_OUT = 0.5
# all-to-all, how the dual is maximised: Kelley's method when there are at most KELLEY_FAST edge
# classes (it converges in a few planes there); else the whole multicommodity LP when it has at most
# LP_ENTRIES flow variables (well under a second with HiGHS here; 36 sources x 720 edges already take
# 6 s, at times 10 s); else Kelley again up to KELLEY_CLASSES classes (it slows down with the
# dimension); else the last colour refinement round with at most KELLEY_CLASSES classes (a valid bound
# that may be loose)
KELLEY_FAST = 16
LP_ENTRIES = 12_000
KELLEY_CLASSES = 64
# all-to-all: work budget, summed over dual evaluations, of sources x (devices + directed links) for
# Dijkstra plus the shortest-path-graph edges walked; past it the search stops with the best bound so
# far (about 5 s on a 2-core machine, so that a run near the routing limit stays within ~20 s)
DUAL_WORK = 50_000_000
# translations of a torus that fix a group: skipped when members^2 or chips x stabiliser exceed this
STABILISER_WORK = 50_000_000
# all-gather: work budget in max-flow calls x (devices + directed links); past it the search stops
# with the best cut so far (about 1.5 s on a 2-core machine, so that a run near the routing limit
# stays within ~20 s); the member cut has the same budget
FLOW_WORK = 15_000_000
# max-flow runs on int32 capacities: the super source's total supply is scaled to at most this many
# units (supplies rounded down, links rounded up, so every cut the flow reports is a real violating
# cut); a link rounds by at most one unit, so a cut can be missed only when it is within (its links)
# units of the best one; the reported ratio is always recomputed in floats from the real cut
SUPPLY_UNITS = 1 << 30
# all-to-all: every edge length is at least LENGTH_FLOOR (lengths are normalised so that the
# capacity-weighted sum is 1), so Dijkstra never sees a zero length; this lowers the bound by a
# relative 1e-7 at most
LENGTH_FLOOR = 1e-7
# all-to-all: two paths tie (both shortest) within this fraction of LENGTH_FLOOR; below half the
# smallest length, so the tie graph has no cycles
TIE_FRACTION = 0.25
# labels: candidates within this relative margin of the largest are ties, named in a fixed order
TIE = 1e-9
# labels: all-to-all names the link classes whose dual length is at least this share of the largest
LABEL_SHARE = 0.5
# all-to-all: sources per Dijkstra block so that sources x directed links stays about this
BLOCK_ENTRIES = 4_000_000


@dataclass(frozen=True)
class Optimum:
    """A bandwidth lower bound for one op on one group, and what attains it."""

    seconds_per_byte: float
    limited_by: str  # e.g. "injection (r0.n0.A)", "cut rack-halves (72|72 members)", "link classes xrack"
    exact: bool  # proven optimal, or a valid bound that may be loose


@dataclass
class Network:
    """A directed graph with capacities (GB/s) and a group of member nodes."""

    n: int
    src: np.ndarray
    dst: np.ndarray
    cap: np.ndarray
    members: np.ndarray  # node indices of the group, in group order
    node_key: np.ndarray  # initial node colour (device kind and role), for colour refinement
    edge_cls: np.ndarray  # link class name per directed edge

    @property
    def p(self) -> int:
        return len(self.members)

    def reversed(self) -> "Network":
        return Network(self.n, self.dst, self.src, self.cap, self.members, self.node_key, self.edge_cls)

    def is_symmetric(self) -> bool:
        """Every directed edge has a reverse edge of the same capacity."""
        key = self.src.astype(np.int64) * self.n + self.dst
        rev = self.dst.astype(np.int64) * self.n + self.src
        order = np.argsort(key)
        pos = np.searchsorted(key[order], rev)
        pos = np.minimum(pos, len(key) - 1)
        found = key[order][pos] == rev
        return bool(np.all(found) and np.allclose(self.cap[order][pos], self.cap, rtol=1e-12, atol=0))

    def out_bandwidth(self, side: np.ndarray) -> float:
        """B(X): total capacity of the directed edges leaving ``side`` (a node mask)."""
        return float(self.cap[side[self.src] & ~side[self.dst]].sum())


def merge_twins(net: Network) -> tuple[Network, np.ndarray]:
    """Merge non-member twins: devices of one kind and role whose links go to the same neighbours
    with the same classes and proportional capacities (the 8 switches of a tray, the switches of a
    plane). Returns the smaller network and the merged node of every original node.

    Nothing is lost. A cut can always put twins on the same side (each device's side only changes
    the cut by its own links, and twins prefer the same side), so min-ratio and member cuts are
    the same; a flow through the merged device splits back in proportion to the capacities, and
    lengths copied to both twins' links keep every distance, so the all-to-all optimum and every
    dual point are the same too. Repeats until no twins are left.
    """
    mapping = np.arange(net.n)
    while True:
        merged, step = _merge_once(net)
        if merged is net:
            return net, mapping
        net, mapping = merged, step[mapping]


def _merge_once(net: Network) -> tuple[Network, np.ndarray]:
    n = net.n
    member = np.zeros(n, dtype=bool)
    member[net.members] = True
    out_total = np.bincount(net.src, weights=net.cap, minlength=n)
    _, cls_id = np.unique(net.edge_cls.astype(str), return_inverse=True)
    cls_id = cls_id.ravel()
    # each device's view of its links: (device, direction, neighbour, class, capacity / its total)
    owner = np.concatenate([net.src, net.dst])
    direction = np.repeat([0, 1], len(net.src))
    other = np.concatenate([net.dst, net.src])
    kind = np.concatenate([cls_id, cls_id])
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.round(np.concatenate([net.cap, net.cap]) / out_total[owner], 12)
    share = np.nan_to_num(share)
    quantised = np.round(share * 1e12).astype(np.int64).astype(np.uint64)
    record = _splitmix(
        _splitmix(
            _splitmix(other.astype(np.uint64) * np.uint64(2) + direction.astype(np.uint64))
            + kind.astype(np.uint64)
        )
        + quantised
    )
    digest = np.zeros(n, dtype=np.uint64)
    np.add.at(digest, owner, record)
    degree = np.bincount(owner, minlength=n)
    candidates = np.flatnonzero(~member & (degree > 0))
    if len(candidates) < 2:
        return net, np.arange(n)
    keys = np.stack(
        [
            net.node_key[candidates].astype(np.uint64),
            digest[candidates],
            degree[candidates].astype(np.uint64),
        ],
        axis=1,
    )
    _, group_of, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    group_of = group_of.ravel()
    if counts.max() < 2:
        return net, np.arange(n)
    # verify exactly: each candidate's sorted link records equal its group representative's
    rep_of_group = np.full(len(counts), -1)
    rep_of_group[group_of[::-1]] = candidates[::-1]  # the first candidate of each group
    rep = rep_of_group[group_of]
    order = np.lexsort((share, kind, other, direction, owner))
    start = np.searchsorted(owner[order], np.arange(n + 1))
    fields = [direction[order], other[order], kind[order], share[order]]
    twin = np.zeros(len(candidates), dtype=bool)
    for d in np.unique(degree[candidates]):
        pick = np.flatnonzero(degree[candidates] == d)
        offsets = np.arange(d)
        mine = start[candidates[pick]][:, None] + offsets
        theirs = start[rep[pick]][:, None] + offsets
        same = np.ones(len(pick), dtype=bool)
        for f in fields:
            same &= np.all(f[mine] == f[theirs], axis=1)
        twin[pick] = same
    step = np.arange(n)
    merge = twin & (rep != candidates)
    if not merge.any():
        return net, step
    step[candidates[merge]] = rep[merge]
    keep = np.unique(step)
    renumber = np.full(n, -1)
    renumber[keep] = np.arange(len(keep))
    step = renumber[step]
    src, dst = step[net.src], step[net.dst]
    pair = src.astype(np.int64) * len(keep) + dst
    unique_pair, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
    cap = np.bincount(inverse.ravel(), weights=net.cap, minlength=len(unique_pair))
    merged = Network(
        len(keep),
        src[first],
        dst[first],
        cap,
        step[net.members],
        net.node_key[keep],
        net.edge_cls[first],
    )
    return merged, step


def network(topology: Topology, group: list[str]) -> Network:
    """The topology as a :class:`Network` with ``group`` as members."""
    from trnsim.topology.arrays import graph_arrays

    arrays = graph_arrays(topology)
    keys = {}
    node_key = np.asarray(
        [
            keys.setdefault((topology.nodes[v]["kind"], topology.nodes[v].get("role")), len(keys))
            for v in arrays.nodes
        ],
        dtype=np.int64,
    )
    cls = np.asarray(arrays.edge_cls, dtype=object)[arrays.edge]
    members = np.asarray([arrays.index[c] for c in group], dtype=np.int64)
    return Network(arrays.n_nodes, arrays.src, arrays.dst, arrays.bw_gbps, members, node_key, cls)


# ---------------------------------------------------------------------------------------------
# max-flow machinery (scipy.sparse.csgraph, imported lazily: start-up time matters for the CLI)


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


def gather_cut(net: Network, targets: np.ndarray | None = None, hints: list[np.ndarray] = ()) -> Cut:
    """The min-ratio cut ``min B(X) / |X n C|`` over ``X`` holding some members but not all.

    Parameters
    ----------
    targets : array of node indices, optional
        The target members to search (every member by default); fewer are sound when symmetries
        of the graph and the group map every member to one of them.
    hints : list of node masks
        Cuts to start from (natural cuts); any real cut is a valid start.
    """
    p, n = net.p, net.n
    if p < 2:
        return Cut(float("inf"), np.zeros(n, dtype=bool), True)
    from scipy.sparse.csgraph import maximum_flow

    member = np.zeros(n, dtype=bool)
    member[net.members] = True
    in_bw = np.bincount(net.dst, weights=net.cap, minlength=n)
    # start: the best of "everything but t" (t's reception) and the hints, all real cuts
    best_t = net.members[np.argmin(in_bw[net.members])]
    side = np.ones(n, dtype=bool)
    side[best_t] = False
    best = Cut(net.out_bandwidth(side) / (p - 1), side, False)
    for hint in hints:
        for candidate in (hint, ~hint):
            k = int(np.count_nonzero(candidate & member))
            if 0 < k < p:
                ratio = net.out_bandwidth(candidate) / k
                if ratio < best.ratio:
                    best = Cut(ratio, candidate.copy(), False)
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
                scale = SUPPLY_UNITS / (lam * p)
                supply = int(np.floor(lam * scale))
                graph = flows.graph(scale, supply, SUPPLY_UNITS + 1)
            work += n + len(net.src)
            result = maximum_flow(graph, n, int(t))
            if result.flow_value >= supply * p:
                break  # no X without t has B(X) < lambda |X n C|
            side = _source_side(graph, result, n, n)
            k = int(np.count_nonzero(side & member))
            ratio = net.out_bandwidth(side) / k if k else float("inf")
            if not ratio < best.ratio:  # cannot happen with the rounding directions; never loop
                break
            best = Cut(ratio, side, False)
        if not exact:
            break
    return Cut(best.ratio, best.side, exact)


def member_cut(net: Network) -> Cut:
    """The smallest ``B(X)`` over ``X`` splitting the group (``ratio`` holds ``B(X)`` itself).

    Fixes the first member ``s``: the best ``X`` either holds ``s`` and misses some ``t`` (a max-flow
    ``s -> t``) or misses ``s`` and holds some ``t`` (``t -> s``; the same value on symmetric graphs).
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


# ---------------------------------------------------------------------------------------------
# all-to-all: the max concurrent flow dual over edge classes


def _splitmix(x: np.ndarray) -> np.ndarray:
    """A 64-bit mixing hash (splitmix64), elementwise on uint64."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def edge_classes(net: Network, max_classes: int | None = None) -> np.ndarray:
    """Directed edge classes from 1-WL colour refinement of the nodes.

    Nodes start coloured by (kind, role, member); each round a node's colour becomes its old colour
    with the multisets of (edge colour, neighbour colour) over its out- and in-edges, hashed
    (splitmix64 sums: a collision would only merge classes, which keeps the bound valid). Edge
    colour is (link class, bandwidth); an edge's class is its colour with its two ends' colours.
    Automorphisms that fix the group preserve colours, so every class is a union of edge orbits.
    With ``max_classes``, refinement stops at the last round that gives at most that many classes
    (the first round's classes are kept even if more).
    """
    member = np.zeros(net.n, dtype=np.int64)
    member[net.members] = 1
    _, colour = np.unique(net.node_key * 2 + member, return_inverse=True)
    colour = colour.ravel()
    _, cls_id = np.unique(net.edge_cls.astype(str), return_inverse=True)
    _, ecol = np.unique(np.stack([cls_id.ravel(), np.round(net.cap, 9)], axis=1), axis=0, return_inverse=True)
    ecol = ecol.ravel().astype(np.uint64)

    def classes_of(colour):
        rows = np.stack([ecol.astype(np.int64), colour[net.src], colour[net.dst]], axis=1)
        return np.unique(rows, axis=0, return_inverse=True)[1].ravel()

    classes = classes_of(colour)
    count = colour.max() + 1
    while True:
        nc = np.uint64(count)
        out_hash = _splitmix((ecol * nc + colour[net.dst].astype(np.uint64)) << np.uint64(1))
        in_hash = _splitmix(((ecol * nc + colour[net.src].astype(np.uint64)) << np.uint64(1)) | np.uint64(1))
        h_out = np.zeros(net.n, dtype=np.uint64)
        h_in = np.zeros(net.n, dtype=np.uint64)
        np.add.at(h_out, net.src, out_hash)
        np.add.at(h_in, net.dst, in_hash)
        signature = np.stack([colour.astype(np.uint64), h_out, h_in], axis=1)
        new = np.unique(signature, axis=0, return_inverse=True)[1].ravel()
        if new.max() + 1 == count:
            return classes
        finer = classes_of(new)
        if max_classes is not None and finer.max() + 1 > max_classes:
            return classes
        colour, count, classes = new, new.max() + 1, finer


@dataclass(frozen=True)
class Dual:
    """The best all-to-all dual point found."""

    seconds_per_byte: float
    lengths: np.ndarray  # per class, at the best point (capacity-weighted sum 1)
    classes: np.ndarray  # class per directed edge
    upper: float  # the cutting-plane LP's optimum (an upper bound on the restricted dual)
    primal_seconds_per_byte: float  # the certificate flow's time (inf when none was built)
    evaluations: int

    @property
    def exact(self) -> bool:
        return self.primal_seconds_per_byte <= self.seconds_per_byte * (1 + GAP)


def _structure(net: Network):
    """The CSR layout of the directed edges (edge order, column indices, row pointers)."""
    order = np.lexsort((net.dst, net.src))
    return (
        order,
        net.dst[order].astype(np.int32),
        np.searchsorted(net.src[order], np.arange(net.n + 1)).astype(np.int32),
    )


def _evaluate(net: Network, structure, classes, w, sources, member_mask, keep_loads):
    """g(l), its supergradient per class and (optionally) the per-edge loads, at lengths ``w[classes]``.

    Each ordered pair of members carries ``1/p``; ECMP on the shortest-path DAG of every source.
    """
    import scipy.sparse as sp
    from scipy.sparse.csgraph import dijkstra

    from trnsim.routing.kernels import COMPILED_FROM, demand_loads, kernels

    n, m, p = net.n, len(net.src), net.p
    lengths = w[classes]
    order, indices, indptr = structure
    if len(sources) * (n + m) >= COMPILED_FROM and np.all(lengths == lengths[0]):
        # equal lengths: shortest paths are fewest-link paths, so a BFS serves (a loaded topology is
        # connected), and every pair's flow crosses d links: the distance sum is the loads' sum
        demand = np.zeros((1, n))
        demand[0, member_mask] = 1.0 / p
        loads = demand_loads(net.src, net.dst, n, sources, None, demand, (indptr, order))
        grad = np.bincount(classes, weights=loads, minlength=len(w))
        total = float(lengths[0] * loads.sum())
        return total, grad, (loads if keep_loads else None), len(sources) * (n + m)
    if len(sources) * (n + m) >= COMPILED_FROM:
        # one source at a time at compiled speed (Dijkstra, then the same ECMP split on the DAG)
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
        sigma, touched = _path_sums(starts, np.ones(rows), fu, fv, None, size)
        ratio = sigma[fu] / sigma[fv]
        flat_demand = demand.ravel()
        needing = np.flatnonzero(flat_demand)
        # bytes entering each node bound for it or beyond (Brandes), summed backwards along the DAG
        through, back = _path_sums(needing, flat_demand[needing], fv, fu, ratio, size)
        work += rows * (n + m) + touched + back
        share = ratio * through[fv]
        grad += np.bincount(classes[e], weights=share, minlength=len(w))
        if keep_loads:
            loads += np.bincount(e, weights=share, minlength=m)
    return total, grad, loads, work


def _path_sums(starts, values, tails, heads, weights, size):
    """Sums over the paths of a DAG: ``x[v] = sum over paths y -> v of values[y] * prod(weights)``.

    The DAG's edges are ``tails[i] -> heads[i]`` (flat node ids below ``size``). One wave per path
    length, each touching only the edges out of nodes that the last wave reached, so a DAG whose
    paths to a node all have the same number of edges is walked once. Returns the sums and the
    number of edges touched.
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


def alltoall_lp(net: Network) -> Dual:
    """The all-to-all optimum from the whole source-aggregated multicommodity flow LP (HiGHS).

    Variables: the flow of each source on each directed edge, and the time. The solver's dual
    values on the capacity rows are edge lengths; the bound reported is those lengths evaluated
    here (Dijkstra), so it is valid whatever the solver's tolerances. The LP's own optimum is the
    primal side of the certificate.
    """
    import scipy.sparse as sp
    from scipy.optimize import linprog

    n, m, p = net.n, len(net.src), net.p
    sources = net.members
    rows = len(sources)
    # conservation: for source s and node v, inflow - outflow = demand (1/p at each other member)
    var = np.arange(rows * m).reshape(rows, m)
    s_idx = np.repeat(np.arange(rows), m)
    e_idx = np.tile(np.arange(m), rows)
    a_eq = sp.csr_array(
        (
            np.r_[np.ones(rows * m), -np.ones(rows * m)],
            (
                np.r_[s_idx * n + net.dst[e_idx], s_idx * n + net.src[e_idx]],
                np.r_[var.ravel(), var.ravel()],
            ),
        ),
        shape=(rows * n, rows * m + 1),
    )
    demand = np.zeros((rows, n))
    demand[:, net.members] = 1.0 / p
    demand[np.arange(rows), sources] = -(p - 1) / p
    # capacity: the flows on an edge <= its capacity (GB/s) x the time (ns per byte)
    a_ub = sp.csr_array(
        (
            np.r_[np.ones(rows * m), -net.cap],
            (np.r_[e_idx, np.arange(m)], np.r_[var.ravel(), np.full(m, rows * m)]),
        ),
        shape=(m, rows * m + 1),
    )
    cost = np.zeros(rows * m + 1)
    cost[-1] = 1.0
    result = linprog(cost, A_ub=a_ub, b_ub=np.zeros(m), A_eq=a_eq, b_eq=demand.ravel(), method="highs")
    discrete = np.arange(m)
    if result.status != 0:
        return Dual(0.0, np.zeros(m), discrete, float("inf"), float("inf"), 0)
    lengths = np.maximum(-np.asarray(result.ineqlin.marginals), 0.0)
    total = float(net.cap @ lengths)
    if total <= 0:
        return Dual(0.0, lengths, discrete, result.fun / 1e9, result.fun / 1e9, 1)
    # normalised as Kelley's points: capacity shares weight the lengths to 1, plus the floor
    point = lengths * (float(net.cap.sum()) / total) + LENGTH_FLOOR
    member_mask = np.zeros(n, dtype=bool)
    member_mask[net.members] = True
    structure = _structure(net)
    g, _, _, _ = _evaluate(net, structure, discrete, point, sources, member_mask, False)
    seconds = g / float(net.cap @ point) / 1e9
    return Dual(seconds, point, discrete, result.fun / 1e9, result.fun / 1e9, 1)


def alltoall_dual(net: Network, classes: np.ndarray, symmetry: "Translations | None" = None) -> Dual:
    """Maximise the all-to-all dual over lengths constant on ``classes`` (Kelley's cutting planes).

    Parameters
    ----------
    symmetry : Translations, optional
        Translations that map the graph and the group onto themselves and each class onto itself:
        distances from a member equal those from its orbit's representative, shifted, so Dijkstra
        runs from the representatives only, and a representative's routing, shifted, serves its
        orbit (the loads of the certificate are summed over each edge's orbit).
    """
    from scipy.optimize import linprog

    p = net.p
    if p < 2:
        return Dual(0.0, np.zeros(0), classes, 0.0, 0.0, 0)
    k = int(classes.max()) + 1
    cap_k = np.bincount(classes, weights=net.cap, minlength=k)
    cap_total = float(cap_k.sum())
    cap_n = cap_k / cap_total
    member_mask = np.zeros(net.n, dtype=bool)
    member_mask[net.members] = True
    structure = _structure(net)
    sources = net.members if symmetry is None else symmetry.reps
    multiplicity = 1 if symmetry is None else symmetry.multiplicity

    cuts, stored = [], []
    best_value, best_w = -1.0, None
    upper = float("inf")
    w = np.ones(k)  # uniform lengths; the capacity-weighted sum is 1 since cap_n sums to 1
    marginals = None
    evaluations, work = 0, 0
    while True:
        point = w + LENGTH_FLOOR
        g, grad, loads, spent = _evaluate(net, structure, classes, point, sources, member_mask, True)
        evaluations += 1
        work += spent
        if not np.isfinite(g):
            return Dual(float("inf"), point, classes, float("inf"), float("inf"), evaluations)
        g, grad = g * multiplicity, grad * multiplicity
        if symmetry is not None:  # every shift of the representatives' routings: orbit sums
            loads = np.bincount(symmetry.edge_orbit, weights=loads)[symmetry.edge_orbit]
        value = g / float(cap_n @ point)
        if value > best_value:
            best_value, best_w = value, point
        cuts.append(grad)
        stored.append(loads)
        # the LP: max z s.t. z <= <grad_j, w> for every plane j, <cap_n, w> = 1, w >= 0
        a_ub = np.hstack([-np.asarray(cuts), np.ones((len(cuts), 1))])
        result = linprog(
            np.r_[np.zeros(k), -1.0],
            A_ub=a_ub,
            b_ub=np.zeros(len(cuts)),
            A_eq=np.r_[cap_n, 0.0][None, :],
            b_eq=[1.0],
            bounds=[(0, None)] * k + [(0, None)],
            method="highs",
        )
        if result.status != 0:
            break
        stalled = float(-result.fun) >= upper * (1 - 1e-12)
        upper = float(-result.fun)  # more planes only lower it
        marginals = -np.asarray(result.ineqlin.marginals)
        w = np.maximum(result.x[:k], 0.0)
        if upper - best_value <= GAP * best_value or evaluations >= MAX_CUTS or work >= DUAL_WORK:
            break
        if k > KELLEY_FAST and not stalled:  # in-out: query between the LP's point and the best so far
            w = IN_OUT * w + (1 - IN_OUT) * (best_w - LENGTH_FLOOR)
    seconds = best_value / (cap_total * 1e9)
    primal = float("inf")
    if marginals is not None and marginals.sum() > 0:
        # the LP's dual weights mix the routings behind its planes into one flow; its time is its
        # most loaded link's
        weights = marginals / marginals.sum()
        mixed = weights @ np.asarray(stored[: len(weights)])
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(net.cap > 0, mixed / net.cap, np.where(mixed > 0, np.inf, 0.0))
        primal = float(ratio.max()) / 1e9
    return Dual(seconds, best_w, classes, upper / (cap_total * 1e9), primal, evaluations)


# ---------------------------------------------------------------------------------------------
# the public entry point


def _cut_label(topology: Topology, group: list[str], net: Network, side: np.ndarray) -> str:
    """Name a cut by its member split: a natural cut of the topology if one matches."""
    from trnsim.topology.arrays import graph_arrays

    nodes = graph_arrays(topology).nodes
    inside = {nodes[i] for i in net.members[side[net.members]]}
    a, p = len(inside), net.p
    members = set(group)
    for name, cut_side in topology.cuts.items():
        natural = members & cut_side
        if 0 < len(natural) < p and (natural == inside or members - natural == inside):
            return f"cut {name} ({a}|{p - a} members)"
    return f"cut: {a} of {p} members vs the rest"


def _natural_masks(topology: Topology, net: Network) -> list[np.ndarray]:
    from trnsim.topology.arrays import graph_arrays

    index = graph_arrays(topology).index
    masks = []
    for side in topology.cuts.values():
        mask = np.zeros(net.n, dtype=bool)
        mask[[index[v] for v in side]] = True
        masks.append(mask)
    return masks


def _gather(topology: Topology, group: list[str], reverse: bool) -> tuple[float, str, bool]:
    """All-gather's optimum (``reverse``: on the reversed graph, reduce-scatter's): (seconds per
    byte, label, exact), kept in the topology's cache per group and direction."""
    cache = topology.cache.optimum_gather
    key = (tuple(group), reverse)
    if key in cache:
        return cache[key]
    net = network(topology, group)
    net = net.reversed() if reverse else net
    symmetry = translations(topology, group)
    # translations name nodes by rank: no twin merging under them (a torus has no switches anyway)
    merged, mapping = (net, np.arange(net.n)) if symmetry is not None else merge_twins(net)
    hints = []
    for mask in _natural_masks(topology, net):
        hint = np.zeros(merged.n, dtype=bool)
        hint[mapping[mask]] = True
        hints.append(hint)
    if symmetry is not None:
        targets = symmetry.reps
    else:
        reps = _member_orbit_reps(topology, net)
        targets = None if reps is None else np.unique(mapping[reps])
    cut = gather_cut(merged, targets, hints=hints)
    side = cut.side[mapping]  # the same cut in the original network
    p = net.p
    member = np.zeros(net.n, dtype=bool)
    member[net.members] = True
    ratio = net.out_bandwidth(side) / np.count_nonzero(side & member)
    seconds = 1.0 / (p * ratio * 1e9)
    in_bw = np.bincount(net.dst, weights=net.cap, minlength=net.n)[net.members]
    slowest = int(np.argmin(in_bw))
    if ratio >= in_bw[slowest] / (p - 1) * (1 - TIE):
        label = f"injection ({group[slowest]})"
    else:
        label = _cut_label(topology, group, net, side)
    cache[key] = seconds, label, cut.exact
    return cache[key]


def _member_orbit_reps(topology: Topology, net: Network) -> np.ndarray | None:
    """One member per orbit of the automorphisms that node names suggest and the network's
    capacities and membership confirm (:func:`trnsim.routing.symmetry.name_automorphisms`), or None
    when none is found. The min-ratio cut needs only one target per orbit."""
    from trnsim.routing.symmetry import name_automorphisms, orbits
    from trnsim.topology.arrays import graph_arrays

    member = np.zeros(net.n, dtype=np.int64)
    member[net.members] = 1
    perms = name_automorphisms(graph_arrays(topology).nodes, net.src, net.dst, np.round(net.cap, 9), member)
    if not perms:
        return None
    return np.unique(orbits(perms, net.n)[net.members])


@dataclass(frozen=True)
class Translations:
    """The translations of a wrapped torus that map the group onto itself.

    They act freely (no translation but the identity fixes a chip), so every member's orbit has
    ``multiplicity`` members and every edge's orbit as many edges.
    """

    reps: np.ndarray  # one member per orbit (node indices)
    multiplicity: int  # translations in the stabiliser
    edge_orbit: np.ndarray  # orbit id per directed edge


def translations(topology: Topology, group: list[str]) -> Translations | None:
    """The stabiliser of the group among a wrapped torus's translations, or None.

    A translation must take the first member to a member, so the members' offsets from it are the
    candidates; each is kept if it maps every member to a member. The whole torus is every
    translation (edge orbits: axis and direction). Skipped (None) on fabrics without translations,
    when only the identity fixes the group, or past ``STABILISER_WORK``.
    """
    from trnsim.routing.symmetry import torus_symmetry
    from trnsim.topology.arrays import graph_arrays

    symmetry = torus_symmetry(topology)
    if symmetry is None:
        return None
    arrays = graph_arrays(topology)
    axis_dir = symmetry.edge_orbits(arrays.src, arrays.dst)
    members = np.asarray([topology.rank_of[c] for c in group], dtype=np.int64)  # torus: node = rank
    n, p = symmetry.n, len(members)
    if p == n:
        return Translations(members[:1], n, np.unique(axis_dir, return_inverse=True)[1].ravel())
    if p * p > STABILISER_WORK:
        return None
    sizes = np.asarray(symmetry.sizes)
    strides = np.asarray(symmetry.strides)
    coords = symmetry.coords.astype(np.int64)
    inside = np.zeros(n, dtype=bool)
    inside[members] = True
    candidates = (coords[members] - coords[members[0]]) % sizes
    keep = []
    step = max(1, BLOCK_ENTRIES // max(p * len(sizes), 1))
    for lo in range(0, p, step):
        shifted = ((coords[members][None, :, :] + candidates[lo : lo + step, None, :]) % sizes) @ strides
        keep.append(inside[shifted].all(axis=1))
    stabiliser = candidates[np.concatenate(keep)]
    s = len(stabiliser)
    if s == 1 or n * s > STABILISER_WORK:
        return None
    # a node's orbit is named by its smallest rank; a member's orbit holds members only
    orbit = np.empty(n, dtype=np.int64)
    step = max(1, BLOCK_ENTRIES // max(s * len(sizes), 1))
    for lo in range(0, n, step):
        orbit[lo : lo + step] = (
            ((coords[lo : lo + step, None, :] + stabiliser[None, :, :]) % sizes) @ strides
        ).min(axis=1)
    reps = np.unique(orbit[members])
    edge_orbit = np.unique(orbit[arrays.src] * (2 * len(sizes)) + axis_dir, return_inverse=True)[1].ravel()
    return Translations(reps, s, edge_orbit)


def injection(topology: Topology, group: list[str], op_name: str) -> tuple[float, str]:
    """What the members' own links force, in seconds per byte of ``S``, and its name.

    All-gather, reduce-scatter, all-to-all: each member receives (or sends) ``(p-1)/p S``, so the
    slowest member's links bind. All-reduce: each member sends and receives at least ``S`` (its input
    reaches every result, its result depends on every input) and the members together receive at
    least ``2(p-1) S`` (Patarasuk and Yuan, JPDC 2009); a member cannot be held to ``2(p-1)/p S``
    alone (a leaf of a tree receives ``S``), so with unequal chips the total binds through the sum of
    their bandwidths. With equal chips both give ``2(p-1)/p S`` over one chip's bandwidth.
    """
    from trnsim.topology.metrics import chip_bandwidth_gbps

    chip_bw = chip_bandwidth_gbps(topology)
    p = len(group)
    slowest = min(group, key=lambda c: chip_bw[c])
    if op_name != "allreduce":
        return (p - 1) / p / (chip_bw[slowest] * 1e9), f"injection ({slowest})"
    one = 1 / (chip_bw[slowest] * 1e9)
    total = 2 * (p - 1) / (sum(chip_bw[c] for c in group) * 1e9)
    if one > total * (1 + TIE):
        return one, f"injection ({slowest})"
    equal = max(chip_bw[c] for c in group) <= chip_bw[slowest] * (1 + TIE)
    return total, f"injection ({slowest})" if equal else "injection (all members' links)"


def optimum(topology: Topology, group: list[str], op_name: str) -> Optimum:
    """The exact (or, where flagged, a valid) bandwidth lower bound of ``op_name`` on ``group``.

    Kept in the topology's cache per group and op.
    """
    cache = topology.cache.optimum
    key = (tuple(group), op_name)
    if key not in cache:
        found = _optimum(topology, list(group), op_name)
        cache[key] = Optimum(float(found.seconds_per_byte), found.limited_by, bool(found.exact))
    return cache[key]


def _optimum(topology: Topology, group: list[str], op_name: str) -> Optimum:
    p = len(group)
    if p < 2:
        return Optimum(0.0, "a single member: nothing to move", True)
    net = network(topology, group)
    symmetric = net.is_symmetric()
    if op_name in ("allgather", "reducescatter"):
        # reduce-scatter's data flows the other way; on symmetric links reversal changes nothing
        reverse = op_name == "reducescatter" and not symmetric
        seconds, label, exact = _gather(topology, group, reverse)
        return Optimum(seconds, label, exact)
    if op_name == "allreduce":
        candidates = [injection(topology, group, op_name)]
        ag, _, ag_exact = _gather(topology, group, False)
        rs, _, rs_exact = (ag, None, ag_exact) if symmetric else _gather(topology, group, True)
        # with symmetric links every cut splitting the group has B(X) >= (p/2) lambda*, so the
        # reduction cut is at most twice the all-gather optimum: no max-flows when that cannot bind
        if not symmetric or 2 * ag > candidates[0][0] * (1 + TIE):
            cut = member_cut(net)
            candidates.append(
                (1.0 / (cut.ratio * 1e9), f"reduction {_cut_label(topology, group, net, cut.side)}")
            )
        top = max(value for value, _ in candidates)
        label = next(name for value, name in candidates if value >= top * (1 - TIE))
        # exact when reduce-scatter + all-gather, each at its own (achievable) optimum, reach it
        exact = label.startswith("injection") and ag_exact and rs_exact and ag + rs <= top * (1 + TIE)
        return Optimum(top, label, exact)
    if op_name == "alltoall":
        symmetry = translations(topology, group)
        if symmetry is not None and p == topology.n_ranks:
            # the whole torus: the translation orbits are the classes, exact by symmetrisation
            dual = alltoall_dual(net, symmetry.edge_orbit, symmetry)
            return Optimum(dual.seconds_per_byte, _class_label(net, dual), dual.exact)
        if symmetry is None:
            net, _ = merge_twins(net)
        classes = edge_classes(net)
        k = classes.max() + 1
        if k <= KELLEY_FAST:
            dual = alltoall_dual(net, classes, symmetry)
        elif net.p * len(net.src) <= LP_ENTRIES:
            dual = alltoall_lp(net)
            if not dual.seconds_per_byte > 0:  # the solver failed: cutting planes on fewer classes
                dual = alltoall_dual(net, edge_classes(net, KELLEY_CLASSES), symmetry)
        elif k <= KELLEY_CLASSES:
            dual = alltoall_dual(net, classes, symmetry)
        else:  # many classes (an irregular group) and a large LP: coarser classes, valid but loose
            dual = alltoall_dual(net, edge_classes(net, KELLEY_CLASSES), symmetry)
        return Optimum(dual.seconds_per_byte, _class_label(net, dual), dual.exact)
    raise ValueError(f"unknown collective {op_name!r}")


def _class_label(net: Network, dual: Dual) -> str:
    """Name the link classes carrying the largest dual lengths (the saturated ones)."""
    lengths = dual.lengths
    if not len(lengths):
        return "link classes"
    top = lengths.max()
    names: list[str] = []
    for k in np.argsort(-lengths, kind="stable"):
        if lengths[k] < LABEL_SHARE * top:
            break
        name = str(net.edge_cls[np.flatnonzero(dual.classes == k)[0]])
        if name not in names:
            names.append(name)
    return "link classes " + ", ".join(names)
