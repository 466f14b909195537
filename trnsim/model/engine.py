"""Evaluate a collective on one group: schedule, route, cost and bound, for every size of a sweep.

Step time = alpha (per step) + the step's largest path latency + bytes on its busiest directed link /
that link's bandwidth; a collective's time is the sum over its steps, and a pipeline's is costed
round by round at its best chunk count (:mod:`trnsim.model.cost`). Schedules and routes do not
depend on the size, so each algorithm is routed once (:mod:`trnsim.model.plan`) and then costed at
every size. Sizes are aligned as nccl-tests runs them (:func:`align_sizes`).
"""

from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np

from trnsim import limits
from trnsim.collectives import algorithms
from trnsim.collectives.algorithms import Context, NotApplicable, Pipeline
from trnsim.collectives.arguments import Arguments, resolve
from trnsim.collectives.ops import Op, dtype_size, get_op
from trnsim.collectives.program import NETWORK, Program
from trnsim.collectives.traffic import check_traffic
from trnsim.errors import NotApplicableError, UsageError
from trnsim.model.bounds import Bound, lower_bound
from trnsim.model.cost import cost_options
from trnsim.model.plan import LinkHeat, Plan, make_plan, plan_schedule
from trnsim.model.router import Router
from trnsim.model.rows import Evaluation, Row, algbw_gbps, busbw_gbps
from trnsim.routing.paths import routing_work
from trnsim.routing.policy import RoutingPolicy
from trnsim.topology.graph import Topology


@dataclass(kw_only=True)
class GroupRow(Row):
    """One size of a collective on one group (units in the names; GB = 1e9 bytes)."""

    max_hops: int
    bound_limited_by: str
    peak_busbw_gbps: float  # the members' own link bandwidth, in busbw terms (the injection bound)
    chunks: int = 1  # pipeline chunks at this size (1: not pipelined)
    # the bound at raw link rates (no protocol overhead); None where not computed (raw_bounds=False)
    raw_bound_busbw_gbps: float | None = 0.0
    worst_time_us: float = 0.0  # under hash routing the slowest seed's time, else time_us
    link_utilisation: dict[str, float] = field(default_factory=dict)  # class -> mean busy share

    COLUMNS: ClassVar[tuple[str, ...]] = (
        "bytes",
        "count",
        "type",
        "time_us",
        "algbw_gbps",
        "busbw_gbps",
        "algorithm",
        "bound_busbw_gbps",  # at the links' effective rates
        "efficiency",
        "max_hops",
        "bottleneck",
        "bound_limited_by",
        "peak_busbw_gbps",
        "requested_bytes",
        "chunks",
        "raw_bound_busbw_gbps",
        "worst_time_us",
        "link_utilisation",
    )


@dataclass(kw_only=True)
class GroupEvaluation(Evaluation):
    """A collective on one group at every size: the fastest algorithm's rows, and each one's."""

    group: list[str]
    rows: list[GroupRow]
    by_algorithm: dict[str, list[GroupRow]]
    skipped: dict[str, str] = field(default_factory=dict)
    bound: Bound | None = None
    plans: dict[str, Plan] = field(default_factory=dict)  # each evaluated algorithm's routed schedule
    routing: RoutingPolicy = field(default_factory=RoutingPolicy)  # the policy the flows were routed by

    def busiest_links(self) -> LinkHeat:
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


