"""Each group's plan costed on shared links: in lockstep, step ``k`` of every group at once.

A link carries the sum of what every group's step ``k`` puts on it (routing is linear: each group is
routed alone and the loads add). A group's step then lasts until the busiest link *it* uses has
carried everyone's bytes: its own plan is costed on the shared loads of the links it uses. A
translate whose shared loads are also invariant under its shift is costed once.
"""

from dataclasses import replace

import numpy as np

from trnsim.collectives.schedule import Pipeline
from trnsim.model.busiest import busiest_edge
from trnsim.model.concurrent.prepare import flat
from trnsim.model.concurrent.translates import Carried, moved
from trnsim.model.cost import PipelineCost, StepCost
from trnsim.model.plan import Plan
from trnsim.model.router import StepRoute


def plan_of(
    name: str, schedule: list, routes: list[StepRoute], links: tuple, alpha_ns: float, chunking, fixed_us
):
    """A plan of ``schedule`` costed with the given routes (in the order of
    :func:`~trnsim.model.concurrent.prepare.flat`); ``links`` is (bandwidth in B/s, class) per
    directed edge."""
    by_step = dict(zip(map(id, flat(schedule)), routes, strict=True))
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


def _on_shared(route: StepRoute, total: np.ndarray, bw_bps: np.ndarray, edge_cls, edge) -> StepRoute:
    """A group's step on shared links: every link it uses carries everyone's bytes."""
    loads = np.where(route.link_loads > 0, total, 0.0)
    if not np.any(loads > 0):
        return route
    seconds = loads / bw_bps
    busiest = busiest_edge(seconds)
    return replace(
        route, seconds_per_byte=float(seconds[busiest]), bottleneck=edge_cls[edge[busiest]], link_loads=loads
    )


def plan_times(plans: list[Plan], nbytes: int) -> list[float]:
    """Each plan's time, costed once per distinct plan (translates share their original's)."""
    known: dict[int, float] = {}
    for plan in plans:
        if id(plan) not in known:
            known[id(plan)] = plan.time_us(nbytes)
    return [known[id(plan)] for plan in plans]


def shared_plans(name, schedules, routes, images, arrays, links, alpha_ns, chunking, fixed_us):
    """Each group's plan on the shared loads of its links, and the loads summed over the groups.

    ``routes[k]`` is None for a translate of an earlier group; it is filled in (moved along the
    translation) where that group's costing cannot be reused.
    """
    bw_bps = links[0]
    # every step's loads summed over the groups (steps x directed edges); a copy adds its
    # original's loads moved, only on the edges its original uses (each sum in the groups' order)
    own = [None if r is None else np.stack([route.link_loads for route in r]) for r in routes]
    used = [None if loads is None else np.flatnonzero(loads.any(axis=0)) for loads in own]
    totals = own[0].copy()  # the first group is always routed
    mapped = {}  # per copy: where its original's used edges go
    for k in range(1, len(own)):
        if own[k] is None:
            original, where = images[k]
            mapped[k] = where[used[original]]
            totals[:, mapped[k]] += own[original][:, used[original]]
        else:
            totals += own[k]
    by_edge = np.ascontiguousarray(totals.T)  # directed edges x steps
    if any(image is not None and not isinstance(image[1], Carried) for image in images):
        # random projections tell whether the shared loads look the same from a translate as from
        # its original in every step (equal loads give equal sums; unequal ones almost surely do not)
        rng = np.random.default_rng(0)
        probe = rng.random(len(by_edge))
        seen = rng.random(len(totals)) @ totals  # a random mix of the steps
        seen_from_original = seen @ probe
    shared: list[Plan] = []
    for k, schedule in enumerate(schedules):
        if images[k] is not None:
            original, where = images[k]
            # the shared loads look the same from here as from the original: the same plan times
            if isinstance(where, Carried):
                # exactly, on the links the group uses (all its plan reads of the shared loads)
                alike = np.array_equal(by_edge[mapped[k]], by_edge[used[original]])
            else:
                alike = np.isclose(seen[where] @ probe, seen_from_original, rtol=1e-9, atol=0.0)
            if alike:
                shared.append(shared[original])
                continue
            routes[k] = [moved(route, where) for route in routes[original]]
        mine = [
            _on_shared(route, total, bw_bps, arrays.edge_cls, arrays.edge)
            for route, total in zip(routes[k], totals, strict=True)
        ]
        shared.append(plan_of(name, schedule, mine, links, alpha_ns, chunking, fixed_us))
    return shared, by_edge
