"""A concurrent run prepared: the groups checked, every algorithm scheduled for every group, the work
it will take counted before any routing.

Lockstep needs schedules of one shape (the same steps, repeats and pipeline stages): groups of one
size on a symmetric system have them; an algorithm whose schedules differ between the groups does
not apply.
"""

from dataclasses import dataclass

import numpy as np

from trnsim.collectives import algorithms
from trnsim.collectives.arguments import Arguments, resolve
from trnsim.collectives.ops import get_op
from trnsim.collectives.schedule import Context, NotApplicable, Pipeline, Step
from trnsim.collectives.traffic import check_traffic
from trnsim.errors import NotApplicableError, UsageError
from trnsim.model.concurrent.translates import Carried, translates
from trnsim.model.engine import align_sizes
from trnsim.routing.paths import routing_work
from trnsim.topology.graph import Topology


def flat(schedule: list) -> list[Step]:
    """The schedule's steps in order, each pipeline's stages flattened (the order routes come in)."""
    return [step for entry in schedule for step in (entry.steps if isinstance(entry, Pipeline) else [entry])]


def _shape(schedule: list) -> tuple:
    """What lockstep needs to be equal between groups: the steps' repeats and the pipelines' stages."""
    shape = []
    for entry in schedule:
        if isinstance(entry, Pipeline):
            shape.append(("pipeline", tuple(tuple(len(stage) for stage in chain) for chain in entry.chains)))
        else:
            shape.append(("step", entry.repeat))
    return tuple(shape)


@dataclass
class Prepared:
    """A concurrent run scheduled but not yet routed: what it will cost is known (see :attr:`work`)."""

    topology: Topology
    op: object  # the :class:`trnsim.collectives.ops.Op`
    groups: list[list[str]]
    traffic: np.ndarray | None
    aligned: list
    dropped: list[int]
    images: list  # per group: (its original's index, directed-edge map), or None when routed itself
    schedules: dict[str, list]  # per applicable algorithm, each group's schedule
    skipped: dict[str, str]
    realisations: int  # routings per group: hash seeds, else 1
    dtype: str = "float"  # the element type, one spelling
    root: int = 0  # a broadcast's or reduce's root, by position
    blocks: tuple[float, ...] | None = None  # an all-gatherv's or reduce-scatterv's block shares

    @property
    def routed(self) -> list[int]:
        """The groups routed themselves (the others are translates of one of them)."""
        return [k for k, image in enumerate(self.images) if image is None]

    @property
    def work(self) -> tuple[int, int]:
        """(routing work, shared-link work): see :func:`check_work`."""
        topology, routed = self.topology, self.routed
        routing = self.realisations * sum(routing_work(topology, self.groups[k]) for k in routed)
        steps = sum(len(flat(schedules[0])) for schedules in self.schedules.values())
        # every routed group keeps each step's load on every directed link, and the run keeps their
        # sum twice (by edge and by step); a translate's loads are its original's moved
        shared = self.realisations * steps * 2 * len(topology.links) * (len(routed) + 2)
        return routing, shared


def check_work(prepared: list[Prepared], subject: str) -> None:
    """Refuse runs whose routing or shared-link work passes its limit, before any of it is done.

    Routing work is what :func:`~trnsim.model.router.routing_work` counts for each routed
    group (times the hash seeds): translates of a routed group cost nothing more. Shared-link work is
    schedule steps x directed links x (routed groups + 2), per algorithm tried and seed: the link
    loads a run keeps, and what costing each group on the shared loads touches.
    """
    from trnsim import limits

    routing = sum(p.work[0] for p in prepared)
    shared = sum(p.work[1] for p in prepared)
    limits.ROUTING.check(routing, f"{subject} need")
    limits.SHARED_WORK.check(shared, f"{subject} need")


def describe_groups(topology: Topology, groups: list[list[str]], routed: int) -> str:
    """The start of a refusal: the file, the groups and how many of them are routed."""
    translates = len(groups) - routed
    return (
        f"{topology.where}: {len(groups):,} groups of {len(groups[0]):,} chips at once"
        + (
            f" ({routed:,} routed; the other {translates:,} {'is a copy' if translates == 1 else 'are copies'}"
            f" of {'it' if routed == 1 else 'them'} moved by the fabric's symmetry)"
            if translates
            else ""
        )
        + f" on {len(topology.nodes):,} devices"
    )


