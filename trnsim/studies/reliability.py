"""Faults as numbers: every single failure's cost, chips lost, failure rates, and stragglers.

:func:`single_failures` fails each part of a system alone (:func:`trnsim.topology.faults.components`)
and runs the collectives on what is left. Parts that look alike are evaluated once: colour refinement
(1-dimensional Weisfeiler-Leman) runs on the system with the part marked as failed, and two parts
whose refined colour histograms agree are taken as equivalent (an assumption: it holds for the
symmetric fabrics of the catalog, where it merges the parts an automorphism maps onto each other;
``exhaustive=True`` evaluates every part). A failed chip is different: it changes the group, and the
survivors' schedules follow rank order, which no symmetry of the graph keeps, so up to
:data:`CHIP_SAMPLES` chips spread over the ranks are evaluated per class. Each class then reports
the worst, median and mean loss of busbw over its parts, weighted by how many parts each evaluation
stands for.

Chips lost to a failure follow a blast-radius policy:

* ``cuboid``: a torus job needs the whole wrapped torus, so one failed chip takes every chip of the
  domain out of service (docs/sources.md#trn2-blast-radius: 64 on NL64, 256 on the 4x4x16 concept); links are routed round;
* ``chip``: only the failed chip (with its ranks);
* ``node``: the failed chip's node (server or tray);
* ``rack``: the failed chip's rack (the whole system on a torus).

A failure that splits the fabric loses the chips outside the largest part. The survivors run every
collective; busbw loss is ``1 - busbw after / busbw before`` at each size.

Reliability: each part's failure rate is its class's (:data:`RATES`, mean time to failure in hours,
each a sourced figure or a named assumption), and a failed part stays down for ``mttr_h`` hours (an
assumption). Failures per year, the expected chips out of service and the capacity-weighted
availability follow; :func:`straggler` turns the per-domain state into the expected slowdown of a
job that spans many domains and runs at the pace of its slowest.
"""

from dataclasses import dataclass, field

import numpy as np

from trnsim.errors import UsageError
from trnsim.topology.faults import Component, components
from trnsim.topology.graph import Topology

HOURS_PER_YEAR = 8766.0
# mean time to failure (hours) per part class, with where the figure comes from
RATES: dict[str, tuple[float, str]] = {
    "chip": (
        83_000.0,
        "a peer's measurement, as an assumption for Trainium: Meta's Llama 3 405B run (Dubey et al. 2024) "
        "saw 256 GPU-related interruptions (faulty GPU 148, HBM3 72, SRAM 19, GPU system processor 17) in "
        "54 days on 16,384 H100s, one per 83,000 GPU-hours",
    ),
    "switch": (2_000_000.0, "assumption: no published figure for a Scorpio X or P switch chip"),
    "switch tray": (
        1_000_000.0,
        "assumption: a switch tray's board, power and fans, apart from its switches",
    ),
    "copper link": (1e8, "docs/sources.md#link-mttf: copper link MTTF about 100 M hours"),
    "optical link": (
        5e6,
        "docs/sources.md#link-mttf: 1-10 M hours for optics; the middle of the range is an assumption",
    ),
}
MTTR_H = 24.0  # assumption: hours from a failure to the part back in service
POLICIES = ("cuboid", "chip", "node", "rack")
CHIP_SAMPLES = 6  # failed chips evaluated per class of alike chips (see single_failures)


@dataclass
class Outcome:
    """One evaluated failure: what it stands for, chips lost and busbw after it, per op and size."""

    component: Component
    weight: float  # how many parts of its class it stands for
    lost: list[str]  # chips out of service (under the policy)
    busbw_gbps: dict[tuple[str, int], float] = field(default_factory=dict)  # (op, bytes) -> after
    note: str = ""


@dataclass
class ClassResult:
    """Every single failure of one class of parts."""

    kind: str
    count: int  # parts in the class
    outcomes: list[Outcome]

    def losses(self, healthy: float, key: tuple[str, int]) -> list[tuple[float, int, Outcome]]:
        """(busbw loss, weight, outcome) for each evaluated failure."""
        return [(1 - o.busbw_gbps[key] / healthy if healthy else 0.0, o.weight, o) for o in self.outcomes]

    @property
    def lost_mean(self) -> float:
        return sum(len(o.lost) * o.weight for o in self.outcomes) / self.count

    @property
    def lost_max(self) -> int:
        return max(len(o.lost) for o in self.outcomes)


