"""What a fault study costs, estimated before it runs, and refused past the limit.

Units of work are devices plus directed links touched (one BFS, or one round of colour refinement):
a run of the collectives on a system with a failure routes every chip.
"""

from trnsim.topology.faults import Component
from trnsim.topology.graph import Topology

# an assumption calibrated on this project's 2-core machines: a run of one op on a small system
# costs about 50 ms of scheduling, planning and costing beyond its routing, as much as 2**19 units
RUN_OVERHEAD = 1 << 19


def _size(topology: Topology) -> int:
    """Devices plus directed links: what one BFS, or one round of refinement, touches."""
    return len(topology.nodes) + 2 * len(topology.links)


def refinement_work(topology: Topology, parts: list[Component]) -> tuple[int, int]:
    """(work, most rounds) of telling ``parts`` apart: parts x rounds x (devices + directed links),
    the rounds measured on the first part of each kind (one refinement each)."""
    from trnsim.studies.faults.classes import Refiner

    refiner = Refiner(topology)
    if not parts or not refiner.applies:
        return 0, 0
    by_kind: dict[str, list[Component]] = {}
    for part in parts:
        by_kind.setdefault(part.kind, []).append(part)
    rounds = {kind: refiner.key(members[0])[1] for kind, members in by_kind.items()}
    work = sum(len(members) * rounds[kind] for kind, members in by_kind.items()) * _size(topology)
    return work, max(rounds.values())


def check_sweep(topology: Topology, runs: int, ops: list[str], done: int, what: str) -> None:
    """Refuse a fault sweep whose work passes :data:`trnsim.limits.FAULTS_WORK` before it runs.

    A run of the collectives on the system with a failure routes every chip: ops x (chips x (devices
    + directed links) + :data:`RUN_OVERHEAD`); ``runs`` counts them, ``done`` is the refinement's work (see
    :func:`refinement_work`) and ``what`` says what the work is for.
    """
    from trnsim import limits

    work = done + runs * len(ops) * (topology.n_ranks * _size(topology) + RUN_OVERHEAD)
    limits.FAULTS_WORK.check(work, f"{topology.where}: {what} needs")


def check_random(topology: Topology, ops: list[str], count: int, samples: int) -> None:
    """Refuse Monte Carlo draws whose runs pass the fault-sweep limit (see :func:`check_sweep`)."""
    plural = "s" if len(ops) != 1 else ""
    what = f"{samples:,} draws of {count} failed parts, each running {len(ops)} op{plural} on {topology.n_ranks:,} ranks,"
    check_sweep(topology, samples, ops, 0, what)
