"""Many groups running the same collective at once, sharing every link.

Each group schedules its own collective; the groups run in lockstep, step ``k`` of every group at the
same time, so a link carries the sum of what every group's step ``k`` puts on it (routing is linear:
each group is routed alone and the loads add). A group's step then lasts until the busiest link *it*
uses has carried everyone's bytes: its own plan is costed on the shared loads of the links it uses.
The concurrent run lasts as long as its slowest group. Groups whose links are disjoint take exactly
their time alone.

On a wrapped torus under ECMP, a group that is another shifted by a fixed offset (member by member)
is an exact copy of it: it takes the same schedule, and its loads are the first group's moved along
the translation (an automorphism of the torus), so only one group per translation class is
scheduled and routed; a group whose shared loads are also invariant under its shift is costed once.

Under hash routing each seed routes every group (flows collide across groups as within one); the
time is the mean over the seeds of the slowest group's, and the worst seed's is kept. The time
"alone" is the same statistic with each group costed on its own loads, so the slowdown is what
sharing links costs (not the wait for each seed's unluckiest group, which both include).

Lockstep needs schedules of one shape (the same steps, repeats and pipeline stages): groups of one
size on a symmetric system have them; an algorithm whose schedules differ between the groups does
not apply.
"""

from dataclasses import dataclass, field, replace

import numpy as np

from trnsim.collectives import algorithms
from trnsim.collectives.bounds import Bound, lower_bound
from trnsim.collectives.cost import PipelineCost, StepCost
from trnsim.collectives.engine import Plan, align_sizes, cost_options, size_note
from trnsim.collectives.ops import get_op
from trnsim.collectives.routing import Router, StepRoute, busiest_edge, routing_work
from trnsim.collectives.schedule import Context, NotApplicable, Pipeline, Step
from trnsim.collectives.traffic import check_traffic
from trnsim.errors import NotApplicableError, UsageError
from trnsim.topology.graph import Topology


@dataclass
class ConcurrentRow:
    """One size: the run with every group sharing the links, and the same run with nothing shared."""

    bytes: int
    count: int
    algorithm: str
    time_us: float  # the slowest group's time with every group running (mean over hash seeds)
    busbw_gbps: float  # that group's busbw
    alone_time_us: float  # the same with every group on its own links (each as if the others idled)
    slowdown: float  # time_us / alone_time_us: what sharing links costs
    slowest: int  # index of the slowest group
    group_times_us: list[float] = field(default_factory=list)
    bottleneck: str = "-"  # the link class limiting the slowest group under sharing
    requested_bytes: int = 0  # the size asked for; ``bytes`` is what nccl-tests runs for it
    groups: int = 1  # how many groups ran at once
    bound_busbw_gbps: float = 0.0  # the slowest group's lower bound alone (sharing only slows it)
    efficiency: float = 0.0  # busbw_gbps / bound_busbw_gbps
    worst_time_us: float = 0.0  # under hash routing the slowest seed's time, else time_us

    def as_dict(self) -> dict:
        """The row for CSV and JSON: every field but the per-group times."""
        return {key: value for key, value in self.__dict__.items() if key != "group_times_us"}


@dataclass
class ConcurrentEvaluation:
    """All results of a concurrent run."""

    sku: str
    op: str
    groups: list[list[str]]
    rows: list[ConcurrentRow]
    by_algorithm: dict[str, list[ConcurrentRow]]
    skipped: dict[str, str]
    link_loads: dict[str, np.ndarray]  # per algorithm: bytes per directed edge per byte, summed over steps
    dropped: list[int] = field(default_factory=list)  # requested sizes that align to 0 bytes

    @property
    def ranks(self) -> int:
        """Ranks per group."""
        return len(self.groups[0])

    def alignment_note(self) -> str | None:
        """One line saying which sizes were aligned or left out, or None when all ran as asked."""
        return size_note(self.rows, self.dropped)


def _flat(schedule: list) -> list[Step]:
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


def _plan(
    name: str, schedule: list, routes: list[StepRoute], links: tuple, alpha_ns: float, chunking, fixed_us
):
    """A plan of ``schedule`` costed with the given routes (in the order of :func:`_flat`);
    ``links`` is (bandwidth in B/s, class) per directed edge."""
    by_step = dict(zip(map(id, _flat(schedule)), routes, strict=True))
    bw_bps, edge_class = links
    items = []
    for entry in schedule:
        if isinstance(entry, Pipeline):
            chains = [
                [[(step, by_step[id(step)]) for step in stage] for stage in chain] for chain in entry.chains
            ]
            items.append(PipelineCost(chains, alpha_ns, bw_bps, *chunking))
        else:
            items.append(StepCost(entry, by_step[id(entry)], alpha_ns))
    return Plan(name, items, schedule, edge_class, bw_bps, fixed_us=fixed_us)