@dataclass
class FaultReport:
    """A system's single-failure sweep."""

    sku: str
    ranks: int  # the endpoints that failures lose (a chip's ranks are lost with it)
    policy: str
    healthy: dict[tuple[str, int], float]  # (op, bytes) -> busbw before
    classes: list[ClassResult]
    evaluated: int  # distinct failures run
    ranks_per_chip: int = 1

    @property
    def chips(self) -> int:
        """Physical chips."""
        return self.ranks // self.ranks_per_chip


def default_policy(topology: Topology) -> str:
    return "cuboid" if topology.spec.kind == "torus" else "chip"


def _refined_histogram(src, dst, order, starts, edge_colour, node_colour) -> tuple[bytes, int]:
    """Colour refinement to a fixed point; the histogram of the final colours, as bytes, and the
    rounds it took.

    Colours are hashed with random 64-bit keys drawn afresh each round from one seed, so equal
    structures get equal hashes in every call (sums wrap modulo 2**64: order does not matter).
    """
    rng = np.random.default_rng(20261123)
    colours = node_colour
    count = len(np.unique(colours))
    rounds = 0
    while rounds < len(colours):
        rounds += 1
        node_keys = rng.integers(1, 2**63, size=int(colours.max()) + 1, dtype=np.uint64)
        edge_keys = rng.integers(
            1, 2**63, size=(int(edge_colour.max()) + 1, int(colours.max()) + 1), dtype=np.uint64
        )
        incoming = edge_keys[edge_colour, colours[src]][order]
        hashes = node_keys[colours].copy()
        hashes += np.add.reduceat(incoming, starts) if len(incoming) else 0
        unique, colours = np.unique(hashes, return_inverse=True)
        if len(unique) == count:
            break
        count = len(unique)
    return unique.tobytes() + np.bincount(colours).astype(np.int64).tobytes(), rounds


class _Refiner:
    """Colour refinement of a system with one part marked as failed (see the module docstring)."""

    def __init__(self, topology: Topology):
        from trnsim.topology.arrays import graph_arrays

        self.arrays = arrays = graph_arrays(topology)
        kinds: dict = {}
        self.node_colour = np.array(
            [
                kinds.setdefault((topology.nodes[n]["kind"], topology.nodes[n].get("role")), len(kinds))
                for n in arrays.nodes
            ],
            dtype=np.int64,
        )
        link_kinds: dict = {}
        self.undirected = np.array(
            [
                link_kinds.setdefault((cls, round(float(bw), 6)), len(link_kinds))
                for cls, bw in zip(arrays.edge_cls, _edge_bw(arrays), strict=True)
            ],
            dtype=np.int64,
        )
        self.edge_of = {ends: k for k, ends in enumerate(arrays.edge_ends)}
        self.directed_cls = np.array([arrays.edge_cls[e] for e in arrays.edge])  # once, not per part
        self.order = np.argsort(arrays.dst, kind="stable")
        heads = arrays.dst[self.order]
        self.starts = np.flatnonzero(np.r_[True, heads[1:] != heads[:-1]])
        # a device without links: no refinement shortcut
        self.applies = len(self.starts) == arrays.n_nodes

    def key(self, part: Component) -> tuple[bytes, int]:
        """The part's kind and refined colour histogram (its class), and the rounds it took."""
        arrays, index, edge_of = self.arrays, self.arrays.index, self.edge_of
        failed_node = self.node_colour.max() + 1
        failed_edge, degraded_edge = self.undirected.max() + 1, self.undirected.max() + 2
        nodes = self.node_colour.copy()
        edges = self.undirected.copy()
        for name in part.nodes:
            nodes[index[name]] = failed_node
        for ends in part.links:
            edges[edge_of[ends] if ends in edge_of else edge_of[(ends[1], ends[0])]] = failed_edge
        for chip, cls in part.lanes:
            touched = (arrays.src == index[chip]) & (self.directed_cls == cls)
            edges[arrays.edge[touched]] = degraded_edge
        histogram, rounds = _refined_histogram(
            arrays.src, arrays.dst, self.order, self.starts, edges[arrays.edge], nodes
        )
        return part.kind.encode() + b"|" + histogram, rounds


def equivalence_classes(topology: Topology, parts: list[Component]) -> list[list[Component]]:
    """The parts grouped into classes that look alike (see the module docstring), in order."""
    refiner = _Refiner(topology)
    if not refiner.applies:
        return [[part] for part in parts]
    groups: dict[bytes, list] = {}
    for part in parts:
        groups.setdefault(refiner.key(part)[0], []).append(part)
    return list(groups.values())


