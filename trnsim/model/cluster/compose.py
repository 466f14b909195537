"""A cluster collective by composition: in-domain phases on the domain's graph, the cross-domain
phase in closed form, overlapped in chunks.

A cluster is ``D`` domains of ``n`` ranks (``N = n D``). The phases inside a domain are evaluated on
the domain's own graph (:func:`trnsim.model.engine.evaluate`), the phase across domains in closed form
(:mod:`trnsim.model.cluster.inter`), and the phases are composed as
:mod:`trnsim.model.cluster.phases` says for each op (all-reduce: reduce-scatter inside each domain,
all-reduce across domains among same-position ranks on ``S/n``, all-gather inside each domain;
broadcast: scatter inside the root's domain, broadcast across, all-gather inside every domain; ...).

Phases overlap as an implementation pipelines them: the buffer is cut into ``c`` chunks that flow
through the phases, so the time is the first chunk through every phase plus ``c - 1`` chunks of the
slowest resource (the domain's links carry both in-domain phases of an all-reduce; the NICs the
cross-domain one): ``T(c) = T_up(S/c) + T_out(S/c) + (c - 1) max(T_up(S/c), P_out(S/c))``, where the
pace ``P_out`` is ``T_out`` but for a pipelined broadcast or reduce across domains, whose chunks
hold a NIC for less than the first one's way through the whole pipeline
(:func:`~trnsim.model.cluster.inter.inter_pace_us`). The chunk count is chosen per size from 1 to
:data:`MAX_CHUNKS` (``overlap=False``: 1). A send/recv's phases run side by side on different links
and data: ``T(c) = c max(T_up(S/c), T_out(S/c))``.
"""

import math
from dataclasses import dataclass, field
from typing import ClassVar

from trnsim.collectives.ops import get_op
from trnsim.errors import NotApplicableError, ParameterError, UsageError
from trnsim.model.cluster.inter import INTER_ALGORITHMS, flows_leaving, inter_pace_us, inter_time_us
from trnsim.model.cluster.limits import busiest_rank_gbps, ceiling_us, efa_bound_us, injection_us
from trnsim.model.cluster.phases import PHASES, Composition, composition, phase_arguments
from trnsim.model.cost import step_alpha
from trnsim.model.engine import align_sizes, evaluate
from trnsim.model.rows import Evaluation, Row, algbw_gbps, busbw_gbps
from trnsim.topology.graph import Topology
from trnsim.topology.metrics import chip_bandwidth_gbps, reducing_switches
from trnsim.topology.scaleout import FabricPlan, uplink_share

MAX_CHUNKS = 64
__all__ = ["MAX_CHUNKS", "PHASES", "ClusterEvaluation", "ClusterRow", "evaluate_cluster"]


@dataclass(kw_only=True)
class ClusterRow(Row):
    """One size of a cluster collective (times in microseconds, bandwidths in GB/s).

    ``bytes`` is what nccl-tests runs on all the ranks; ``bound_busbw_gbps`` the tighter of the NICs'
    cut and every rank's own links (any algorithm), ``efficiency`` busbw over it; ``algorithm`` names
    both sides of the composition (:attr:`inter_algorithm`, :attr:`intra_algorithms`).
    """

    inter_algorithm: str
    chunks: int
    intra_us: float  # the in-domain phases of one chunk, together
    inter_us: float  # the cross-domain phase of one chunk
    sequential_us: float  # the phases one after the other, unchunked
    bound_limited_by: str
    ceiling_busbw_gbps: float  # this composition's own limit: its busiest resource, no latency
    intra_algorithms: str

    COLUMNS: ClassVar[tuple[str, ...]] = (
        "bytes",
        "requested_bytes",
        "count",
        "time_us",
        "algbw_gbps",
        "busbw_gbps",
        "inter_algorithm",
        "chunks",
        "intra_us",
        "inter_us",
        "sequential_us",
        "bound_busbw_gbps",
        "bound_limited_by",
        "ceiling_busbw_gbps",
        "efficiency",
        "intra_algorithms",
    )


@dataclass(kw_only=True)
class ClusterEvaluation(Evaluation):
    """A collective over a cluster of domains (``sku`` is the domain's)."""

    domains: int
    ranks_per_domain: int
    plan: FabricPlan
    rows: list[ClusterRow]
    uplink_share: dict[str, float] = field(default_factory=dict)  # per cross-domain algorithm
    nic_gbps: float = 0.0  # effective per rank

    @property
    def ranks(self) -> int:
        return self.domains * self.ranks_per_domain


@dataclass(frozen=True)
class _Across:
    """The cross-domain side of a cluster: the algorithms tried, each one's uplink share, a rank's
    NIC rate."""

    op: str  # the composition's (:attr:`Composition.name`)
    names: tuple[str, ...]
    domains: int
    nic_gbps: float  # effective per rank
    shares: dict[str, float]  # per algorithm: the share of the uplinks a flow gets
    hop_ns: float

    def time_us(self, name: str, per_rank: float) -> float:
        """Algorithm ``name``'s cross-domain phase on ``per_rank`` bytes per rank."""
        rate = self.nic_gbps * self.shares[name]
        return inter_time_us(self.op, name, self.domains, per_rank, rate, self.hop_ns)

    def pace_us(self, name: str, per_rank: float) -> float:
        """How long algorithm ``name`` holds a NIC per chunk of ``per_rank`` bytes (:func:`inter_pace_us`)."""
        rate = self.nic_gbps * self.shares[name]
        return inter_pace_us(self.op, name, self.domains, per_rank, rate, self.hop_ns)


