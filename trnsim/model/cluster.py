"""Collectives across many scale-up domains over the EFA scale-out network, by composition.

A cluster is ``D`` domains of ``n`` ranks (``N = n D``). No graph of the cluster is built: the phases
inside a domain are evaluated on the domain's own graph (:func:`trnsim.model.engine.evaluate`),
the phase across domains in closed form over the scale-out fabric (:mod:`trnsim.topology.scaleout`),
and the phases are composed:

- all-reduce: reduce-scatter inside each domain, all-reduce across domains among the ``n`` groups of
  same-position ranks (each on ``S/n``), all-gather inside each domain;
- all-gather: all-gather across domains (each group gathers ``S/n``), then inside each domain (``S``);
- reduce-scatter: inside each domain (``S``), then across domains (``S/n``);
- all-to-all: inside each domain (each rank collects what its counterparts elsewhere need, ``S``),
  then across domains (each rank sends ``S/D`` to each of its ``D-1`` counterparts).

Phases overlap as an implementation pipelines them: the buffer is cut into ``c`` chunks that flow
through the phases, so the time is the first chunk through every phase plus ``c - 1`` chunks of the
slowest resource (the domain's links carry both in-domain phases of an all-reduce; the NICs the
cross-domain one): ``T(c) = T_up(S/c) + T_out(S/c) + (c - 1) max(T_up(S/c), T_out(S/c))``. The chunk
count is chosen per size from 1 to :data:`MAX_CHUNKS` (``overlap=False``: 1).

Across domains each rank uses its own NIC share (``efa_gbit_per_chip / 8`` GB/s times the
scale-out ``efficiency``) and each step costs ``hop_ns`` (docs/sources.md#efa-hop-latency: about 15 us per EFA hop).
The algorithms, with ``m`` the bytes per rank of that phase and ``B`` the rate:

- ``ring``: all-reduce ``2(D-1)(a + m/(D B))``; all-gather, reduce-scatter ``(D-1)(a + m/(D B))``;
- ``rdh`` (halving-doubling): all-reduce ``2 log2 q`` steps and ``2(q-1)/q m/B`` with ``q`` the largest
  power of two <= D, plus ``2(a + m/B)`` to fold in the others; all-gather and reduce-scatter
  ``ceil(log2 D)`` steps and ``(D-1)/D m/B`` (Bruck's schedule for any D);
- ``tree`` (double binary tree, pipelined): all-reduce ``2 ceil(log2 D)`` steps and ``2 m/B``;
- ``pairwise`` (all-to-all): ``(D-1)(a + m/(D B))``; ``direct``: every send posted at once, one step
  ``a + (D-1)/D m/B`` (the NIC's rate shared by all of them).

Flow collisions: a step's flows leave their ToR together; under hashing each takes one uplink
(:func:`trnsim.topology.scaleout.uplink_share`), under spraying they share all of them. In a ToR
design every rank of a rack sends across at once; in a rail design the ring's neighbours share a rail
switch: while the domains fit on one rail switch (``D`` at most its ports down) no flow leaves it,
whatever the algorithm; beyond, a ring sends one flow per switch up and the others every flow.
"""

import math
from dataclasses import dataclass, field

from trnsim.collectives.ops import get_op
from trnsim.errors import NotApplicableError, UsageError
from trnsim.model.engine import evaluate
from trnsim.topology.graph import Topology
from trnsim.topology.scaleout import FabricPlan, uplink_share

MAX_CHUNKS = 64
INTER_ALGORITHMS = {
    "allreduce": ("ring", "rdh", "tree"),
    "allgather": ("ring", "rdh"),
    "reducescatter": ("ring", "rdh"),
    "alltoall": ("pairwise", "direct"),
}
# the phase inside the domain before and after the cross-domain one
PHASES = {
    "allreduce": ("reducescatter", "allgather"),
    "allgather": (None, "allgather"),
    "reducescatter": ("reducescatter", None),
    "alltoall": ("alltoall", None),
}


