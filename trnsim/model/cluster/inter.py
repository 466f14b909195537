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
  floor or ceiling); ``m/B`` with no latency. A reduce runs the same steps the other way;
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
    """``m`` bytes down a pipeline ``depth`` hops deep in ``k`` pieces at the best ``k``:
    ``(depth - 1 + k)(a + m/(k B))`` (``byte_us`` = ``1/B``), ``k* = sqrt((depth - 1) m / (a B))``.

    >>> pipelined_us(1, 1e6, 5.0, 1e-4)  # one hop: one piece, 5 + 100 us
    105.0
    >>> pipelined_us(5, 1e6, 0.0, 1e-4)  # no latency: as many pieces as it takes, m/B
    100.0
    """
    if alpha_us <= 0:
        return m * byte_us
    best = math.sqrt((depth - 1) * m * byte_us / alpha_us)
    pieces = {max(1, math.floor(best)), max(1, math.ceil(best))}
    return min((depth - 1 + k) * (alpha_us + m / k * byte_us) for k in pieces)


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
