"""Every single failure of a system: each part failed alone and the collectives run on what is left.

:func:`single_failures` fails each part of a system alone (:func:`trnsim.topology.faults.components`)
and runs the collectives on the survivors. Parts that look alike are evaluated once
(:mod:`trnsim.studies.faults.classes`). A failed chip is different: it changes the group, and the
survivors' schedules follow rank order, which no symmetry of the graph keeps, so up to
:data:`CHIP_SAMPLES` chips spread over the ranks are evaluated per class. Each class then reports
the worst, median and mean loss of busbw over its parts (:mod:`trnsim.studies.faults.summary`),
weighted by how many parts each evaluation stands for.

Chips lost to a failure follow a blast-radius policy (:mod:`trnsim.studies.faults.blast`); a
failure that splits the fabric loses the chips outside the largest part. The survivors run every
collective; busbw loss is ``1 - busbw after / busbw before`` at each size.
"""

from dataclasses import dataclass, field

from trnsim.errors import ParameterError
from trnsim.studies.faults.blast import check_policy, lost_with
from trnsim.studies.faults.classes import equivalence_classes
from trnsim.studies.faults.work import check_sweep, refinement_work
from trnsim.topology.faults import Component, components
from trnsim.topology.graph import Topology

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


def run_survivors(
    degraded: Topology, ops: list[str], sizes: list[int], outcome: Outcome, keys, runtime: str = "ideal"
) -> None:
    """Run ``ops`` at ``sizes`` on the survivors into ``outcome.busbw_gbps``, priced by ``runtime``
    (:mod:`trnsim.studies.runtimes`); a key of ``keys`` that no run gave (a size that aligns to
    nothing on the survivors) moves nothing: 0.

    Raises
    ------
    NotApplicableError
        The runtime cannot model the survivors (it prices the healthy system): named with the failure.
    """
    from trnsim.errors import NotApplicableError

    try:
        for op in ops:
            for row in _busbw_rows(degraded, op, sizes, runtime):
                outcome.busbw_gbps[(op, row.requested_bytes)] = row.busbw_gbps
    except NotApplicableError as exc:
        raise exc.within(f"with {outcome.component.spec} failed") from None
    for key in keys:
        outcome.busbw_gbps.setdefault(key, 0.0)


def _busbw_rows(topology: Topology, op: str, sizes: list[int], runtime: str) -> list:
    """Every rank of ``topology`` running ``op`` at ``sizes``, priced by ``runtime``."""
    from trnsim.model.engine import evaluate
    from trnsim.studies.runtimes import priced

    ideal = evaluate(topology, op, sizes, topology.chips, exact_bounds=False)
    return priced(topology, ideal, runtime).rows


def single_failures(
    load,
    topology: Topology,
    ops: list[str],
    sizes: list[int],
    policy: str | None = None,
    kinds: list[str] | None = None,
    exhaustive: bool = False,
    runtime: str = "ideal",
) -> FaultReport:
    """Fail every part of ``topology`` alone and run ``ops`` at ``sizes`` on the survivors.

    Parameters
    ----------
    load : callable
        ``load(faults)`` builds the system with ``fail=`` edits (the caller's SKU or file and edits).
    topology : Topology
        The system (with any failures the caller already applied).
    ops : list of str
        Collectives to run.
    sizes : list of int
        Sizes in bytes.
    policy : str, optional
        Blast radius (:data:`trnsim.studies.faults.blast.POLICIES`; default: the system's).
    kinds : list of str, optional
        Only these classes of parts (default: all).
    exhaustive : bool
        Evaluate every part, not one per class of parts that look alike.
    runtime : str
        What prices every run, before and after a failure (:mod:`trnsim.studies.runtimes`; checked
        by the caller).

    Returns
    -------
    FaultReport
        The busbw before, and per class of parts every evaluated failure.
    """
    policy = check_policy(topology, policy)
    parts = _parts(topology, kinds)
    by_kind: dict[str, list[Component]] = {}
    for part in parts:
        by_kind.setdefault(part.kind, []).append(part)
    chosen = _plan(topology, parts, by_kind, ops, policy, exhaustive)
    healthy = {}
    for op in ops:
        for row in _busbw_rows(topology, op, sizes, runtime):
            healthy[(op, row.requested_bytes)] = row.busbw_gbps
    classes, evaluated = [], 0
    for kind, members in by_kind.items():
        outcomes = []
        for part, weight in chosen[kind]:
            outcome, ran = _fail_one(load, topology, part, weight, policy, healthy, ops, sizes, runtime)
            outcomes.append(outcome)
            evaluated += ran
        classes.append(ClassResult(kind, len(members), outcomes))
    return FaultReport(
        topology.name, topology.n_ranks, policy, healthy, classes, evaluated, topology.ranks_per_chip
    )


def _parts(topology: Topology, kinds: list[str] | None) -> list[Component]:
    """The parts to fail: all, or those of ``kinds`` (refused when a kind is not the system's)."""
    parts = components(topology)
    if kinds:
        known = sorted({part.kind for part in parts})
        unknown = [kind for kind in kinds if kind not in known]
        if unknown:
            raise ParameterError(f"{topology.name} has {', '.join(known)}", "kind", repr(unknown[0]))
        parts = [part for part in parts if part.kind in kinds]
    return parts


def _plan(topology: Topology, parts, by_kind: dict, ops: list[str], policy: str, exhaustive: bool) -> dict:
    """The parts of each kind to evaluate with their weights, the work checked before each stage:
    the refinement that tells the parts apart, then the runs."""
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
        if len(lost_with(topology, part, policy)) < topology.n_ranks - 1
    ]
    check_sweep(
        topology,
        1 + len(runs),
        ops,
        done,
        f"a fault sweep{what + ' and' if what else ' that'} runs {len(ops)} op{'s' if len(ops) != 1 else ''} "
        f"on {topology.n_ranks:,} ranks {1 + len(runs):,} times (healthy, and once per distinct failure)",
    )
    return chosen


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


def _fail_one(load, topology, part, weight, policy, healthy, ops, sizes, runtime) -> tuple[Outcome, bool]:
    """One part failed: its outcome, and whether the survivors ran (False: the domain is out)."""
    from trnsim.errors import TrnsimError

    lost = lost_with(topology, part, policy)
    outcome = Outcome(part, weight, lost)
    if len(lost) >= topology.n_ranks - 1:
        outcome.note = "the domain is out of service"
        outcome.busbw_gbps = dict.fromkeys(healthy, 0.0)
        return outcome, False
    physical = {topology.nodes[c].get("chip", c) for c in lost}
    faults = [part.spec] + [f"chip:{chip}" for chip in sorted(physical) if chip not in part.nodes]
    try:
        degraded = load(faults, keep_largest=True)
    except TrnsimError as exc:  # no two chips left connected: the domain is out of service
        outcome.note = str(exc)
        outcome.lost = list(topology.chips)
        outcome.busbw_gbps = dict.fromkeys(healthy, 0.0)
        return outcome, False
    cut_off = [c for c in topology.chips if c not in degraded.rank_of and c not in lost]
    if cut_off:
        outcome.lost = lost + cut_off
        outcome.note = f"splits the fabric: {len(cut_off)} chips cut off"
        if policy == "cuboid":  # a torus job needs every chip: the domain is out of service
            outcome.lost = list(topology.chips)
            outcome.note = "cuts a chip off: the domain is out of service"
            outcome.busbw_gbps = dict.fromkeys(healthy, 0.0)
            return outcome, False
    run_survivors(degraded, ops, sizes, outcome, healthy, runtime)
    return outcome, True