def _size(topology: Topology) -> int:
    """Devices plus directed links: what one BFS, or one round of refinement, touches."""
    return len(topology.nodes) + 2 * len(topology.links)


def refinement_work(topology: Topology, parts: list[Component]) -> tuple[int, int]:
    """(work, most rounds) of telling ``parts`` apart: parts x rounds x (devices + directed links),
    the rounds measured on the first part of each kind (one refinement each)."""
    refiner = _Refiner(topology)
    if not parts or not refiner.applies:
        return 0, 0
    by_kind: dict[str, list[Component]] = {}
    for part in parts:
        by_kind.setdefault(part.kind, []).append(part)
    rounds = {kind: refiner.key(members[0])[1] for kind, members in by_kind.items()}
    work = sum(len(members) * rounds[kind] for kind, members in by_kind.items()) * _size(topology)
    return work, max(rounds.values())


# an assumption calibrated on this project's 2-core machines: a run of one op on a small system
# costs about 50 ms of scheduling, planning and costing beyond its routing, as much as 2**19 units
RUN_OVERHEAD = 1 << 19


def check_sweep(topology: Topology, runs: int, ops: list[str], done: int, what: str) -> None:
    """Refuse a fault sweep whose work passes :data:`trnsim.limits.FAULTS_WORK` before it runs.

    A run of the collectives on the system with a failure routes every chip: ops x (chips x (devices
    + directed links) + :data:`RUN_OVERHEAD`); ``runs`` counts them, ``done`` is the refinement's work (see
    :func:`refinement_work`) and ``what`` says what the work is for.
    """
    from trnsim import limits

    work = done + runs * len(ops) * (topology.n_ranks * _size(topology) + RUN_OVERHEAD)
    limits.FAULTS_WORK.check(work, f"{topology.where}: {what} needs")


def _edge_bw(arrays) -> np.ndarray:
    """Bandwidth of each undirected edge (from its first directed copy)."""
    bw = np.zeros(len(arrays.edge_ends))
    bw[arrays.edge] = arrays.bw_gbps
    return bw


def _check_policy(topology: Topology, policy: str | None) -> str:
    policy = policy or default_policy(topology)
    if policy not in POLICIES:
        raise UsageError(f"--blast-radius {policy!r}: expected one of {', '.join(POLICIES)}")
    if policy == "cuboid" and topology.spec.kind != "torus":
        raise UsageError(
            f"--blast-radius cuboid is for tori (a job needs the whole torus); {topology.name} is switched"
        )
    return policy


def _lost_with(topology: Topology, part: Component, policy: str) -> list[str]:
    """Chips (rank endpoints) a failed chip takes out of service under ``policy``."""
    if not part.nodes or part.kind != "chip":
        return []
    nodes = topology.nodes
    chip = part.nodes[0]
    ranks = [c for c in topology.chips if nodes[c].get("chip", c) == chip]
    if policy == "chip":
        return ranks
    if policy == "cuboid" or (policy == "rack" and topology.spec.kind == "torus"):
        return list(topology.chips)
    data = nodes[ranks[0]]
    if policy == "node":
        key = ("rack", "node") if topology.spec.kind == "switched" else ("server",)
    else:
        key = ("rack",)
    return [c for c in topology.chips if all(nodes[c].get(k) == data.get(k) for k in key)]


