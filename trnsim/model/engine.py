"""Evaluate collectives: schedule, route, cost and bound, for every size of a sweep.

Step time = alpha (per step) + the step's largest path latency + bytes on its busiest directed link /
that link's bandwidth; a collective's time is the sum over its steps, and a pipeline's is costed
round by round at its best chunk count (:mod:`trnsim.model.cost`). Schedules and routes do not
depend on the size, so each algorithm is routed once and then costed at every size.
"""

from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from trnsim import limits
from trnsim.collectives import algorithms
from trnsim.collectives.algorithms import Context, NotApplicable, Pipeline, Step
from trnsim.collectives.ops import Op, dtype_size, get_op
from trnsim.collectives.traffic import check_traffic
from trnsim.errors import NotApplicableError, UsageError
from trnsim.model.bounds import Bound, lower_bound
from trnsim.model.cost import MAX_CHUNKS, MIN_CHUNK_BYTES, PipelineCost, StepCost
from trnsim.model.router import Router, busiest_classes
from trnsim.routing.paths import routing_work
from trnsim.routing.policy import RoutingPolicy
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

    def utilisation(self, size: float) -> dict[str, float]:
        """Per link class: the mean share of the collective's time its links are busy (links it uses)."""
        time_s = self.time_us(size) / 1e6
        if time_s <= 0:
            return {}
        return {cls: round(mean * size / time_s, 4) for cls, (mean, _) in self._class_busy.items()}


@dataclass
class Row:
    """One line of a results table (units in the names; GB = 1e9 bytes)."""

    bytes: int
    count: int
    type: str
    time_us: float
    algbw_gbps: float
    busbw_gbps: float
    algorithm: str
    bound_busbw_gbps: float  # at the links' effective rates
    efficiency: float
    max_hops: int
    bottleneck: str
    bound_limited_by: str
    peak_busbw_gbps: float  # the members' own link bandwidth, in busbw terms (the injection bound)
    requested_bytes: int  # the size asked for; ``bytes`` is what nccl-tests runs for it (see Op.align)
    chunks: int = 1  # pipeline chunks at this size (1: not pipelined)
    raw_bound_busbw_gbps: float = 0.0  # the bound at raw link rates (no protocol overhead)
    worst_time_us: float = 0.0  # under hash routing the slowest seed's time, else time_us
    link_utilisation: dict[str, float] = field(default_factory=dict)  # class -> mean busy share

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def size_note(rows, dropped: list[int]) -> str | None:
    """One line saying which sizes were aligned or left out, or None when all ran as asked."""
    moved = [row for row in rows if row.bytes != row.requested_bytes]
    if not moved and not dropped:
        return None
    parts = []
    if moved:
        parts.append(
            f"{len(moved)} size{'s' if len(moved) != 1 else ''} rounded down as nccl-tests does "
            f"(e.g. {moved[0].requested_bytes} -> {moved[0].bytes} B)"
        )
    if dropped:
        shown = ", ".join(str(size) for size in dropped[:4]) + (", ..." if len(dropped) > 4 else "")
        parts.append(f"left out {shown} B (0 bytes once aligned)")
    return "sizes: " + "; ".join(parts)


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


@dataclass
class Evaluation:
    """All results of one ``trnsim collective`` run."""

    sku: str
    op: str
    group: list[str]
    rows: list[Row]
    by_algorithm: dict[str, list[Row]]
    skipped: dict[str, str] = field(default_factory=dict)
    bound: Bound | None = None
    dropped: list[int] = field(default_factory=list)  # requested sizes that align to 0 bytes
    plans: dict[str, Plan] = field(default_factory=dict)  # each evaluated algorithm's routed schedule
    routing: RoutingPolicy = field(default_factory=RoutingPolicy)  # the policy the flows were routed by

    def alignment_note(self) -> str | None:
        """One line saying which sizes were aligned or left out, or None when all ran as asked."""
        return size_note(self.rows, self.dropped)

    def busiest_links(self) -> "LinkHeat":
        """What a heatmap of this run shows: at its largest size, the chosen algorithm's busiest step
        and each directed link's busy time in it (per byte; :meth:`Plan.busiest_step`)."""
        row = max(self.rows, key=lambda r: r.bytes)
        plan = self.plans[row.algorithm]
        index, busy = plan.busiest_step()
        entry = plan.schedule[index]
        label = entry.label or ("pipelined" if isinstance(entry, Pipeline) else "")
        routing = self.routing.label
        if plan.others:  # hashed: each seed collides differently; the picture is one of them
            routing += f" (seed 0 of {len(plan.others) + 1}: one realisation; the table averages them)"
        return LinkHeat(
            row.algorithm, row.bytes, index, len(plan.items), label, busy, routing, plan.bottleneck
        )

    @property
    def ranks(self) -> int:
        return len(self.group)

    @property
    def avg_busbw_gbps(self) -> float:
        return sum(r.busbw_gbps for r in self.rows) / len(self.rows) if self.rows else 0.0


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
    return Plan(
        algo.name, items, schedule, edge_class, bw_bps, fixed_us=topology.spec.latency.collective_ns / 1e3
    )


