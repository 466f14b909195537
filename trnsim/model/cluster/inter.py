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
  ``a + (D-1)/D m/B`` (the NIC's rate shared by all of them).

Flow collisions: a step's flows leave their ToR together; under hashing each takes one uplink
(:func:`trnsim.topology.scaleout.uplink_share`), under spraying they share all of them. In a ToR
design every rank of a rack sends across at once; in a rail design the ring's neighbours share a rail
switch: while the domains fit on one rail switch (``D`` at most its ports down) no flow leaves it,
whatever the algorithm; beyond, a ring sends one flow per switch up and the others every flow.
"""

import math

from trnsim.errors import UsageError
from trnsim.topology.scaleout import FabricPlan

INTER_ALGORITHMS = {
    "allreduce": ("ring", "rdh", "tree"),
    "allgather": ("ring", "rdh"),
    "reducescatter": ("ring", "rdh"),
    "alltoall": ("pairwise", "direct"),
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


def flows_leaving(plan: FabricPlan, algorithm: str) -> int:
    """Flows that leave a ToR (or rail switch) together in the busiest cross-domain step."""
    if plan.choice.design == "rail":
        if plan.domains <= plan.tor_down:
            return 0  # every domain's rank of this position is on one rail switch
        if algorithm == "ring":
            return 1
    return plan.tor_down
