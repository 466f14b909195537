"""A concurrent run routed and costed, size by size: with links shared, and each group alone.

The concurrent run lasts as long as its slowest group. Under hash routing each seed routes every
group (flows collide across groups as within one); the time is the mean over the seeds of the
slowest group's, and the worst seed's is kept. The time "alone" is the same statistic with each
group costed on its own loads, so the slowdown is what sharing links costs (not the wait for each
seed's unluckiest group, which both include).
"""

from dataclasses import dataclass

import numpy as np

from trnsim.collectives.schedule import Pipeline
from trnsim.errors import UsageError
from trnsim.model.bounds import Bound, lower_bound
from trnsim.model.concurrent.prepare import Prepared, check_work, describe_groups, flat, prepare_concurrent
from trnsim.model.concurrent.results import ConcurrentEvaluation, ConcurrentRow
from trnsim.model.concurrent.shared import plan_of, plan_times, shared_plans
from trnsim.model.cost import cost_options
from trnsim.model.plan import Plan
from trnsim.model.router import Router
from trnsim.model.rows import algbw_gbps, busbw_gbps
from trnsim.topology.arrays import GraphArrays
from trnsim.topology.graph import Topology


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
    arguments=None,
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
    arguments : Arguments, optional
        The op's root, pairs or counts, the same for every group by position.

    Under hash routing every seed routes every group; a size's time is the mean over the seeds of
    the slowest group's time, and ``worst_time_us`` the slowest seed's. A run whose work passes
    the limits is refused before any routing (:func:`check_work`).

    Examples
    --------
    Pairs on a ring of 4 chips (no step latency). Neighbours use their own link, so running two
    such pairs at once is no slower than each alone; opposite chips split their bytes over both ways
    round, so two such pairs share every link and take twice as long together.

    >>> from trnsim.topology.synthetic import ring_topology
    >>> ring = ring_topology(4, step_ns=0.0)
    >>> a, b, c, d = ring.chips
    >>> evaluate_concurrent(ring, "allgather", [1 << 20], [[a, b], [c, d]], algo="ring").rows[0].slowdown
    1.0
    >>> evaluate_concurrent(ring, "allgather", [1 << 20], [[a, c], [b, d]], algo="ring").rows[0].slowdown
    2.0
    """
    prepared = prepare_concurrent(topology, op_name, sizes, groups, algo, dtype, traffic, arguments)
    check_work([prepared], describe_groups(topology, groups, len(prepared.routed)))
    return run_concurrent(prepared, alpha_us, max_chunks, min_chunk_bytes, bounds)


@dataclass(frozen=True)
class _Costing:
    """What costing a plan needs besides its schedule and routes."""

    images: list  # per group: (its original's index, directed-edge map), or None
    arrays: GraphArrays
    links: tuple  # (bandwidth in B/s, class) per directed edge
    alpha_ns: float
    chunking: tuple
    fixed_us: float


def run_concurrent(
    prepared: Prepared,
    alpha_us: float | None = None,
    max_chunks: int | None = None,
    min_chunk_bytes: int | None = None,
    bounds: bool = True,
) -> ConcurrentEvaluation:
    """Route and cost a prepared run (see :func:`evaluate_concurrent`)."""
    topology, op, groups, traffic = prepared.topology, prepared.op, prepared.groups, prepared.traffic
    images = prepared.images
    alpha_ns, alpha_us, chunking = cost_options(topology, alpha_us, max_chunks, min_chunk_bytes)
    base = [Router(topology, group) if images[k] is None else None for k, group in enumerate(groups)]
    # one list of routers per hash seed (one list in all unless routing is hashed)
    seeded = [base] + [
        [None if router is None else router.with_seed(seed) for router in base]
        for seed in range(1, base[0].routing.realisations)
    ]
    arrays = base[0].arrays  # the first group is always routed
    links = (arrays.bw_gbps * 1e9, [arrays.edge_cls[e] for e in arrays.edge])
    costing = _Costing(images, arrays, links, alpha_ns, chunking, topology.spec.latency.collective_ns / 1e3)
    found: dict[int, Bound] = {}  # the groups that turn out slowest, each one's bound alone

    def bound_of(k: int) -> Bound:
        if k not in found:
            router = base[k] or base[images[k][0]]  # a translate is as far apart as its original
            found[k] = lower_bound(
                topology,
                groups[k],
                op,
                alpha_ns,
                router.max_links,
                traffic,
                root=prepared.root,
                blocks=prepared.blocks,
            )
        return found[k]

    by_algorithm, skipped, link_loads = {}, dict(prepared.skipped), {}
    floors = {name: _floor_us(schedules, costing) for name, schedules in prepared.schedules.items()}
    # cheapest floors first: an algorithm whose floor exceeds the best time found at every size
    # cannot be the fastest, and is not routed (its row would never be shown)
    for name in sorted(floors, key=floors.__getitem__):
        if by_algorithm and all(
            floors[name] * (1 - 1e-9) > min(rows[i].time_us for rows in by_algorithm.values())
            for i in range(len(prepared.aligned))
        ):
            continue
        schedules = prepared.schedules[name]
        runs, link_loads[name] = _shared_runs(name, schedules, seeded, costing)
        alone_runs = [_alone(name, schedules, routes, costing) for routes, _ in runs]
        by_algorithm[name] = [
            _row(prepared, name, runs, alone_runs, size, bound_of if bounds else None)
            for size in prepared.aligned
        ]
    by_algorithm = {name: by_algorithm[name] for name in prepared.schedules if name in by_algorithm}
    if not by_algorithm:
        raise UsageError(f"no algorithm applies to {op.name} on these groups: {'; '.join(skipped.values())}")
    best = [
        min((rows[i] for rows in by_algorithm.values()), key=lambda r: r.time_us)
        for i in range(len(prepared.aligned))
    ]
    return ConcurrentEvaluation(
        sku=topology.name,
        op=op.name,
        rows=best,
        dropped=prepared.dropped,
        alpha_us=alpha_us,
        groups=groups,
        by_algorithm=by_algorithm,
        skipped=skipped,
        link_loads=link_loads,
    )


def _floor_us(schedules: list, costing: _Costing) -> float:
    """The least time any group can take on these schedules, at any size and however links are
    shared: the fixed cost and every step's alpha (each step's time adds its path latency and its
    busiest link's time to it, in the order :meth:`Plan.time_us` adds them); 0 with a pipeline."""
    schedule = schedules[0]  # lockstep: every group's schedule has this shape
    if any(isinstance(entry, Pipeline) for entry in schedule):
        return 0.0
    return costing.fixed_us + sum(step.repeat * (costing.alpha_ns / 1e3) for step in schedule)


