"""All-to-all's optimum: the maximum concurrent multicommodity flow, through its LP dual.

Every member sends ``S/p`` to every other. For any edge lengths the dual gives a valid bound
(:mod:`trnsim.model.optimum.lengths`); lengths are kept constant on edge classes: the translation
orbits of a whole wrapped torus, or else the colour classes of :mod:`trnsim.model.optimum.refine`.
Translations fixing the group also fix such lengths, so Dijkstra runs from one member per orbit.
Averaging the optimal lengths over the fabric's automorphisms keeps the value (the objective is
concave and invariant), so the restricted dual is exact when the classes are orbits.

With few classes the dual is maximised by Kelley's cutting planes (HiGHS LPs): at lengths ``l`` a
supergradient is the pairs' demand times the class counts of their shortest paths. With many classes
and a small graph the whole source-aggregated LP is solved instead, its dual values re-evaluated here
as lengths; with many classes on a large graph, Kelley runs on the last refinement round with few
enough classes (a valid bound that may be loose). Kelley's queries are stabilised (in-out). Every
evaluated point is a valid bound and the best one is reported. It is called exact when a real flow is
no slower than the bound to within ``GAP``: the routings behind Kelley's planes mixed by the LP's
dual weights (checked link by link), or the whole LP's optimum.
"""

from dataclasses import dataclass

import numpy as np

from trnsim.model.optimum.graph import Network
from trnsim.model.optimum.lengths import LENGTH_FLOOR, csr_layout, dual_value
from trnsim.model.optimum.refine import edge_classes
from trnsim.model.optimum.symmetry import Translations, translations
from trnsim.model.optimum.twins import merge_twins
from trnsim.topology.graph import Topology

# --- numbers that are not proofs ---
# Kelley stops when (upper - lower) / lower <= GAP, and the primal certificate must come within GAP
# of the bound for "exact"
GAP = 1e-4
# at most this many cutting planes (dual evaluations)
MAX_CUTS = 200
# with more than KELLEY_FAST classes, Kelley's next point is this far from the best point towards the
# LP's solution (in-out stabilisation, Ben-Ameur and Neto 2007), or the LP's solution itself when the
# last plane did not lower the LP's bound
IN_OUT = 0.5
# how the dual is maximised: Kelley's method when there are at most KELLEY_FAST edge classes (it
# converges in a few planes there); else the whole multicommodity LP when it has at most LP_ENTRIES
# flow variables (well under a second with HiGHS here; 36 sources x 720 edges already take 6 s, at
# times 10 s); else Kelley again up to KELLEY_CLASSES classes (it slows down with the dimension); else
# the last colour refinement round with at most KELLEY_CLASSES classes (a valid bound that may be
# loose)
KELLEY_FAST = 16
LP_ENTRIES = 12_000
KELLEY_CLASSES = 64
# work budget, summed over dual evaluations, of sources x (devices + directed links) for Dijkstra
# plus the shortest-path-graph edges walked; past it the search stops with the best bound so far
# (about 5 s on a 2-core machine, so that a run near the routing limit stays within ~20 s)
DUAL_WORK = 50_000_000
# labels name the link classes whose dual length is at least this share of the largest
LABEL_SHARE = 0.5


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


def solve_alltoall(topology: Topology, group: list[str], net: Network) -> tuple[float, str, bool]:
    """All-to-all's bound on ``group``: (seconds per byte, the saturated link classes, exact).

    Picks how the dual is maximised from the number of edge classes and the LP's size (see the
    constants above).
    """
    symmetry = translations(topology, group)
    if symmetry is not None and net.p == topology.n_ranks:
        # the whole torus: the translation orbits are the classes, exact by symmetrisation
        dual = alltoall_dual(net, symmetry.edge_orbit, symmetry)
        return dual.seconds_per_byte, class_label(net, dual), dual.exact
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
    return dual.seconds_per_byte, class_label(net, dual), dual.exact


def class_label(net: Network, dual: Dual) -> str:
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


def alltoall_lp(net: Network) -> Dual:
    """The all-to-all optimum from the whole source-aggregated multicommodity flow LP (HiGHS).

    Variables: the flow of each source on each directed edge, and the time. The solver's dual
    values on the capacity rows are edge lengths; the bound reported is those lengths evaluated
    here (Dijkstra), so it is valid whatever the solver's tolerances. The LP's own optimum is the
    primal side of the certificate.
    """
    n, m, p = net.n, len(net.src), net.p
    sources = net.members
    rows = len(sources)
    # conservation: for source s and node v, inflow - outflow = demand (1/p at each other member)
    demand = np.zeros((rows, n))
    demand[:, net.members] = 1.0 / p
    demand[np.arange(rows), sources] = -(p - 1) / p
    result = flow_lp(net, demand)
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
    structure = csr_layout(net)
    g, _, _, _ = dual_value(net, structure, discrete, point, sources, member_mask, False)
    seconds = g / float(net.cap @ point) / 1e9
    return Dual(seconds, point, discrete, result.fun / 1e9, result.fun / 1e9, 1)


