"""The cross-domain phase of a cluster collective in closed form, over the scale-out fabric.

Across domains each rank uses its own NIC share (``efa_gbit_per_chip / 8`` GB/s times the scale-out
``efficiency``) and each step costs ``hop_ns`` (docs/sources.md#efa-hop-latency: about 15 us per EFA
hop). The algorithms, with ``m`` the bytes per rank of that phase and ``B`` the rate:

- ``ring``: all-reduce ``2(D-1)(a + m/(D B))``; all-gather, reduce-scatter ``(D-1)(a + m/(D B))``;
- ``rdh`` (halving-doubling): all-reduce ``2 log2 q`` steps and ``2(q-1)/q m/B`` with ``q`` the largest
  power of two <= D, plus ``2(a + m/B)`` to fold in the others; all-gather and reduce-scatter
  ``ceil(log2 D)`` steps and ``(D-1)/D m/B`` (Bruck's schedule for any D);
- ``tree`` (double binary tree, pipelined): all-reduce ``2 ceil(log2 D)`` steps and ``2 m/B``;
- ``pairwise`` (all-to-all): ``(D-1)(a + m/(D B))``; ``direct``: every send posted at once, one step
  ``a + (D-1)/D m/B`` (the NIC's rate shared by all of them). Gather and scatter run the same two:
  a rank of the root's domain receives (sends) ``m/D`` from (to) each of its ``D-1`` counterparts;
- broadcast and reduce, from (to) the root's domain, the buffer cut into ``k`` pieces that follow
  one another: ``chain`` (a pipelined chain through the ``D`` domains, ``D-1`` hops deep) and
  ``tree`` (a pipelined double binary tree, ``h = ceil(log2 D)`` hops deep; each rank is inside one
  of the two trees and sends each piece's half to its two children, ``m/k`` a step as in the chain):
  ``(depth - 1 + k)(a + m/(k B))`` at the best ``k``, ``k* = sqrt((depth - 1) m / (a B))`` (its
  floor or ceiling); ``m/B`` with no latency. A reduce runs the same steps the other way. Chunks
  that follow one another through the phases (:mod:`trnsim.model.cluster.compose`) are paced by
  how long a chunk's pieces hold a hop, ``k a + m/B`` (:func:`inter_pace_us`): the pipeline fills once;
- send/recv (``direct``): the domain's last rank sends its buffer to the next domain's first, one
  step ``a + m/B`` (``m`` the whole buffer).

Flow collisions: a step's flows leave their ToR together; under hashing each takes one uplink
(:func:`trnsim.topology.scaleout.uplink_share`), under spraying they share all of them. In a ToR
design every rank of a rack sends across at once; in a rail design the ring's neighbours share a rail
switch: while the domains fit on one rail switch (``D`` at most its ports down) no flow leaves it,
whatever the algorithm; beyond, a ring (or chain) sends one flow per switch up and the others every
flow. A send/recv has one rank in ``n`` send across: ``ceil(ToR ports down / chips per domain)`` flows
leave a ToR; in a rail design its flows go from the last position's rail to the first's, so every
domain's on the rail switch leaves it.
"""

import math

from trnsim.errors import UsageError
from trnsim.topology.scaleout import FabricPlan

