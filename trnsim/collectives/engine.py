"""Evaluate collectives: schedule, route, cost and bound, for every size of a sweep.

Step time = alpha (per step) + the step's largest path latency + bytes on its busiest directed link /
that link's bandwidth; a collective's time is the sum over its steps. Schedules and routes do not
depend on the size, so each algorithm is routed once and then costed at every size.
"""

from dataclasses import dataclass, field

from trnsim import limits
from trnsim.collectives import algorithms
from trnsim.collectives.algorithms import Context, NotApplicable, Step
from trnsim.collectives.bounds import Bound, lower_bound
from trnsim.collectives.ops import Op, dtype_size, get_op
from trnsim.collectives.routing import Router, StepRoute, routing_work
from trnsim.errors import NotApplicableError, UsageError
from trnsim.topology.graph import Topology


@dataclass
class Plan:
    """An algorithm's schedule routed on a group."""

    algorithm: str
    steps: list[tuple[Step, StepRoute]]
    alpha_ns: float

    def time_us(self, size: float) -> float:
        """Total time in microseconds for a collective of ``size`` bytes."""
        return sum(
            step.repeat * ((self.alpha_ns + route.latency_ns) / 1e3 + size * route.seconds_per_byte * 1e6)
            for step, route in self.steps
        )

    @property
    def max_links(self) -> int:
        return max((route.max_links for _, route in self.steps), default=0)

    @property
    def bottleneck(self) -> str:
        """The link class that limits the steps carrying the most bandwidth time."""
        step, route = max(self.steps, key=lambda sr: sr[0].repeat * sr[1].seconds_per_byte)
        return route.bottleneck


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
    bound_busbw_gbps: float
    efficiency: float
    max_hops: int
    bottleneck: str
    bound_limited_by: str
    peak_busbw_gbps: float  # the members' own link bandwidth, in busbw terms (the injection bound)
    requested_bytes: int  # the size asked for; ``bytes`` is what nccl-tests runs for it (see Op.align)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


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

    def alignment_note(self) -> str | None:
        """One line saying which sizes were aligned or left out, or None when all ran as asked."""
        moved = [row for row in self.rows if row.bytes != row.requested_bytes]
        if not moved and not self.dropped:
            return None
        parts = []
        if moved:
            parts.append(
                f"{len(moved)} size{'s' if len(moved) != 1 else ''} rounded down as nccl-tests does "
                f"(e.g. {moved[0].requested_bytes} -> {moved[0].bytes} B)"
            )
        if self.dropped:
            shown = ", ".join(str(size) for size in self.dropped[:4]) + (
                ", ..." if len(self.dropped) > 4 else ""
            )
            parts.append(f"left out {shown} B (0 bytes once aligned)")
        return "sizes: " + "; ".join(parts)

    @property
    def ranks(self) -> int:
        return len(self.group)

    @property
    def avg_busbw_gbps(self) -> float:
        return sum(r.busbw_gbps for r in self.rows) / len(self.rows) if self.rows else 0.0


def make_plan(topology: Topology, router: Router, ctx: Context, op: str, name: str, alpha_ns: float) -> Plan:
    """Schedule and route one algorithm (raises :class:`NotApplicable`)."""
    algo = algorithms.find(name)
    steps = algo.schedule(ctx, op)
    return Plan(algo.name, list(zip(steps, router.route_all(steps), strict=True)), alpha_ns)


def _row(plan: Plan, op: Op, requested: int, size: int, count: int, dtype: str, p: int, bound: Bound) -> Row:
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
    )


def evaluate(
    topology: Topology,
    op_name: str,
    sizes: list[int],
    group: list[str],
    algo: str = "auto",
    dtype: str = "float",
    alpha_us: float | None = None,
) -> Evaluation:
    """Model ``op_name`` on ``group`` of ``topology`` for every size.

    Parameters
    ----------
    algo : str
        An algorithm name, ``auto`` (the fastest per size) or ``all`` (every applicable one; the
        rows are then the fastest per size and ``by_algorithm`` holds each one's rows).
    alpha_us : float, optional
        Per-step alpha overriding the SKU file's ``latency.step_ns``.
    """
    op = get_op(op_name)
    element = dtype_size(dtype)
    dtype = dtype.strip().lower()  # names are case-insensitive; rows and baselines carry one spelling
    from trnsim.units import check_finite

    check_finite("--alpha-us", alpha_us, minimum=0, maximum=1e6)
    alpha_ns = topology.spec.latency.step_ns if alpha_us is None else alpha_us * 1e3
    limits.ROUTING.check(
        routing_work(topology, group),
        f"{topology.where}: a group of {len(group):,} chips on {len(topology.nodes):,} devices needs",
    )
    # sizes as nccl-tests runs them: whole elements, and whole 16-byte blocks per rank where the op
    # splits the buffer by rank; a size that aligns to nothing moves nothing and is left out
    aligned, dropped = [], []
    for size in sizes:
        nbytes, count = op.align(size, len(group), element)
        if nbytes:
            aligned.append((size, nbytes, count))
        else:
            dropped.append(size)
    if not aligned:
        smallest = element if op.name == "allreduce" else len(group) * max(16, element)
        raise UsageError(
            f"every size is below the smallest {op.name} nccl-tests runs on {len(group)} ranks of "
            f"{dtype} ({smallest} bytes): give larger sizes"
        )
    ctx = Context(topology, group)
    router = Router(topology, group)
    bound = lower_bound(topology, group, op, alpha_ns, router.max_links)

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
            plans[name] = make_plan(topology, router, ctx, op.name, name, alpha_ns)
        except NotApplicable as reason:
            if algo not in ("auto", "all"):
                raise NotApplicableError(
                    f"algorithm {name} does not apply to {op.name} on this group of {topology.name}: {reason}"
                ) from None
            skipped[name] = str(reason)
    if not plans:
        raise UsageError(f"no algorithm applies to {op.name} on this group")

    by_algorithm = {
        name: [_row(plan, op, *entry, dtype, len(group), bound) for entry in aligned]
        for name, plan in plans.items()
    }
    rows = [
        min((by_algorithm[name][i] for name in plans), key=lambda row: row.time_us)
        for i in range(len(aligned))
    ]
    return Evaluation(topology.name, op.name, group, rows, by_algorithm, skipped, bound, dropped)