def flow_lp(net: Network, demand: np.ndarray):
    """Solve the source-aggregated multicommodity flow LP (HiGHS): one commodity per row of
    ``demand`` (``rows x n``: inflow - outflow of that commodity at every node, positive at its
    sinks), the least time ``T`` (ns per byte) such that on every directed edge the commodities'
    flows add up to at most its capacity (GB/s) times ``T``. Returns scipy's ``linprog`` result
    (``x``: the flows, row by row, then ``T``; ``ineqlin.marginals``: minus the edge lengths)."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    n, m = net.n, len(net.src)
    rows = len(demand)
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
    return linprog(cost, A_ub=a_ub, b_ub=np.zeros(m), A_eq=a_eq, b_eq=demand.ravel(), method="highs")


def alltoall_dual(net: Network, classes: np.ndarray, symmetry: Translations | None = None) -> Dual:
    """Maximise the all-to-all dual over lengths constant on ``classes`` (Kelley's cutting planes).

    Parameters
    ----------
    symmetry : Translations, optional
        Translations that map the graph and the group onto themselves and each class onto itself:
        distances from a member equal those from its orbit's representative, shifted, so Dijkstra
        runs from the representatives only, and a representative's routing, shifted, serves its
        orbit (the loads of the certificate are summed over each edge's orbit).

    Examples
    --------
    Four chips joined pairwise by 100 GB/s: each member sends 1/4 of the size straight to each other
    one, so every link carries 1/4 of the size each way, ``2.5e-12`` s per byte; the flow that
    certifies it is that direct routing.

    >>> from trnsim.model.optimum.graph import network
    >>> from trnsim.model.optimum.refine import edge_classes
    >>> from trnsim.topology.synthetic import complete_topology
    >>> square = complete_topology(4, bw_gbps=100.0)
    >>> net = network(square, square.chips)
    >>> dual = alltoall_dual(net, edge_classes(net))
    >>> round(dual.seconds_per_byte / 2.5e-12, 9), dual.exact
    (1.0, True)
    """
    p = net.p
    if p < 2:
        return Dual(0.0, np.zeros(0), classes, 0.0, 0.0, 0)
    k = int(classes.max()) + 1
    cap_k = np.bincount(classes, weights=net.cap, minlength=k)
    cap_total = float(cap_k.sum())
    cap_n = cap_k / cap_total
    member_mask = np.zeros(net.n, dtype=bool)
    member_mask[net.members] = True
    structure = csr_layout(net)
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
        g, grad, loads, spent = dual_value(net, structure, classes, point, sources, member_mask, True)
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
        result = _planes_lp(cuts, cap_n)
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
    primal = _certificate(net, marginals, stored)
    return Dual(seconds, best_w, classes, upper / (cap_total * 1e9), primal, evaluations)


def _planes_lp(cuts: list[np.ndarray], cap_n: np.ndarray):
    """Kelley's LP: max z s.t. z <= <grad_j, w> for every plane j, <cap_n, w> = 1, w >= 0."""
    from scipy.optimize import linprog

    k = len(cap_n)
    a_ub = np.hstack([-np.asarray(cuts), np.ones((len(cuts), 1))])
    return linprog(
        np.r_[np.zeros(k), -1.0],
        A_ub=a_ub,
        b_ub=np.zeros(len(cuts)),
        A_eq=np.r_[cap_n, 0.0][None, :],
        b_eq=[1.0],
        bounds=[(0, None)] * k + [(0, None)],
        method="highs",
    )


def _certificate(net: Network, marginals: np.ndarray | None, stored: list[np.ndarray]) -> float:
    """The primal side: the LP's dual weights mix the routings behind its planes into one flow; its
    time (seconds per byte) is its most loaded link's, inf when there is no such mix."""
    if marginals is None or not marginals.sum() > 0:
        return float("inf")
    weights = marginals / marginals.sum()
    mixed = weights @ np.asarray(stored[: len(weights)])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(net.cap > 0, mixed / net.cap, np.where(mixed > 0, np.inf, 0.0))
    return float(ratio.max()) / 1e9