def _row(
    plan: Plan,
    op: Op,
    requested: int,
    size: int,
    count: int,
    dtype: str,
    p: int,
    bound: Bound,
    raw: Bound | None,
) -> GroupRow:
    time_us = plan.time_us(size)
    bound_us = bound.time_us(size)
    return GroupRow(
        bytes=size,
        count=count,
        type=dtype,
        time_us=time_us,
        algbw_gbps=algbw_gbps(size, time_us),
        busbw_gbps=busbw_gbps(op, p, size, time_us),
        algorithm=plan.algorithm,
        bound_busbw_gbps=busbw_gbps(op, p, size, bound_us),
        efficiency=bound_us / time_us if time_us > 0 else 0.0,
        max_hops=max(plan.max_links - 1, 0),
        bottleneck=plan.bottleneck,
        bound_limited_by=bound.limit_at(size),
        # a byte's busbw at the members' own links' rate
        peak_busbw_gbps=busbw_gbps(op, p, 1, bound.peak_seconds_per_byte * 1e6),
        requested_bytes=requested,
        chunks=plan.chunks(size),
        raw_bound_busbw_gbps=None if raw is None else busbw_gbps(op, p, size, raw.time_us(size)),
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
    exact_bounds: bool = True,
    shape: dict | None = None,
) -> Bound:
    """The bound at raw link rates: the effective one scaled when every link shares one efficiency."""
    share = topology.uniform_efficiency
    if share is not None:
        return replace(
            bound,
            seconds_per_byte=bound.seconds_per_byte * share,
            peak_seconds_per_byte=bound.peak_seconds_per_byte * share,
        )
    return lower_bound(
        topology.at_raw_rates(), group, op, alpha_ns, max_links, with_optimum=exact_bounds, **(shape or {})
    )


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
        smallest = element if not op.split else p * max(16, element)
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
    program: Program | None = None,
    relays: list[str] | None = None,
    arguments: Arguments | None = None,
    raw_bounds: bool = True,
) -> GroupEvaluation:
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
    program : Program, optional
        Cost this program (:mod:`trnsim.model.program_cost`) instead of the registered algorithms
        (``algo`` is then ignored); its positions are ``group`` and then ``relays``, the chips outside
        the group that forward its data.
    arguments : Arguments, optional
        The op's root, source-target pairs or counts (:mod:`trnsim.collectives.arguments`; None: root
        0, each rank to the next, even counts).
    raw_bounds : bool
        Compute the bound at raw link rates too (False: rows hold None there; on links of several
        efficiencies it is a second bound, for an output that shows none).

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
    traffic, root, blocks = resolve(op, len(group), arguments, traffic, f"{topology.where}: ")
    if program is not None and (program.op, program.p) != (op.base, len(group)):
        raise UsageError(f"a {program.op} program on {program.p} ranks cannot cost {op.name} on {len(group)}")
    dtype = dtype.strip().lower()  # names are case-insensitive; rows and baselines carry one spelling
    alpha_ns, alpha_us_used, chunking = cost_options(topology, alpha_us, max_chunks, min_chunk_bytes)
    limits.ROUTING.check(
        routing_work(topology, group),
        f"{topology.where}: a group of {len(group):,} chips on {len(topology.nodes):,} devices needs",
    )
    aligned, dropped = align_sizes(op, sizes, len(group), dtype)
    ctx = Context(topology.planner, group, traffic, root, blocks)  # planned on the healthy system
    router = Router(topology, group + list(relays or []))
    routers = [router] + [router.with_seed(seed) for seed in range(1, router.routing.realisations)]
    shape = dict(traffic=traffic, root=root, blocks=blocks)
    bound = lower_bound(topology, group, op, alpha_ns, router.max_links, with_optimum=exact_bounds, **shape)
    raw_bound = (
        _raw_bound(topology, group, op, alpha_ns, router.max_links, bound, exact_bounds, shape)
        if raw_bounds
        else None
    )

    if program is not None:
        plans, skipped = (
            {program.algorithm or "imported": _plan_program(topology, routers, program, alpha_ns, chunking)},
            {},
        )
    else:
        plans, skipped = _plan_each(topology, routers, ctx, op, algo, alpha_ns, chunking)
    by_algorithm = {
        name: [_row(plan, op, *entry, dtype, len(group), bound, raw_bound) for entry in aligned]
        for name, plan in plans.items()
    }
    rows = [
        min((by_algorithm[name][i] for name in plans), key=lambda row: row.time_us)
        for i in range(len(aligned))
    ]
    return GroupEvaluation(
        sku=topology.name,
        op=op.name,
        rows=rows,
        dropped=dropped,
        alpha_us=alpha_us_used,
        group=group,
        by_algorithm=by_algorithm,
        skipped=skipped,
        bound=bound,
        plans=plans,
        routing=router.routing,
    )


def _plan_program(
    topology: Topology, routers: list[Router], program: Program, alpha_ns: float, chunking
) -> Plan:
    """A program's schedule (:func:`~trnsim.model.program_cost.schedule_of`) routed under every seed."""
    from trnsim.model.program_cost import schedule_of
    from trnsim.topology.metrics import reducing_switches

    group = routers[0].group[: program.p]
    switches = (
        reducing_switches(topology.planner, group)
        if any(NETWORK in (t.src, t.dst) for t in program.transfers)
        else []
    )
    schedule = schedule_of(program, switches)
    name = program.algorithm or "imported"
    plan = plan_schedule(topology, routers[0], name, schedule, alpha_ns, chunking)
    plan.others = [plan_schedule(topology, r, name, schedule, alpha_ns, chunking) for r in routers[1:]]
    return plan


def _plan_each(
    topology: Topology, routers: list[Router], ctx: Context, op: Op, algo: str, alpha_ns: float, chunking
) -> tuple[dict[str, Plan], dict[str, str]]:
    """Each algorithm ``algo`` stands for scheduled and routed under every seed, and why the others
    were skipped (an algorithm asked for by name that does not apply raises NotApplicableError)."""
    router = routers[0]
    if algo in ("auto", "all"):
        # an algorithm that relays through chips outside the group is asked for by name or with all:
        # under auto those chips may be another group's (several groups at once, a measured ring)
        names = [
            name
            for name, a in algorithms.REGISTRY.items()
            if op.base in a.ops and (algo == "all" or not a.named_only)
        ]
    else:
        names = [algorithms.find(algo).name]
    plans, skipped = {}, {}
    for name in names:
        dominator = algorithms.REGISTRY[name].dominated_by
        if algo == "auto" and dominator in plans:
            skipped[name] = (
                f"never faster than {dominator} under this model (skipped by auto; algorithm all runs it)"
            )
            continue
        try:
            plan = make_plan(topology, router, ctx, op.base, name, alpha_ns, chunking)
            plan.others = [
                make_plan(topology, r, ctx, op.base, name, alpha_ns, chunking, plan.schedule)
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
    return plans, skipped