@dataclass
class ClusterRow:
    """One size of a cluster collective (times in microseconds, bandwidths in GB/s)."""

    bytes: int
    requested_bytes: int  # the size asked for; ``bytes`` is what nccl-tests runs on all the ranks
    count: int
    time_us: float
    algbw_gbps: float
    busbw_gbps: float
    inter_algorithm: str
    chunks: int
    intra_us: float  # the in-domain phases of one chunk, together
    inter_us: float  # the cross-domain phase of one chunk
    sequential_us: float  # the phases one after the other, unchunked
    bound_busbw_gbps: float  # the tighter of the EFA cut and every rank's own links (any algorithm)
    bound_limited_by: str
    ceiling_busbw_gbps: float  # this composition's own limit: its busiest resource, no latency
    efficiency: float  # busbw / bound
    intra_algorithms: str

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class ClusterEvaluation:
    """A collective over a cluster of domains."""

    domain: str
    op: str
    domains: int
    ranks_per_domain: int
    plan: FabricPlan
    rows: list[ClusterRow]
    uplink_share: dict[str, float] = field(default_factory=dict)  # per cross-domain algorithm
    nic_gbps: float = 0.0  # effective per rank
    dropped: list[int] = field(default_factory=list)  # requested sizes that align to 0 bytes

    @property
    def ranks(self) -> int:
        return self.domains * self.ranks_per_domain


def inter_time_us(
    op: str, algorithm: str, domains: int, per_rank_bytes: float, rate_gbps: float, hop_ns: float
) -> float:
    """The cross-domain phase in closed form (microseconds): see the module docstring.

    Parameters
    ----------
    per_rank_bytes : float
        ``m``, the phase's buffer per rank (the nccl-tests size of the D-member collective).
    rate_gbps : float
        A rank's rate across the fabric, GB/s.
    """
    d = domains
    if d <= 1 or per_rank_bytes <= 0:
        return 0.0
    alpha = hop_ns / 1e3
    byte_us = 1 / (rate_gbps * 1e3)  # microseconds per byte
    m = per_rank_bytes
    log = math.ceil(math.log2(d))
    if algorithm == "direct":
        return alpha + (d - 1) / d * m * byte_us
    if algorithm in ("ring", "pairwise"):
        steps = 2 * (d - 1) if op == "allreduce" else d - 1
        return steps * (alpha + m / d * byte_us)
    if algorithm == "rdh":
        if op == "allreduce":
            q = 1 << (d.bit_length() - 1)
            time = 2 * math.log2(q) * alpha + 2 * (q - 1) / q * m * byte_us
            return time + (2 * (alpha + m * byte_us) if q < d else 0.0)
        return log * alpha + (d - 1) / d * m * byte_us
    if algorithm == "tree":
        return 2 * log * alpha + 2 * m * byte_us
    raise UsageError(f"unknown cross-domain algorithm {algorithm!r}")