def _chosen(topology: Topology, kind: str, members: list[Component], exhaustive: bool) -> list:
    """The parts of one kind to evaluate, each with how many parts it stands for."""
    if exhaustive:
        return [(part, 1.0) for part in members]
    chosen = []
    for alike in equivalence_classes(topology, members):
        # a failed chip changes the group, and the survivors' schedules follow rank order, which no
        # symmetry of the graph keeps: sample chips spread over the ranks
        picks = alike[:: max(1, len(alike) // CHIP_SAMPLES)][:CHIP_SAMPLES] if kind == "chip" else alike[:1]
        chosen += [(part, len(alike) / len(picks)) for part in picks]
    return chosen


def single_failures(
    load,
    topology: Topology,
    ops: list[str],
    sizes: list[int],
    policy: str | None = None,
    kinds: list[str] | None = None,
    exhaustive: bool = False,
) -> FaultReport:
    """Fail every part of ``topology`` alone and run ``ops`` at ``sizes`` on the survivors.

    Parameters
    ----------
    load : callable
        ``load(faults)`` builds the system with ``fail=`` edits (the caller's SKU or file and edits).
    kinds : list of str, optional
        Only these classes of parts (default: all).
    """
    from trnsim.errors import TrnsimError
    from trnsim.model.engine import evaluate

    policy = _check_policy(topology, policy)
    parts = components(topology)
    if kinds:
        known = sorted({part.kind for part in parts})
        unknown = [kind for kind in kinds if kind not in known]
        if unknown:
            raise UsageError(f"--kind {unknown[0]!r}: {topology.name} has {', '.join(known)}")
        parts = [part for part in parts if part.kind in kinds]
    by_kind: dict[str, list[Component]] = {}
    for part in parts:
        by_kind.setdefault(part.kind, []).append(part)
    done, what = 0, ""
    if not exhaustive:
        done, rounds = refinement_work(topology, parts)
        what = f" that tells {len(parts):,} parts apart ({rounds} rounds of colour refinement each)"
        check_sweep(topology, 1, ops, done, "a fault sweep" + what)
    chosen = {kind: _chosen(topology, kind, members, exhaustive) for kind, members in by_kind.items()}
    runs = [
        part
        for picks in chosen.values()
        for part, _ in picks
        if len(_lost_with(topology, part, policy)) < topology.n_ranks - 1
    ]
    check_sweep(
        topology,
        1 + len(runs),
        ops,
        done,
        f"a fault sweep{what + ' and' if what else ' that'} runs {len(ops)} op{'s' if len(ops) != 1 else ''} "
        f"on {topology.n_ranks:,} ranks {1 + len(runs):,} times (healthy, and once per distinct failure)",
    )
    healthy = {}
    for op in ops:
        for row in evaluate(topology, op, sizes, topology.chips, exact_bounds=False).rows:
            healthy[(op, row.requested_bytes)] = row.busbw_gbps
    classes, evaluated = [], 0
    for kind, members in by_kind.items():
        outcomes = []
        for part, weight in chosen[kind]:
            lost = _lost_with(topology, part, policy)
            outcome = Outcome(part, weight, lost)
            outcomes.append(outcome)
            if len(lost) >= topology.n_ranks - 1:
                outcome.note = "the domain is out of service"
                outcome.busbw_gbps = dict.fromkeys(healthy, 0.0)
                continue
            physical = {topology.nodes[c].get("chip", c) for c in lost}
            faults = [part.spec] + [f"chip:{chip}" for chip in sorted(physical) if chip not in part.nodes]
            try:
                degraded = load(faults, keep_largest=True)
            except TrnsimError as exc:  # no two chips left connected: the domain is out of service
                outcome.note = str(exc)
                outcome.lost = list(topology.chips)
                outcome.busbw_gbps = dict.fromkeys(healthy, 0.0)
                continue
            cut_off = [c for c in topology.chips if c not in degraded.rank_of and c not in lost]
            if cut_off:
                outcome.lost = lost + cut_off
                outcome.note = f"splits the fabric: {len(cut_off)} chips cut off"
                if policy == "cuboid":  # a torus job needs every chip: the domain is out of service
                    outcome.lost = list(topology.chips)
                    outcome.note = "cuts a chip off: the domain is out of service"
                    outcome.busbw_gbps = dict.fromkeys(healthy, 0.0)
                    continue
            evaluated += 1
            for op in ops:
                result = evaluate(degraded, op, sizes, degraded.chips, exact_bounds=False)
                for row in result.rows:
                    outcome.busbw_gbps[(op, row.requested_bytes)] = row.busbw_gbps
            for key in healthy:  # a size that aligns to nothing on the survivors moves nothing
                outcome.busbw_gbps.setdefault(key, 0.0)
        classes.append(ClassResult(kind, len(members), outcomes))
    return FaultReport(
        topology.name, topology.n_ranks, policy, healthy, classes, evaluated, topology.ranks_per_chip
    )


def loss_summary(report: FaultReport, key: tuple[str, int]) -> list[dict]:
    """Per class: worst, weighted median and mean busbw loss at one (op, size), chips lost."""
    rows = []
    healthy = report.healthy[key]
    for result in report.classes:
        losses = result.losses(healthy, key)
        ordered = sorted((loss, weight) for loss, weight, _ in losses)
        total = sum(weight for _, weight in ordered)
        cumulative = np.cumsum([weight for _, weight in ordered])
        median = ordered[int(np.searchsorted(cumulative, total / 2))][0]
        worst = max(losses, key=lambda item: item[0])
        rows.append(
            {
                "kind": result.kind,
                "parts": result.count,
                "distinct": len(result.outcomes),
                "chips_lost_max": result.lost_max,
                "chips_lost_mean": result.lost_mean,
                "busbw_before_gbps": healthy,
                "worst_loss": worst[0],
                "median_loss": median,
                "mean_loss": sum(loss * weight for loss, weight in ordered) / total,
                "worst_part": worst[2].component.spec,
                "note": worst[2].note,
            }
        )
    return rows


@dataclass
class Reliability:
    """Failure rates summed over a system's parts."""

    failures_per_year: float
    chips_out: float  # expected ranks out of service at a random moment (chips x ranks per chip)
    availability: float  # capacity-weighted: 1 - chips_out / chips
    by_class: list[dict]
    p_degraded: float  # probability that some part is down at a random moment
    p_down: float  # probability that the domain is out of service (a failure lost all its chips)


def _unavailability(mttf_h: float, mttr_h: float) -> float:
    """The share of the time a part is down: MTTR / (MTTF + MTTR) (alternating failure and repair)."""
    return mttr_h / (mttf_h + mttr_h)


def reliability(report: FaultReport, rates: dict[str, float], mttr_h: float) -> Reliability:
    """Expected failures, chips out of service and availability from per-class rates.

    Parts fail independently, each down a share ``MTTR / (MTTF + MTTR)`` of the time. A chip is out
    while any failure that loses it is active; the parts of a class are taken to cover the chips
    evenly (each chip is lost by ``count x chips lost / chips`` of them, exact on the catalog's
    symmetric systems), so the chips out never exceed the chips.
    """
    rows, total_rate, log_up, log_healthy, log_domain = [], 0.0, 0.0, 0.0, 0.0
    n = report.ranks
    for result in report.classes:
        rate_class = result.outcomes[0].component.rate
        if rate_class is None:  # not a part that fails by itself (a plane, lanes)
            continue
        mttf = rates[rate_class]
        u = _unavailability(mttf, mttr_h)
        log_keep = np.log1p(-u) if u < 1 else -np.inf
        per_year = result.count * HOURS_PER_YEAR / mttf
        covering = sum(len(o.lost) * o.weight for o in result.outcomes) / n  # failures losing a given chip
        chip_down = 1 - np.exp(covering * log_keep) if covering else 0.0
        log_up += covering * log_keep
        log_healthy += result.count * log_keep
        log_domain += sum(o.weight for o in result.outcomes if len(o.lost) >= n - 1) * log_keep
        total_rate += per_year
        rows.append(
            {
                "kind": result.kind,
                "rate_class": rate_class,
                "parts": result.count,
                "mttf_h": mttf,
                "failures_per_year": per_year,
                "chips_out": n * chip_down,  # this class alone
            }
        )
    chips_out = n * (1 - float(np.exp(log_up)))
    return Reliability(
        total_rate,
        chips_out,
        1 - chips_out / n,
        rows,
        1 - float(np.exp(log_healthy)),
        1 - float(np.exp(log_domain)),
    )


def straggler(
    report: FaultReport, rates: dict[str, float], mttr_h: float, key: tuple[str, int], domains: int
):
    """A job over ``domains`` domains runs at its slowest domain's pace: the expected slowdown.

    Each domain is, independently and at a random moment, healthy; or has exactly one part down
    (a failure that loses chips leaves the job without its shape: it needs a spare domain; one that
    loses none slows the domain's collective by ``busbw before / busbw after``); or has several
    parts down at once, counted with those that need a spare (the cautious side). Parts fail
    independently, each down ``MTTR / (MTTF + MTTR)`` of the time.

    Returns
    -------
    dict
        ``p_all_healthy``, ``p_some_down`` and ``expected_slowdown`` (given no domain needs a spare).
    """
    healthy = report.healthy[key]
    singles = []  # (probability that this alone is down, slowdown or None when it needs a spare)
    log_none = 0.0
    for result in report.classes:
        rate_class = result.outcomes[0].component.rate
        if rate_class is None:
            continue
        u = _unavailability(rates[rate_class], mttr_h)
        log_none += result.count * np.log1p(-u)
        for outcome in result.outcomes:
            after = outcome.busbw_gbps[key]
            slow = None if outcome.lost or after <= 0 else healthy / after
            singles.append((outcome.weight, u / (1 - u), slow))
    p_none = float(np.exp(log_none))
    states = [(weight * odds * p_none, slow) for weight, odds, slow in singles]
    p_spare = max(1.0 - p_none - sum(p for p, slow in states if slow is not None), 0.0)
    p_up = 1.0 - p_spare
    # one domain's slowdown, given it needs no spare; the job's is the maximum over the domains
    mass = {1.0: p_none}
    for p, slow in states:
        if slow is not None:
            mass[slow] = mass.get(slow, 0.0) + p
    values = sorted(mass)
    cdf = np.cumsum([mass[v] for v in values]) / p_up if p_up > 0 else np.ones(len(values))
    at_most = np.minimum(cdf, 1.0) ** domains
    expected = float(
        values[0] * at_most[0] + sum(v * (at_most[i] - at_most[i - 1]) for i, v in enumerate(values) if i)
    )
    return {
        "domains": domains,
        "p_all_healthy": p_none**domains,
        "p_some_down": 1 - p_up**domains,
        "expected_slowdown": expected,
        "p_domain_degraded": p_up - p_none,
        "p_domain_down": p_spare,
    }


def check_random(topology: Topology, ops: list[str], count: int, samples: int) -> None:
    """Refuse Monte Carlo draws whose runs pass the fault-sweep limit (see :func:`check_sweep`)."""
    plural = "s" if len(ops) != 1 else ""
    what = f"{samples:,} draws of {count} failed parts, each running {len(ops)} op{plural} on {topology.n_ranks:,} ranks,"
    check_sweep(topology, samples, ops, 0, what)


def random_failures(
    load,
    topology: Topology,
    ops: list[str],
    sizes: list[int],
    count: int,
    samples: int,
    seed: int,
    rates: dict[str, float],
    policy: str | None = None,
    kinds: list[str] | None = None,
) -> list[Outcome]:
    """``samples`` draws of ``count`` parts failed together (Monte Carlo), each part drawn with
    probability proportional to its failure rate; the survivors run ``ops`` at ``sizes``.

    Returns one :class:`Outcome` per sample (``component`` is the first part drawn; ``note`` lists
    them all).
    """
    from trnsim.errors import TrnsimError
    from trnsim.model.engine import evaluate

    policy = policy or default_policy(topology)
    if policy not in POLICIES:
        raise UsageError(f"--blast-radius {policy!r}: expected one of {', '.join(POLICIES)}")
    parts = [
        part for part in components(topology) if part.rate is not None and (not kinds or part.kind in kinds)
    ]
    if not 1 <= count <= len(parts):
        raise UsageError(f"--random {count}: {topology.name} has {len(parts)} parts that fail by themselves")
    check_random(topology, ops, count, samples)
    weights = np.array([1.0 / rates[part.rate] for part in parts])
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(samples):
        drawn = [
            parts[i] for i in rng.choice(len(parts), size=count, replace=False, p=weights / weights.sum())
        ]
        lost = sorted({chip for part in drawn for chip in _lost_with(topology, part, policy)})
        outcome = Outcome(drawn[0], 1, lost, note="; ".join(part.spec for part in drawn))
        out.append(outcome)
        keys = [(op, size) for op in ops for size in sizes]
        if len(lost) >= topology.n_ranks - 1:
            outcome.busbw_gbps = dict.fromkeys(keys, 0.0)
            continue
        physical = {topology.nodes[c].get("chip", c) for c in lost}
        failures = [part.spec for part in drawn]
        failures += [f"chip:{chip}" for chip in sorted(physical) if not any(chip in p.nodes for p in drawn)]
        try:
            degraded = load(failures, keep_largest=True)
        except TrnsimError:  # no two chips left connected: the domain is out of service
            outcome.lost = list(topology.chips)
            outcome.busbw_gbps = dict.fromkeys(keys, 0.0)
            continue
        outcome.lost = lost + [c for c in topology.chips if c not in degraded.rank_of and c not in lost]
        for op in ops:
            for row in evaluate(degraded, op, sizes, degraded.chips, exact_bounds=False).rows:
                outcome.busbw_gbps[(op, row.requested_bytes)] = row.busbw_gbps
        for key in keys:
            outcome.busbw_gbps.setdefault(key, 0.0)
    return out