INTER_ALGORITHMS = {
    "allreduce": ("ring", "rdh", "tree"),
    "allgather": ("ring", "rdh"),
    "reducescatter": ("ring", "rdh"),
    "alltoall": ("pairwise", "direct"),
    "broadcast": ("chain", "tree"),
    "reduce": ("chain", "tree"),
    "gather": ("pairwise", "direct"),
    "scatter": ("pairwise", "direct"),
    "sendrecv": ("direct",),
}


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

    Examples
    --------
    A ring all-reduce over 4 domains moves ``2(D-1)`` chunks of ``m/D`` bytes: with 4 MB per rank
    at 100 GB/s and no hop latency, 6 steps of 10 us.

    >>> inter_time_us("allreduce", "ring", 4, 4e6, 100.0, 0.0)
    60.0

    A chain broadcast of 4 MB over 3 domains at 10 us a step: ``k* = sqrt(4e6 / (10 * 100e3)) = 2``
    pieces, 3 steps of 10 + 20 us.

    >>> inter_time_us("broadcast", "chain", 3, 4e6, 100.0, 10_000.0)
    90.0
    """
    d = domains
    if d <= 1 or per_rank_bytes <= 0:
        return 0.0
    alpha = hop_ns / 1e3
    byte_us = 1 / (rate_gbps * 1e3)  # microseconds per byte
    m = per_rank_bytes
    log = math.ceil(math.log2(d))
    if op in ("broadcast", "reduce") and algorithm in ("chain", "tree"):
        return pipelined_us(d - 1 if algorithm == "chain" else log, m, alpha, byte_us)
    if op == "sendrecv" and algorithm == "direct":
        return alpha + m * byte_us
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


def pipelined_us(depth: int, m: float, alpha_us: float, byte_us: float) -> float:
    """``m`` bytes down a pipeline ``depth`` hops deep in ``k`` pieces at the best ``k``
    (:func:`pipeline_pieces`): ``(depth - 1 + k)(a + m/(k B))`` (``byte_us`` = ``1/B``).

    >>> pipelined_us(1, 1e6, 5.0, 1e-4)  # one hop: one piece, 5 + 100 us
    105.0
    >>> pipelined_us(5, 1e6, 0.0, 1e-4)  # no latency: as many pieces as it takes, m/B
    100.0
    """
    k = pipeline_pieces(depth, m, alpha_us, byte_us)
    if k is None:
        return m * byte_us
    return (depth - 1 + k) * (alpha_us + m / k * byte_us)


def pipeline_pieces(depth: int, m: float, alpha_us: float, byte_us: float) -> int | None:
    """The piece count that makes :func:`pipelined_us` fastest: ``k* = sqrt((depth - 1) m / (a B))``,
    its floor or its ceiling (at least 1); None without latency (as many as it takes).

    >>> pipeline_pieces(2, 4e6, 10.0, 1e-5), pipeline_pieces(2, 4e6, 0.0, 1e-5)
    (2, None)
    """
    if alpha_us <= 0:
        return None
    best = math.sqrt((depth - 1) * m * byte_us / alpha_us)
    pieces = {max(1, math.floor(best)), max(1, math.ceil(best))}
    return min(pieces, key=lambda k: ((depth - 1 + k) * (alpha_us + m / k * byte_us), k))


def inter_pace_us(
    op: str, algorithm: str, domains: int, per_rank_bytes: float, rate_gbps: float, hop_ns: float
) -> float:
    """How long the cross-domain phase keeps a rank's NIC busy, which paces chunks that follow one
    another: a pipelined broadcast or reduce's ``k`` pieces pass a hop in ``k a + m/B``, less than
    the first chunk's time through the whole pipeline (:func:`inter_time_us`); every other
    algorithm's steps run in turn, its time is its pace.

    >>> inter_pace_us("broadcast", "chain", 3, 4e6, 100.0, 10_000.0)  # 2 pieces: 2 x 10 + 40 us
    60.0
    >>> inter_pace_us("allreduce", "ring", 4, 4e6, 100.0, 0.0)
    60.0
    """
    if (
        op in ("broadcast", "reduce")
        and algorithm in ("chain", "tree")
        and domains > 1
        and per_rank_bytes > 0
    ):
        alpha, byte_us = hop_ns / 1e3, 1 / (rate_gbps * 1e3)
        depth = domains - 1 if algorithm == "chain" else math.ceil(math.log2(domains))
        k = pipeline_pieces(depth, per_rank_bytes, alpha, byte_us)
        return per_rank_bytes * byte_us + (k * alpha if k is not None else 0.0)
    return inter_time_us(op, algorithm, domains, per_rank_bytes, rate_gbps, hop_ns)


def flows_leaving(plan: FabricPlan, algorithm: str, op: str | None = None) -> int:
    """Flows that leave a ToR (or rail switch) together in the busiest cross-domain step of
    ``algorithm`` (``op``: a send/recv sends from one rank of each domain)."""
    if op == "sendrecv":
        if plan.choice.design == "rail":
            return min(plan.domains, plan.tor_down)  # the last position's rail to the first's
        return max(1, -(-plan.tor_down // plan.chips_per_domain))
    if plan.choice.design == "rail":
        if plan.domains <= plan.tor_down:
            return 0  # every domain's rank of this position is on one rail switch
        if algorithm in ("ring", "chain"):
            return 1
    return plan.tor_down
