"""A plan: one algorithm's schedule routed on a group, costed at any size.

Schedules and routes do not depend on the size, so an algorithm is scheduled and routed once
(:func:`make_plan`) and its :class:`Plan` then gives the time at every size: a fixed cost per
collective plus each item's (plain step or pipeline, :mod:`trnsim.model.cost`), the mean over the
seeds of a hashed routing. What a heatmap shows of it is a :class:`LinkHeat`.
"""

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from trnsim.collectives import algorithms
from trnsim.collectives.algorithms import Context, Pipeline, Step
from trnsim.model.busiest import busiest_classes
from trnsim.model.cost import MAX_CHUNKS, MIN_CHUNK_BYTES, PipelineCost, StepCost, check_size
from trnsim.model.router import Router
from trnsim.topology.graph import Topology


@dataclass
class Plan:
    """An algorithm's schedule routed on a group: plain steps and pipelines, run one after another."""

    algorithm: str
    items: list[StepCost | PipelineCost]
    schedule: list[Step | Pipeline]
    edge_class: list[str]  # link class of each directed edge
    bw_bps: np.ndarray  # bandwidth of each directed edge, bytes per second
    # the same schedule under other seeds of a hashed routing: times are their mean
    others: list["Plan"] = field(default_factory=list)

    fixed_us: float = 0.0  # once per collective (latency.collective_ns)
    alpha_ns: float = 0.0  # per step, as costed (an exported schedule states it)
    chunking: tuple[int, int] = (MAX_CHUNKS, MIN_CHUNK_BYTES)  # pipelines' chunk limits, as costed
    # what the algorithm was scheduled for (root, traffic, blocks): its program is built from the same
    context: Context | None = None

    def _own_time_us(self, size: float) -> float:
        return self.fixed_us + sum(item.time_us(size) for item in self.items)

    def time_us(self, size: float) -> float:
        """Total time in microseconds for a collective of ``size`` bytes (mean over hash seeds)."""
        return float(np.mean([plan._own_time_us(size) for plan in [self, *self.others]]))

    def worst_time_us(self, size: float) -> float:
        """The slowest routing's time (equal to :meth:`time_us` unless routing is hashed)."""
        return max(plan._own_time_us(size) for plan in [self, *self.others])

    def chunks(self, size: float) -> int:
        """The chunk count of the plan's pipelines at this size (1 when nothing is pipelined)."""
        return max((item.chunks(size) for item in self.items), default=1)

    @property
    def max_links(self) -> int:
        return max((item.max_links for item in self.items), default=0)

    @property
    def _busiest_index(self) -> int:
        """The first item (step or pipeline) spending the most time on bandwidth (ties within
        rounding)."""
        top = max(item.weight for item in self.items)
        return next(i for i, item in enumerate(self.items) if item.weight >= top * (1 - 1e-9))

    @cached_property
    def bottleneck(self) -> str:
        """The link class that limits the step carrying the most bandwidth time (the step a heatmap
        draws); classes whose links are equally busy there are all named: ``x=y=z``."""
        return busiest_classes(self.busiest_step()[1], self.edge_class)

    def busiest_step(self) -> tuple[int, np.ndarray]:
        """The item that spends the most time on bandwidth, and how long each directed link is busy
        in it per byte of collective size (a pipeline: its steady state, every stage busy). The
        heatmap of a run colours links by this, relative to its busiest link."""
        index = self._busiest_index
        return index, self.items[index].edge_seconds_per_byte(self.bw_bps)

    @cached_property
    def edge_busy(self) -> np.ndarray:
        """How long each directed link is busy over the whole plan, per byte of collective size."""
        return np.asarray(sum(item.edge_seconds_per_byte(self.bw_bps) for item in self.items))

    @cached_property
    def _class_busy(self) -> dict[str, tuple[float, float]]:
        busy = self.edge_busy
        out = {}
        classes = np.asarray(self.edge_class)
        for cls in dict.fromkeys(self.edge_class):
            mine = busy[classes == cls]
            used = mine[mine > 0]
            if len(used):
                out[cls] = (float(used.mean()), float(used.max()))
        return out

    def program(self, op: str):
        """The chunk-level program of this plan's algorithm (:mod:`trnsim.collectives.program`) for
        ``op`` (its :attr:`~trnsim.collectives.ops.Op.base`) on the context it was scheduled for: its
        root, traffic matrix or unequal blocks. Raises :class:`NotApplicable` where there is none."""
        from trnsim.collectives.ops import get_op

        if self.context is None:
            raise algorithms.NotApplicable("this schedule was not made by a registered algorithm")
        return algorithms.find(self.algorithm).program(self.context, get_op(op).base)

    def utilisation(self, size: float) -> dict[str, float]:
        """Per link class: the mean share of the collective's time its links are busy (links it uses)."""
        time_s = self.time_us(size) / 1e6
        if time_s <= 0:
            return {}
        return {cls: round(mean * size / time_s, 4) for cls, (mean, _) in self._class_busy.items()}