def prepare_concurrent(
    topology: Topology,
    op_name: str,
    sizes: list[int],
    groups: list[list[str]],
    algo: str = "auto",
    dtype: str = "float",
    traffic: np.ndarray | None = None,
    arguments: Arguments | None = None,
) -> Prepared:
    """Check the groups and schedule every algorithm for every group, routing nothing yet.

    Parameters
    ----------
    topology : Topology
        The built system.
    op_name : str
        The collective every group runs.
    sizes : list of int
        Buffer sizes in bytes (aligned to what nccl-tests runs).
    groups : list of list of str
        Disjoint groups of equal size (chip names in rank order).
    algo : str
        An algorithm name or ``auto`` (every one that applies; those that do not are skipped).
    dtype : str
        The element type sizes are aligned to.
    traffic : numpy.ndarray, optional
        A skewed all-to-all's traffic matrix, the same for every group.
    arguments : Arguments, optional
        The op's root, pairs or counts, the same for every group by position
        (:mod:`trnsim.collectives.arguments`).

    Returns
    -------
    Prepared
        The schedules, the translates and the work (:attr:`Prepared.work`) of the run.

    Examples
    --------
    Two pairs of a ring of 4 at once: the second pair is the first shifted by two chips, so only the
    first is scheduled and routed; the second is its translate.

    >>> from trnsim.topology.synthetic import ring_topology
    >>> ring = ring_topology(4)
    >>> a, b, c, d = ring.chips
    >>> prepared = prepare_concurrent(ring, "allgather", [1 << 20], [[a, b], [c, d]], algo="ring")
    >>> prepared.routed, prepared.images[1][0], list(prepared.schedules)
    ([0], 0, ['ring'])
    """
    from trnsim.routing.policy import routing_of

    op = get_op(op_name)
    _check_groups(groups)
    p = len(groups[0])
    check_traffic(op.name, traffic, p)
    traffic, root, blocks = resolve(op, p, arguments, traffic, f"{topology.where}: ")
    aligned, dropped = align_sizes(op, sizes, p, dtype)
    images = translates(topology, groups)  # per group: (its original's index, directed-edge map) or None
    shape = (traffic, root, blocks)
    schedules, skipped = _schedules(topology, op.base, groups, images, algo, shape)
    if any(image is not None and isinstance(image[1], Carried) for image in images) and _names_devices(
        schedules
    ):
        # a schedule that names devices (relays, reducing switches, explicit paths) chooses them
        # among alike ones by the order of names, which the automorphism need not keep
        images = [None] * len(groups)
        schedules, skipped = _schedules(topology, op.base, groups, images, algo, shape)
    realisations = routing_of(topology.spec).realisations
    dtype = dtype.strip().lower()  # names are case-insensitive; rows carry one spelling
    return Prepared(
        topology,
        op,
        groups,
        traffic,
        aligned,
        dropped,
        images,
        schedules,
        skipped,
        realisations,
        dtype,
        root,
        blocks,
    )


def _names_devices(schedules: dict[str, list]) -> bool:
    """Whether a step of any group's schedule names devices: relays, reducing switches or paths."""
    return any(
        step.relays or step.in_network or step.paths is not None
        for mine in schedules.values()
        for schedule in mine
        for step in flat(schedule)
    )


def _check_groups(groups: list[list[str]]) -> None:
    """Refuse groups that cannot run in lockstep: fewer than two ranks, unequal sizes, overlaps."""
    if len(groups) < 1 or any(len(group) < 2 for group in groups):
        raise UsageError("every group needs at least two ranks")
    if len({len(group) for group in groups}) != 1:
        raise UsageError("concurrent groups must be of one size (their schedules run in lockstep)")
    seen: set[str] = set()
    for group in groups:
        if seen & set(group):
            raise UsageError(f"groups must be disjoint: {sorted(seen & set(group))[0]} is in two of them")
        seen |= set(group)


def _schedules(topology, op_name: str, groups, images, algo: str, shape):
    """Per algorithm that applies, each group's schedule (a translate takes its original's); the
    others with the reason (``auto``), or a refusal (a named algorithm). ``shape`` is the context's
    traffic, root and blocks."""
    names = (
        [name for name, a in algorithms.REGISTRY.items() if op_name in a.ops and not a.named_only]
        if algo == "auto"
        else [algorithms.find(algo).name]
    )
    schedules, skipped = {}, {}
    for name in names:
        try:
            mine = []
            for k, group in enumerate(groups):
                if images[k] is None:
                    context = Context(topology.planner, group, *shape)
                    mine.append(algorithms.find(name).schedule(context, op_name))
                else:
                    mine.append(mine[images[k][0]])
            if len({_shape(schedule) for schedule in mine}) != 1:
                raise NotApplicable("the groups' schedules differ in shape, so they cannot run in lockstep")
            schedules[name] = mine
        except NotApplicable as reason:
            if algo != "auto":
                raise NotApplicableError(
                    f"algorithm {name} does not apply to these groups: {reason}"
                ) from None
            skipped[name] = str(reason)
    return schedules, skipped