def _row(
    plan: Plan, op: Op, requested: int, size: int, count: int, dtype: str, p: int, bound: Bound, raw: Bound
) -> Row:
    time_us = plan.time_us(size)
    factor = op.busbw_factor(p)
    algbw = size / (time_us * 1e3) if time_us > 0 else 0.0
    bound_us = bound.time_us(size)
    bound_busbw = size / (bound_us * 1e3) * factor if bound_us > 0 else 0.0
    return Row(
        bytes=size,
        count=count,
        type=dtype,
        time_us=time_us,
        algbw_gbps=algbw,
        busbw_gbps=algbw * factor,
        algorithm=plan.algorithm,
        bound_busbw_gbps=bound_busbw,
        efficiency=bound_us / time_us if time_us > 0 else 0.0,
        max_hops=max(plan.max_links - 1, 0),
        bottleneck=plan.bottleneck,
        bound_limited_by=bound.limit_at(size),
        peak_busbw_gbps=factor / bound.peak_seconds_per_byte / 1e9 if factor else 0.0,
        requested_bytes=requested,
        chunks=plan.chunks(size),
        raw_bound_busbw_gbps=size / (raw.time_us(size) * 1e3) * factor if raw.time_us(size) > 0 else 0.0,
        worst_time_us=plan.worst_time_us(size),
        link_utilisation=plan.utilisation(size),
    )


def _raw_bound(
    topology: Topology,
    group: list[str],
    op: Op,
    alpha_ns: float,
    max_links: int,
    bound: Bound,
    traffic=None,
    exact_bounds: bool = True,
) -> Bound:
    """The bound at raw link rates: the effective one scaled when every link shares one efficiency."""
    share = topology.uniform_efficiency
    if share is not None:
        return replace(
            bound,
            seconds_per_byte=bound.seconds_per_byte * share,
            peak_seconds_per_byte=bound.peak_seconds_per_byte * share,
        )
    return lower_bound(topology.at_raw_rates(), group, op, alpha_ns, max_links, traffic, exact_bounds)


def cost_options(
    topology: Topology, alpha_us: float | None, max_chunks: int | None, min_chunk_bytes: int | None
) -> tuple[float, tuple[int, int]]:
    """Checked ``--alpha-us``, ``--max-chunks`` and ``--min-chunk``: alpha in ns and the chunking."""
    from trnsim.units import check_finite

    check_finite("--alpha-us", alpha_us, minimum=0, maximum=1e6)
    if max_chunks is not None and not 1 <= max_chunks <= 1_000_000:
        raise UsageError(f"--max-chunks: expected a whole number from 1 to 1,000,000, got {max_chunks}")
    if min_chunk_bytes is not None and not 1 <= min_chunk_bytes <= 1 << 50:
        raise UsageError(f"--min-chunk: expected 1 B to 1 PiB, got {min_chunk_bytes}")
    alpha_ns = topology.spec.latency.step_ns if alpha_us is None else alpha_us * 1e3
    return alpha_ns, (max_chunks or MAX_CHUNKS, min_chunk_bytes or MIN_CHUNK_BYTES)


def align_sizes(op: Op, sizes: list[int], p: int, dtype: str) -> tuple[list[tuple[int, int, int]], list[int]]:
    """Sizes as nccl-tests runs them on ``p`` ranks: ``(requested, bytes, count)`` for each, and the
    sizes left out.

    Whole elements, and whole 16-byte blocks per rank where the op splits the buffer by rank; a size
    that aligns to nothing moves nothing and is left out (an error when every size is).
    """
    element = dtype_size(dtype)
    aligned, dropped = [], []
    for size in sizes:
        nbytes, count = op.align(size, p, element)
        if nbytes:
            aligned.append((size, nbytes, count))
        else:
            dropped.append(size)
    if not aligned:
        smallest = element if op.name == "allreduce" else p * max(16, element)
        raise UsageError(
            f"every size is below the smallest {op.name} nccl-tests runs on {p} ranks of "
            f"{dtype.strip().lower()} ({smallest} bytes): give larger sizes"
        )
    return aligned, dropped