def evaluate_cluster(
    domain: Topology,
    plan: FabricPlan,
    op_name: str,
    sizes: list[int],
    inter_algo: str = "auto",
    intra_algo: str = "auto",
    overlap: bool = True,
) -> ClusterEvaluation:
    """Model ``op_name`` over ``plan.domains`` copies of ``domain`` joined by the scale-out fabric.

    Parameters
    ----------
    domain : Topology
        One scale-up domain (every rank of it takes part).
    plan : FabricPlan
        The fabric (:func:`trnsim.topology.scaleout.plan_fabric`).
    sizes : list of int
        Buffer sizes in bytes (nccl-tests conventions over all ``N`` ranks).
    inter_algo : str
        ``auto`` (fastest per size) or one of :data:`INTER_ALGORITHMS` for the op.
    intra_algo : str
        The in-domain algorithm (``auto``: the engine's fastest).
    overlap : bool
        Pipeline the phases in chunks (False: one after the other).

    Examples
    --------
    Two rings of 4 chips joined by 800 Gbit/s NICs per chip. One after the other, an all-gather
    takes its cross-domain phase plus its in-domain phase; overlapped, ``c`` chunks take the first
    chunk through both plus ``c - 1`` chunks of the slower one, and that is faster here.

    >>> from trnsim.topology.scaleout import fabric_choice, plan_fabric
    >>> from trnsim.topology.synthetic import ring_topology
    >>> ring = ring_topology(4)
    >>> plan = plan_fabric(fabric_choice(ring.spec, 4, None, nic_gbit_per_chip=800.0), 4, domains=2)
    >>> seq = evaluate_cluster(ring, plan, "allgather", [1 << 24], overlap=False).rows[0]
    >>> seq.chunks, seq.time_us == seq.intra_us + seq.inter_us
    (1, True)
    >>> row = evaluate_cluster(ring, plan, "allgather", [1 << 24]).rows[0]
    >>> up, out, c = row.intra_us, row.inter_us, row.chunks
    >>> c > 1, abs(row.time_us - (up + out + (c - 1) * max(up, out))) < 1e-9, row.time_us < seq.time_us
    (True, True, True)
    """
    op = get_op(op_name)
    comp = composition(op)
    choices = INTER_ALGORITHMS[comp.name]
    inter_algo = inter_algo.strip().lower()
    if inter_algo != "auto" and inter_algo not in choices:
        raise ParameterError(
            f"{op.name} across domains runs {', '.join(choices)} or auto", "inter_algo", repr(inter_algo)
        )
    names = choices if inter_algo == "auto" else (inter_algo,)
    n, d = domain.n_ranks, plan.domains
    per_rank_gbit = plan.choice.nic_gbit_per_chip / domain.spec.chip.ranks
    nic_gbps = per_rank_gbit / 8 * plan.choice.efficiency
    shares = {name: uplink_share(plan, flows_leaving(plan, name, comp.name)) for name in names}
    across = _Across(comp.name, names, d, nic_gbps, shares, plan.choice.hop_ns)
    chunk_counts = [c for c in (1 << i for i in range(7)) if c <= MAX_CHUNKS] if overlap else [1]
    if n * d < 2:
        raise UsageError(f"a cluster of {n * d} rank moves nothing: give more domains or a larger domain")
    aligned, dropped = align_sizes(op, sizes, n * d, "float")
    intra_time = _intra_phases(domain, op.name, comp, intra_algo, aligned, chunk_counts, d)
    per_chip = chip_bandwidth_gbps(domain)
    rank_gbps = busiest_rank_gbps(comp.name, [per_chip[c] for c in domain.chips], d) if n > 1 else 0.0
    # switches that reduce in the network (NVLS): a rank's links need carry an all-reduce's S once
    # each way, not 2(N-1)/N S (that argument has the ranks reduce)
    in_network = comp.name == "allreduce" and n > 1 and bool(reducing_switches(domain, list(domain.chips)))
    rows = []
    for requested, size, count in aligned:
        best = _best_chunking(comp, size, n, chunk_counts, intra_time, across)
        rows.append(
            _row(op, comp, (requested, size, count), n, best, intra_time, across, rank_gbps, in_network)
        )
    return ClusterEvaluation(
        sku=domain.name,
        op=op.name,
        rows=rows,
        dropped=dropped,
        alpha_us=step_alpha(domain, None)[1],
        domains=d,
        ranks_per_domain=n,
        plan=plan,
        uplink_share=shares,
        nic_gbps=nic_gbps,
    )