@dataclass(frozen=True)
class LinkHeat:
    """One step's link loads, for a heatmap."""

    algorithm: str
    bytes: int
    step: int  # which item of the plan (0-based)
    steps: int
    label: str
    busy: np.ndarray  # busy seconds per byte of collective size, per directed edge
    routing: str
    bottleneck: str = ""  # the class(es) of its busiest links, as the table's bottleneck column

    def describe(self) -> str:
        from trnsim.units import format_bytes

        return (
            f"{self.algorithm} at {format_bytes(self.bytes)}, busiest step {self.step + 1} of {self.steps}"
            + (f" ({self.label})" if self.label else "")
            + (f", bottleneck {self.bottleneck}" if self.bottleneck else "")
            + f", routing {self.routing}"
        )


def make_plan(
    topology: Topology,
    router: Router,
    ctx: Context,
    op: str,
    name: str,
    alpha_ns: float,
    chunking: tuple[int, int] = (MAX_CHUNKS, MIN_CHUNK_BYTES),
    schedule: list | None = None,
) -> Plan:
    """Schedule and route one algorithm (raises :class:`NotApplicable`); ``schedule`` reuses one
    already made (the same schedule routed under several hash seeds)."""
    algo = algorithms.find(name)
    if schedule is None:
        schedule = algo.schedule(ctx, op)
    plan = plan_schedule(topology, router, algo.name, schedule, alpha_ns, chunking)
    plan.context = ctx
    return plan


def plan_schedule(
    topology: Topology,
    router: Router,
    name: str,
    schedule: list[Step | Pipeline],
    alpha_ns: float,
    chunking: tuple[int, int] = (MAX_CHUNKS, MIN_CHUNK_BYTES),
) -> Plan:
    """Route and cost a schedule made elsewhere (an algorithm's, or a program's) under ``name``."""
    for entry in schedule:  # a pipeline too large to cost is refused before it is routed
        if isinstance(entry, Pipeline):
            check_size(entry.chains, 2 * len(topology.links))
    flat = [step for entry in schedule for step in (entry.steps if isinstance(entry, Pipeline) else [entry])]
    routes = dict(zip(map(id, flat), router.route_all(flat), strict=True))
    arrays = router.arrays
    bw_bps = arrays.bw_gbps * 1e9
    edge_class = [arrays.edge_cls[e] for e in arrays.edge]
    items = []
    for entry in schedule:
        if isinstance(entry, Pipeline):
            chains = [
                [[(step, routes[id(step)]) for step in stage] for stage in chain] for chain in entry.chains
            ]
            items.append(PipelineCost(chains, alpha_ns, bw_bps, *chunking))
        else:
            items.append(StepCost(entry, routes[id(entry)], alpha_ns))
    fixed_us = topology.spec.latency.collective_ns / 1e3
    return Plan(
        name, items, schedule, edge_class, bw_bps, fixed_us=fixed_us, alpha_ns=alpha_ns, chunking=chunking
    )