def _moved(route: StepRoute, where: np.ndarray) -> StepRoute:
    """A route carried along a translation: the load of edge ``e`` moves to edge ``where[e]``."""
    loads = np.empty_like(route.link_loads)
    loads[where] = route.link_loads
    return replace(route, link_loads=loads)


def _translations(topology: Topology, groups: list[list[str]]) -> list:
    """For each group: ``None`` when it must be scheduled and routed itself, else the index of an
    earlier group it is a translate of (member by member) and where each directed edge goes."""
    from trnsim.routing.policy import routing_of
    from trnsim.routing.shortest import graph_arrays
    from trnsim.routing.symmetry import torus_symmetry

    out: list = [None] * len(groups)
    routing = routing_of(topology.spec)
    symmetry = torus_symmetry(topology) if routing.policy == "ecmp" and routing.relay else None
    if symmetry is None or len(groups) < 2:
        return out
    arrays = graph_arrays(topology)
    rank = topology.rank_of
    first = np.asarray([rank[c] for c in groups[0]])
    sizes = np.asarray(symmetry.sizes)
    strides = np.asarray(symmetry.strides)
    coords = symmetry.coords.astype(np.int64)
    # a directed edge is its tail and its orbit (axis and direction): a translation keeps the orbit
    orbit = symmetry.edge_orbits(arrays.src, arrays.dst)
    table = np.full((arrays.n_nodes, int(orbit.max()) + 1), -1, dtype=np.int64)
    table[arrays.src, orbit] = np.arange(len(orbit))
    if np.count_nonzero(table >= 0) != len(orbit):
        return out  # two links of one orbit at a chip: the table cannot tell them apart
    for k in range(1, len(groups)):
        members = np.asarray([rank[c] for c in groups[k]])
        offset = (coords[members[0]] - coords[first[0]]) % sizes
        if not np.array_equal(((coords[first] + offset) % sizes) @ strides, members):
            continue
        tails = ((coords[arrays.src] + offset) % sizes) @ strides
        out[k] = (0, table[tails, orbit])
    return out


def _shared(route: StepRoute, total: np.ndarray, bw_bps: np.ndarray, edge_cls, edge) -> StepRoute:
    """A group's step on shared links: every link it uses carries everyone's bytes."""
    loads = np.where(route.link_loads > 0, total, 0.0)
    if not np.any(loads > 0):
        return route
    seconds = loads / bw_bps
    busiest = busiest_edge(seconds)
    return replace(
        route, seconds_per_byte=float(seconds[busiest]), bottleneck=edge_cls[edge[busiest]], link_loads=loads
    )


def _times(plans: list[Plan], nbytes: int) -> list[float]:
    """Each plan's time, costed once per distinct plan (translates share their original's)."""
    known: dict[int, float] = {}
    for plan in plans:
        if id(plan) not in known:
            known[id(plan)] = plan.time_us(nbytes)
    return [known[id(plan)] for plan in plans]


def _costed(name, schedules, routes, images, arrays, links, alpha_ns, chunking, fixed_us):
    """Each group's plan on the shared loads of its links, and the loads summed over the groups.

    ``routes[k]`` is None for a translate of an earlier group; it is filled in (moved along the
    translation) where that group's costing cannot be reused.
    """
    bw_bps = links[0]
    # every step's loads summed over the groups (directed edges x steps); a translate adds its
    # original's loads moved, only on the few edges its original uses
    own = [None if r is None else np.stack([route.link_loads for route in r], axis=1) for r in routes]
    used = [None if loads is None else np.flatnonzero(loads.any(axis=1)) for loads in own]
    by_edge = np.zeros_like(own[0])
    for k, loads in enumerate(own):
        if loads is None:
            original, where = images[k]
            by_edge[where[used[original]]] += own[original][used[original]]
        else:
            by_edge += loads
    totals = np.ascontiguousarray(by_edge.T)  # steps x directed edges
    # random projections tell whether the shared loads look the same from a translate as from its
    # original in every step (equal loads give equal sums; unequal ones almost surely do not)
    rng = np.random.default_rng(0)
    probe = rng.random(len(by_edge))
    seen = rng.random(len(totals)) @ totals  # a random mix of the steps
    seen_from_original = seen @ probe
    shared: list[Plan] = []
    for k, schedule in enumerate(schedules):
        if images[k] is not None:
            original, where = images[k]
            # the shared loads look the same from here as from the original: the same plan times
            if np.isclose(seen[where] @ probe, seen_from_original, rtol=1e-9, atol=0.0):
                shared.append(shared[original])
                continue
            routes[k] = [_moved(route, where) for route in routes[original]]
        mine = [
            _shared(route, total, bw_bps, arrays.edge_cls, arrays.edge)
            for route, total in zip(routes[k], totals, strict=True)
        ]
        shared.append(_plan(name, schedule, mine, links, alpha_ns, chunking, fixed_us))
    return shared, by_edge


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

    @property
    def routed(self) -> list[int]:
        """The groups routed themselves (the others are translates of one of them)."""
        return [k for k, image in enumerate(self.images) if image is None]

    @property
    def work(self) -> tuple[int, int]:
        """(routing work, shared-link work): see :func:`check_work`."""
        topology, routed = self.topology, self.routed
        routing = self.realisations * sum(routing_work(topology, self.groups[k]) for k in routed)
        steps = sum(len(_flat(schedules[0])) for schedules in self.schedules.values())
        # every routed group keeps each step's load on every directed link, and the run keeps their
        # sum twice (by edge and by step); a translate's loads are its original's moved
        shared = self.realisations * steps * 2 * len(topology.links) * (len(routed) + 2)
        return routing, shared