def _intra_phases(
    domain: Topology,
    op_name: str,
    comp: Composition,
    intra_algo: str,
    aligned: list,
    chunk_counts: list,
    domains: int,
):
    """The in-domain phases evaluated once at every chunk size any size needs; returns a function
    giving, for a buffer size, the phases' total time and the algorithms they ran."""
    n = domain.n_ranks
    # one domain has no cross-domain phase between a reduce-scatter and an all-gather: the op runs
    # whole, as the engine runs it (split, its halves were costed apart and sized for another op)
    before, after = (op_name, None) if domains == 1 else (comp.before, comp.after)
    phases = {before, after} - {None}
    # the smallest buffer nccl-tests runs in each in-domain phase: a smaller chunk costs as much
    smallest = {phase: n * 16 if get_op(phase).split else 4 for phase in phases}
    wanted = sorted(
        {max(1, nbytes // c) for _, nbytes, _ in aligned for c in chunk_counts} | set(smallest.values())
    )
    intra: dict[str, dict[int, tuple[float, str]]] = {}
    for phase in phases if n > 1 else ():
        arguments = phase_arguments(phase, n) if domains > 1 else None
        try:
            result = evaluate(
                domain,
                phase,
                wanted,
                list(domain.chips),
                algo=intra_algo,
                exact_bounds=False,
                arguments=arguments,
            )
        except NotApplicableError as exc:
            raise UsageError(exc.within("inside the domain")) from None
        by_size = {}
        for row in result.rows:
            by_size[row.requested_bytes] = (row.time_us, row.algorithm)
        intra[phase] = by_size

    def intra_time(size: int) -> tuple[float, list[str]] | None:
        total, used = 0.0, []
        for phase in (before, after):
            if phase is None:
                continue
            if phase not in intra:
                continue
            got = intra[phase].get(max(size, smallest[phase]))
            total += got[0]
            used.append(got[1])
        return total, used

    return intra_time


def _best_chunking(comp: Composition, size: int, n: int, chunk_counts: list, intra_time, across: _Across):
    """The fastest (time, chunks, cross-domain algorithm, in-domain time, cross-domain time, in-domain
    algorithms) over the chunk counts that divide the size and the cross-domain algorithms."""
    best = None
    for c in chunk_counts:
        piece = size // c
        if piece < 1 or (c > 1 and piece * c != size):
            continue
        up, used = intra_time(piece)
        for name in across.names:
            out = across.time_us(name, comp.per_rank(piece, n))
            pace = across.pace_us(name, comp.per_rank(piece, n))
            # side by side (send/recv), every chunk waits for the slower phase; in sequence, the
            # first chunk goes through both, the others at the pace of the busier resource
            total = c * max(up, out) if comp.concurrent else up + out + (c - 1) * max(up, pace)
            if best is None or total < best[0] - 1e-12:
                best = (total, c, name, up, out, used)
    return best


def _row(
    op,
    comp: Composition,
    size_row: tuple,
    n: int,
    best: tuple,
    intra_time,
    across: _Across,
    rank_gbps: float,
    in_network: bool,
) -> ClusterRow:
    """One size: the chosen composition, the phases one after the other, the bound and the ceiling."""
    requested, size, count = size_row
    d, nic_gbps = across.domains, across.nic_gbps
    ranks = n * d
    total, chunks, name, up, out, used = best
    sequential = intra_time(size)[0] + min(across.time_us(a, comp.per_rank(size, n)) for a in across.names)
    bounds = [
        (efa_bound_us(comp.name, size, n, d, nic_gbps), "the NICs' cut (every NIC of a domain)"),
        (
            injection_us(comp.name, size, n * d, rank_gbps + (nic_gbps if d > 1 else 0.0), in_network),
            "a rank's links (scale-up + NIC)" if d > 1 else "a rank's scale-up links",
        ),
    ]
    bound, limited_by = max(bounds)
    bound_busbw = busbw_gbps(op, ranks, size, bound) if bound > 0 else float("inf")
    # one domain runs the op whole (in-network reduction too); more run a reduce-scatter and an all-gather
    ceiling = ceiling_us(
        comp.name, size, n, d, rank_gbps, nic_gbps * across.shares[name], in_network and d == 1
    )
    busbw = busbw_gbps(op, ranks, size, total)
    inside = "+".join(used) or "-"
    return ClusterRow(
        bytes=size,
        requested_bytes=requested,
        count=count,
        type="float",
        time_us=total,
        algbw_gbps=algbw_gbps(size, total),
        busbw_gbps=busbw,
        algorithm=f"{name} across" + (f", {inside} inside" if used else ""),
        inter_algorithm=name,
        chunks=chunks,
        intra_us=up,
        inter_us=out,
        sequential_us=sequential,
        bound_busbw_gbps=bound_busbw,
        bound_limited_by=limited_by,
        ceiling_busbw_gbps=busbw_gbps(op, ranks, size, ceiling) if ceiling > 0 else float("inf"),
        efficiency=busbw / bound_busbw if math.isfinite(bound_busbw) and bound_busbw > 0 else 0.0,
        intra_algorithms=inside,
    )