def evaluate(
    topology: Topology,
    op_name: str,
    sizes: list[int],
    group: list[str],
    algo: str = "auto",
    dtype: str = "float",
    alpha_us: float | None = None,
    max_chunks: int | None = None,
    min_chunk_bytes: int | None = None,
    traffic: np.ndarray | None = None,
    exact_bounds: bool = True,
) -> Evaluation:
    """Model ``op_name`` on ``group`` of ``topology`` for every size.

    Parameters
    ----------
    algo : str
        An algorithm name, ``auto`` (the fastest per size) or ``all`` (every applicable one; the
        rows are then the fastest per size and ``by_algorithm`` holds each one's rows).
    alpha_us : float, optional
        Per-step alpha overriding the SKU file's ``latency.step_ns``.
    max_chunks, min_chunk_bytes : int, optional
        Pipelining limits overriding :data:`trnsim.model.cost.MAX_CHUNKS` and
        :data:`~trnsim.model.cost.MIN_CHUNK_BYTES`.
    traffic : numpy.ndarray, optional
        A skewed all-to-all's ``p x p`` traffic matrix (:mod:`trnsim.collectives.traffic`).
    exact_bounds : bool
        Compute the exact optimum for the bound (False: injection and natural cuts only, cheaper).

    Examples
    --------
    Four chips joined pairwise by 100 GB/s, 1 us per step: a ring all-gather of 1 MiB is three
    steps of a quarter of it over one link each, against a bound of a chip's 300 GB/s.

    >>> from trnsim.topology.synthetic import complete_topology
    >>> square = complete_topology(4, bw_gbps=100.0)
    >>> row = evaluate(square, "allgather", [1 << 20], square.chips, algo="ring").rows[0]
    >>> round(row.time_us, 6), round(3 * (1 + (1 << 18) / 100e3), 6)  # 3 x (alpha + S/4 / B)
    (10.86432, 10.86432)
    >>> round(row.busbw_gbps, 2), round(row.bound_busbw_gbps, 2), row.bound_limited_by, row.max_hops
    (72.39, 300.0, 'injection (c0)', 0)
    """
    op = get_op(op_name)
    check_traffic(op.name, traffic, len(group))
    dtype = dtype.strip().lower()  # names are case-insensitive; rows and baselines carry one spelling
    alpha_ns, chunking = cost_options(topology, alpha_us, max_chunks, min_chunk_bytes)
    limits.ROUTING.check(
        routing_work(topology, group),
        f"{topology.where}: a group of {len(group):,} chips on {len(topology.nodes):,} devices needs",
    )
    aligned, dropped = align_sizes(op, sizes, len(group), dtype)
    ctx = Context(topology.planner, group, traffic)  # planned on the healthy system
    router = Router(topology, group)
    routers = [router] + [router.with_seed(seed) for seed in range(1, router.routing.realisations)]
    bound = lower_bound(topology, group, op, alpha_ns, router.max_links, traffic, exact_bounds)
    raw_bound = _raw_bound(topology, group, op, alpha_ns, router.max_links, bound, traffic, exact_bounds)

    if algo in ("auto", "all"):
        names = [name for name, a in algorithms.REGISTRY.items() if op.name in a.ops]
    else:
        names = [algorithms.find(algo).name]
    plans, skipped = {}, {}
    for name in names:
        dominator = algorithms.REGISTRY[name].dominated_by
        if algo == "auto" and dominator in plans:
            skipped[name] = (
                f"never faster than {dominator} under this model (skipped by auto; see --algo all)"
            )
            continue
        try:
            plan = make_plan(topology, router, ctx, op.name, name, alpha_ns, chunking)
            plan.others = [
                make_plan(topology, r, ctx, op.name, name, alpha_ns, chunking, plan.schedule)
                for r in routers[1:]
            ]
            plans[name] = plan
        except NotApplicable as reason:
            if algo not in ("auto", "all"):
                raise NotApplicableError(
                    f"algorithm {name} does not apply to {op.name} on this group of {topology.name}: {reason}"
                ) from None
            skipped[name] = str(reason)
    if not plans:
        raise UsageError(f"no algorithm applies to {op.name} on this group")

    by_algorithm = {
        name: [_row(plan, op, *entry, dtype, len(group), bound, raw_bound) for entry in aligned]
        for name, plan in plans.items()
    }
    rows = [
        min((by_algorithm[name][i] for name in plans), key=lambda row: row.time_us)
        for i in range(len(aligned))
    ]
    return Evaluation(
        topology.name, op.name, group, rows, by_algorithm, skipped, bound, dropped, plans, router.routing
    )