def check_work(prepared: list[Prepared], subject: str) -> None:
    """Refuse runs whose routing or shared-link work passes its limit, before any of it is done.

    Routing work is what :func:`~trnsim.collectives.routing.routing_work` counts for each routed
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
        + (f" ({routed:,} routed, {translates:,} translates of them)" if translates else "")
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
) -> Prepared:
    """Check the groups and schedule every algorithm for every group, routing nothing yet."""
    from trnsim.routing.policy import routing_of

    op = get_op(op_name)
    if len(groups) < 1 or any(len(group) < 2 for group in groups):
        raise UsageError("every group needs at least two ranks")
    if len({len(group) for group in groups}) != 1:
        raise UsageError("concurrent groups must be of one size (their schedules run in lockstep)")
    seen: set[str] = set()
    for group in groups:
        if seen & set(group):
            raise UsageError(f"groups must be disjoint: {sorted(seen & set(group))[0]} is in two of them")
        seen |= set(group)
    p = len(groups[0])
    check_traffic(op.name, traffic, p)
    aligned, dropped = align_sizes(op, sizes, p, dtype)
    images = _translations(topology, groups)  # per group: (its original's index, directed-edge map) or None
    names = (
        [name for name, a in algorithms.REGISTRY.items() if op.name in a.ops]
        if algo == "auto"
        else [algorithms.find(algo).name]
    )
    schedules, skipped = {}, {}
    for name in names:
        try:
            mine = []
            for k, group in enumerate(groups):
                if images[k] is None:
                    context = Context(topology.planner, group, traffic)
                    mine.append(algorithms.find(name).schedule(context, op.name))
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
    realisations = routing_of(topology.spec).realisations
    return Prepared(topology, op, groups, traffic, aligned, dropped, images, schedules, skipped, realisations)


def evaluate_concurrent(
    topology: Topology,
    op_name: str,
    sizes: list[int],
    groups: list[list[str]],
    algo: str = "auto",
    dtype: str = "float",
    alpha_us: float | None = None,
    max_chunks: int | None = None,
    min_chunk_bytes: int | None = None,
    traffic: np.ndarray | None = None,
    bounds: bool = True,
) -> ConcurrentEvaluation:
    """Model ``op_name`` run by every group at once, for every size.

    Parameters
    ----------
    groups : list of list of str
        Disjoint groups of equal size (chip names in rank order).
    algo : str
        An algorithm name or ``auto`` (per size, the one whose slowest group is fastest).
    traffic : numpy.ndarray, optional
        A skewed all-to-all's traffic matrix, the same for every group (by position in the group).
    bounds : bool
        Compute the slowest group's lower bound (``bound_busbw_gbps`` and ``efficiency`` stay 0
        without it: a caller that shows neither saves the optimum's work).

    Under hash routing every seed routes every group; a size's time is the mean over the seeds of
    the slowest group's time, and ``worst_time_us`` the slowest seed's. A run whose work passes
    the limits is refused before any routing (:func:`check_work`).
    """
    prepared = prepare_concurrent(topology, op_name, sizes, groups, algo, dtype, traffic)
    check_work([prepared], describe_groups(topology, groups, len(prepared.routed)))
    return run_concurrent(prepared, alpha_us, max_chunks, min_chunk_bytes, bounds)


def run_concurrent(
    prepared: Prepared,
    alpha_us: float | None = None,
    max_chunks: int | None = None,
    min_chunk_bytes: int | None = None,
    bounds: bool = True,
) -> ConcurrentEvaluation:
    """Route and cost a prepared run (see :func:`evaluate_concurrent`)."""
    topology, op, groups, traffic = prepared.topology, prepared.op, prepared.groups, prepared.traffic
    images, aligned, p = prepared.images, prepared.aligned, len(prepared.groups[0])
    alpha_ns, chunking = cost_options(topology, alpha_us, max_chunks, min_chunk_bytes)
    fixed_us = topology.spec.latency.collective_ns / 1e3
    base = [Router(topology, group) if images[k] is None else None for k, group in enumerate(groups)]
    # one list of routers per hash seed (one list in all unless routing is hashed)
    seeded = [base] + [
        [None if router is None else router.with_seed(seed) for router in base]
        for seed in range(1, base[0].routing.realisations)
    ]
    arrays = base[0].arrays  # the first group is always routed
    bw_bps = arrays.bw_gbps * 1e9
    links = (bw_bps, [arrays.edge_cls[e] for e in arrays.edge])
    found: dict[int, Bound] = {}  # the groups that turn out slowest, each one's bound alone

    def bound_of(k: int) -> Bound:
        if k not in found:
            router = base[k] or base[images[k][0]]  # a translate is as far apart as its original
            found[k] = lower_bound(topology, groups[k], op, alpha_ns, router.max_links, traffic)
        return found[k]

    by_algorithm, skipped, link_loads = {}, dict(prepared.skipped), {}
    for name, schedules in prepared.schedules.items():
        runs = []  # per seed: each group's routes and its plan on the shared loads
        for routers in seeded:
            # a translated group's routes are moved only when needed (None)
            routes = [
                None if router is None else router.route_all(_flat(schedule))
                for router, schedule in zip(routers, schedules, strict=True)
            ]
            shared, by_edge = _costed(
                name, schedules, routes, images, arrays, links, alpha_ns, chunking, fixed_us
            )
            if not runs:
                link_loads[name] = by_edge @ np.asarray([s.repeat for s in _flat(schedules[0])], dtype=float)
            runs.append((routes, shared))
        # each group by itself, seed by seed: a translate's plan alone is its original's
        alone_runs = []
        for routes, _ in runs:
            plans: list[Plan] = []
            for k, schedule in enumerate(schedules):
                if routes[k] is None:
                    plans.append(plans[images[k][0]])
                else:
                    plans.append(_plan(name, schedule, routes[k], links, alpha_ns, chunking, fixed_us))
            alone_runs.append(plans)
        rows = []
        for requested, nbytes, count in aligned:
            times = np.array([_times(shared, nbytes) for _, shared in runs])  # seeds x groups
            group_times = times.mean(axis=0)
            slowest = int(np.argmax(group_times))
            time_us = float(times.max(axis=1).mean())
            # the same statistic with no link shared: the run waits for its slowest group either way
            alone_us = float(np.array([_times(plans, nbytes) for plans in alone_runs]).max(axis=1).mean())
            factor = op.busbw_factor(p)
            busbw = nbytes / (time_us * 1e3) * factor
            bound_us = bound_of(slowest).time_us(nbytes) if bounds else 0.0
            bound_busbw = nbytes / (bound_us * 1e3) * factor if bound_us > 0 else 0.0
            rows.append(
                ConcurrentRow(
                    bytes=nbytes,
                    count=count,
                    algorithm=name,
                    time_us=time_us,
                    busbw_gbps=busbw,
                    alone_time_us=alone_us,
                    slowdown=time_us / alone_us,
                    slowest=slowest,
                    group_times_us=[float(t) for t in group_times],
                    bottleneck=runs[0][1][slowest].bottleneck,
                    requested_bytes=requested,
                    groups=len(groups),
                    bound_busbw_gbps=bound_busbw,
                    efficiency=busbw / bound_busbw if bound_busbw > 0 else 0.0,
                    worst_time_us=float(times.max()),
                )
            )
        by_algorithm[name] = rows
    if not by_algorithm:
        raise UsageError(f"no algorithm applies to {op.name} on these groups: {'; '.join(skipped.values())}")
    best = [
        min((rows[i] for rows in by_algorithm.values()), key=lambda r: r.time_us) for i in range(len(aligned))
    ]
    return ConcurrentEvaluation(
        topology.name, op.name, groups, best, by_algorithm, skipped, link_loads, prepared.dropped
    )