def _flows_leaving(plan: FabricPlan, algorithm: str) -> int:
    """Flows that leave a ToR (or rail switch) together in the busiest cross-domain step."""
    if plan.choice.design == "rail":
        if plan.domains <= plan.tor_down:
            return 0  # every domain's rank of this position is on one rail switch
        if algorithm == "ring":
            return 1
    return plan.tor_down


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
    """
    op = get_op(op_name)
    choices = INTER_ALGORITHMS[op.name]
    inter_algo = inter_algo.strip().lower()
    if inter_algo != "auto" and inter_algo not in choices:
        raise UsageError(
            f"--inter-algo {inter_algo!r}: {op.name} across domains runs {', '.join(choices)} or auto"
        )
    names = choices if inter_algo == "auto" else (inter_algo,)
    n, d = domain.n_ranks, plan.domains
    per_rank_gbit = plan.choice.nic_gbit_per_chip / domain.spec.chip.ranks
    nic_gbps = per_rank_gbit / 8 * plan.choice.efficiency
    shares = {name: uplink_share(plan, _flows_leaving(plan, name)) for name in names}
    before, after = PHASES[op.name]
    chunk_counts = [c for c in (1 << i for i in range(7)) if c <= MAX_CHUNKS] if overlap else [1]

    if n * d < 2:
        raise UsageError(f"a cluster of {n * d} rank moves nothing: give more domains or a larger domain")
    from trnsim.model.engine import align_sizes

    aligned, dropped = align_sizes(op, sizes, n * d, "float")
    # the smallest buffer nccl-tests runs in each in-domain phase: a smaller chunk costs as much
    smallest = {phase: 4 if phase == "allreduce" else n * 16 for phase in {before, after} - {None}}
    wanted = sorted(
        {max(1, nbytes // c) for _, nbytes, _ in aligned for c in chunk_counts} | set(smallest.values())
    )
    intra: dict[str, dict[int, tuple[float, str]]] = {}
    for phase in ({before, after} - {None}) if n > 1 else ():
        try:
            result = evaluate(domain, phase, wanted, list(domain.chips), algo=intra_algo, exact_bounds=False)
        except NotApplicableError as exc:
            raise UsageError(f"inside the domain: {exc}") from None
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

    factor = op.busbw_factor(n * d)
    from trnsim.topology.metrics import chip_bandwidth_gbps

    rank_gbps = min(chip_bandwidth_gbps(domain).values()) if n > 1 else 0.0
    rows = []
    for requested, size, count in aligned:
        best = None
        for c in chunk_counts:
            piece = size // c
            if piece < 1 or (c > 1 and piece * c != size):
                continue
            up, used = intra_time(piece)
            per_rank = piece / n if op.name in ("allreduce", "allgather", "reducescatter") else piece
            for name in names:
                rate = nic_gbps * shares[name]
                out = inter_time_us(op.name, name, d, per_rank, rate, plan.choice.hop_ns)
                total = up + out + (c - 1) * max(up, out)
                if best is None or total < best[0] - 1e-12:
                    best = (total, c, name, up, out, used)
        total, chunks, name, up, out, used = best
        sequential = intra_time(size)[0] + min(
            inter_time_us(
                op.name,
                a,
                d,
                size / n if op.name != "alltoall" else size,
                nic_gbps * shares[a],
                plan.choice.hop_ns,
            )
            for a in names
        )
        bounds = [
            (_efa_bound_us(op.name, size, n, d, nic_gbps), "EFA cut (every NIC of a domain)"),
            (
                _injection_us(op.name, size, n * d, rank_gbps + (nic_gbps if d > 1 else 0.0)),
                "a rank's links (scale-up + NIC)" if d > 1 else "a rank's scale-up links",
            ),
        ]
        bound, limited_by = max(bounds)
        algbw = size / (total * 1e3) if total > 0 else 0.0
        bound_busbw = factor * size / (bound * 1e3) if bound > 0 else float("inf")
        ceiling = _ceiling_us(op.name, size, n, d, rank_gbps, nic_gbps * shares[name])
        busbw = factor * algbw
        rows.append(
            ClusterRow(
                bytes=size,
                requested_bytes=requested,
                count=count,
                time_us=total,
                algbw_gbps=algbw,
                busbw_gbps=busbw,
                inter_algorithm=name,
                chunks=chunks,
                intra_us=up,
                inter_us=out,
                sequential_us=sequential,
                bound_busbw_gbps=bound_busbw,
                bound_limited_by=limited_by,
                ceiling_busbw_gbps=factor * size / (ceiling * 1e3) if ceiling > 0 else float("inf"),
                efficiency=busbw / bound_busbw if math.isfinite(bound_busbw) and bound_busbw > 0 else 0.0,
                intra_algorithms="+".join(used) or "-",
            )
        )
    return ClusterEvaluation(domain.name, op.name, d, n, plan, rows, shares, nic_gbps, dropped)


def _efa_bound_us(op: str, size: int, n: int, d: int, nic_gbps: float) -> float:
    """The least time the domains' NICs need for the bytes that must cross between domains.

    All-reduce: every domain's result depends on every other's input, and its input reaches every
    other's result: at least ``2(D-1)/D S`` through its ``n`` NICs (Patarasuk and Yuan's argument
    with domains as members). All-gather, reduce-scatter: ``(D-1)/D S``. All-to-all: each rank sends
    ``(D-1)/D S`` across.
    """
    return _across_bytes(op, size, n, d) / (nic_gbps * 1e3)


def _across_bytes(op: str, size: int, n: int, d: int) -> float:
    """Bytes each rank's NIC carries across domains: ``2(D-1)/D S/n`` for all-reduce, ``(D-1)/D S``
    for all-to-all, ``(D-1)/D S/n`` for all-gather and reduce-scatter (0 with one domain)."""
    if d <= 1:
        return 0.0
    share = (d - 1) / d
    if op == "allreduce":
        return 2 * share * size / n
    if op == "alltoall":
        return share * size
    return share * size / n


def _injection_us(op: str, size: int, ranks: int, rank_gbps: float) -> float:
    """Every rank sends and receives ``2(N-1)/N S`` (all-reduce) or ``(N-1)/N S`` through its own
    links, scale-up and NIC together."""
    share = (ranks - 1) / ranks
    moved = 2 * share * size if op == "allreduce" else share * size
    return moved / (rank_gbps * 1e3)


def _ceiling_us(op: str, size: int, n: int, d: int, rank_gbps: float, nic_gbps: float) -> float:
    """The composition's own limit: its in-domain phases on a rank's scale-up links and its
    cross-domain phase on the NICs, overlapped (the slower of the two; no latency)."""
    up = 0.0
    if n > 1:
        share = (n - 1) / n
        phases = 2 if op == "allreduce" else 1
        up = phases * share * size / (rank_gbps * 1e3)
    if d <= 1:
        return up
    return max(up, _across_bytes(op, size, n, d) / (nic_gbps * 1e3))