def _shared_runs(name: str, schedules: list, seeded: list, costing: _Costing):
    """Per hash seed, each group's routes and its plan on the shared loads; and the first seed's
    loads per directed edge, summed over the steps (times their repeats) and the groups."""
    c = costing
    runs = []
    link_loads = None
    for routers in seeded:
        # a translated group's routes are moved only when needed (None)
        routes = [
            None if router is None else router.route_all(flat(schedule))
            for router, schedule in zip(routers, schedules, strict=True)
        ]
        shared, by_edge = shared_plans(
            name, schedules, routes, c.images, c.arrays, c.links, c.alpha_ns, c.chunking, c.fixed_us
        )
        if not runs:
            link_loads = by_edge @ np.asarray([s.repeat for s in flat(schedules[0])], dtype=float)
        runs.append((routes, shared))
    return runs, link_loads


def _alone(name: str, schedules: list, routes: list, costing: _Costing) -> list[Plan]:
    """Each group by itself (one seed's routes): a translate's plan alone is its original's."""
    c = costing
    plans: list[Plan] = []
    for k, schedule in enumerate(schedules):
        if routes[k] is None:
            plans.append(plans[c.images[k][0]])
        else:
            plans.append(plan_of(name, schedule, routes[k], c.links, c.alpha_ns, c.chunking, c.fixed_us))
    return plans


def _row(prepared: Prepared, name: str, runs, alone_runs, size: tuple, bound_of) -> ConcurrentRow:
    """One size: the slowest group's time shared and alone (means over the seeds), and its bound
    alone (``bound_of`` None: no bound, zeros)."""
    requested, nbytes, count = size
    op, p = prepared.op, len(prepared.groups[0])
    times = np.array([plan_times(shared, nbytes) for _, shared in runs])  # seeds x groups
    group_times = times.mean(axis=0)
    slowest = int(np.argmax(group_times))
    time_us = float(times.max(axis=1).mean())
    # the same statistic with no link shared: the run waits for its slowest group either way
    alone_us = float(np.array([plan_times(plans, nbytes) for plans in alone_runs]).max(axis=1).mean())
    bound_us = bound_of(slowest).time_us(nbytes) if bound_of is not None else 0.0
    busbw, bound_busbw = busbw_gbps(op, p, nbytes, time_us), busbw_gbps(op, p, nbytes, bound_us)
    return ConcurrentRow(
        bytes=nbytes,
        count=count,
        type=prepared.dtype,
        time_us=time_us,
        algbw_gbps=algbw_gbps(nbytes, time_us),
        busbw_gbps=busbw,
        algorithm=name,
        requested_bytes=requested,
        bound_busbw_gbps=bound_busbw,
        efficiency=busbw / bound_busbw if bound_busbw > 0 else 0.0,
        bottleneck=runs[0][1][slowest].bottleneck,
        alone_time_us=alone_us,
        slowdown=time_us / alone_us,
        slowest=slowest,
        group_times_us=[float(t) for t in group_times],
        group_busbw_gbps=[busbw_gbps(op, p, nbytes, float(t)) for t in group_times],
        groups=len(prepared.groups),
        worst_time_us=float(times.max()),
    )
