"""The cost of each Neuron collective algorithm, one phase at a time: steps, and the time its bytes take
on NeuronLink, in HBM and over EFA.

Every algorithm runs an all-reduce as a reduce-scatter followed by an all-gather (the runtime's pages
say so of each: intranode-collective-comm.rst and internode-collective-comm.rst, "... AllReduce"), so a
phase is ``"reducescatter"`` or ``"allgather"`` on the whole buffer ``size`` (an all-gather's output,
a reduce-scatter's input). In a node of ``c`` chips with ``r`` ranks each (``n = c r``):

- **Ring**: one directed cycle through all ``n`` ranks, a chip's ranks next to each other, run as
  several cycles on disjoint links at once ("multiple cycles with mutually exclusive wires in
  parallel for full wire bandwidth"): ``n - 1`` steps; every inter-chip link carries ``(n-1)/n`` of
  the buffer in all, spread over all of a chip's links where the chips have several link-disjoint
  Hamiltonian cycles (the 16-chip torus has two: the page's "full wire bandwidth"), and over half of
  them where they are one ring of three or more chips (:data:`RING_OF_CHIPS_SHARE`): a ring of chips
  has one such cycle, which the runtime runs one way. That is an inference from N8 (16 ranks at
  LNC=2, four chips of a torus ring: KangaRing between its two largest rows moves 72.6 GB/s, what one
  direction of a chip's two wires carries); two chips run their one wire both ways.
- **KangaRing**: the same with only the primaries of rank pairs in the cycle, ``m = n/2``: ``m - 1``
  steps and ``(m-1)/m`` of the buffer per chip; fewer HBM accesses (Ring 1R1W and 2R1W per rank,
  KangaRing 1R2W and 3R1W per two ranks). Needs an even number of ranks per chip, at least 2.
- **Mesh**: one routed step between chips and one inside the chip (either is skipped when there is
  one chip, or one rank per chip): ``(c-1)/c`` of the buffer leaves each chip and travels the torus'
  mean distance, which is its link over-subscription.
- **RDH**: an intra-chip step and ``log2 c`` recursive-halving (or doubling) steps between chips;
  ``c`` a power of two. Step ``j`` moves ``size / 2**(j+1)`` per chip to a partner ``h_j`` hops away:
  1 on a torus of dimensions of at most 4 chips (the 4x4 torus is a 4-D hypercube, the page's "4
  axis directions W, X, Y, and Z") and on a switched fabric, ``min(2**k, m - 2**k)`` along a larger
  ring (an assumption: natural order, the largest pieces to the nearest partners). Each rank's group
  walks the axes in turn; with the groups on different axes a step keeps ``min(r, log2 c)`` of the
  chip's links busy (an assumption; the page's "partial over-subscription" from on-chip routing is
  not charged).

Between nodes (one rank per node in each group, ``X`` nodes, EFA at ``efa_gbps_per_rank`` per rank):
Ring ``X - 1`` steps, Mesh 1, RDH ``log2 X`` (``X`` a power of two); each moves ``(X-1)/X`` of its
buffer, at the algorithm's EFA efficiency. On-chip moves are not charged to NeuronLink; they cost
hops, and HBM when ``hbm_gbps_per_chip`` is given.
"""

import math

from trnsim.model.runtimes import neuron_constants as c
from trnsim.model.runtimes.neuron_system import NeuronSystem, torus_links, torus_mean_hops

PHASES = ("reducescatter", "allgather")
# the share of a chip's link bandwidth Ring and KangaRing use on a ring of 3+ chips (one cycle, one way)
RING_OF_CHIPS_SHARE = 0.5


def _power_of_two(x: int) -> bool:
    return x >= 1 and x & (x - 1) == 0


def intra_applicable(system: NeuronSystem, algorithm: str) -> bool:
    """Whether the runtime can run ``algorithm`` on the node's ranks (rules on numbers only)."""
    r, chips = system.ranks_per_chip, system.chips_per_node
    if algorithm == "kangaring":
        # rank pairs on a chip (intranode page: "On a one-rank-per-chip rank-list replica-group, Ring
        # is used rather than KangaRing")
        return r >= 2 and r % 2 == 0
    if algorithm == "rdh":
        dims = system.torus_dims or (chips,)
        return chips >= 2 and _power_of_two(chips) and all(_power_of_two(m) for m in dims)
    return algorithm in ("mesh", "ring")


def inter_applicable(system: NeuronSystem, algorithm: str) -> bool:
    """RDH needs a power-of-two number of nodes ("a communication group with N = 2^p members")."""
    return algorithm != "rdh" or _power_of_two(system.nodes)


def rdh_hops(system: NeuronSystem) -> list[int]:
    """Hops to the partner of each RDH step between chips, nearest first."""
    if system.torus_dims is None:
        return [1] * int(math.log2(system.chips_per_node))
    hops = []
    for m in system.torus_dims:
        for k in range(int(math.log2(m))):
            hops.append(1 if m <= 4 else min(2**k, m - 2**k))
    return sorted(hops)


def _link_bytes(system: NeuronSystem, algorithm: str, size: float) -> float:
    """Bytes one chip sends over NeuronLink in a phase (byte-hops for routed traffic), divided by the
    share of the chip's links the algorithm keeps busy."""
    n, chips, r = system.ranks_per_node, system.chips_per_node, system.ranks_per_chip
    if chips == 1:
        return 0.0
    dims = system.torus_dims
    one_ring = dims is not None and chips > 2 and sum(size > 1 for size in dims) == 1
    cycles = RING_OF_CHIPS_SHARE if one_ring else 1.0
    if algorithm == "ring":
        return size * (n - 1) / n / cycles
    if algorithm == "kangaring":
        m = n // 2
        return size * (m - 1) / m / cycles
    if algorithm == "mesh":
        dims = system.torus_dims
        mean_hops = 1.0 if dims is None else torus_mean_hops(dims)
        return size * (chips - 1) / chips * mean_hops
    hops = rdh_hops(system)
    byte_hops = sum(size / 2 ** (j + 1) * h for j, h in enumerate(hops))
    links = len(hops) if system.torus_dims is None else torus_links(system.torus_dims)
    busy = min(1.0, min(r, len(hops)) / links)
    return byte_hops / busy


def intra_steps(system: NeuronSystem, algorithm: str) -> int:
    """NeuronLink steps of one phase."""
    n, chips, r = system.ranks_per_node, system.chips_per_node, system.ranks_per_chip
    if algorithm == "ring":
        return n - 1
    if algorithm == "kangaring":
        return n // 2 - 1
    if algorithm == "mesh":
        return int(chips > 1) + int(r > 1)
    return int(math.log2(chips)) + int(r > 1)


def intra_phase(system: NeuronSystem, algorithm: str, phase: str, size: float, share: float = 1.0):
    """(steps, link_us, hbm_us) of one phase of ``algorithm`` inside a node on a ``size``-byte buffer,
    with ``share`` of the bandwidths (the DMA share when streams compete)."""
    n, r = system.ranks_per_node, system.ranks_per_chip
    link_us = _link_bytes(system, algorithm, size) / (1000 * system.chip_link_gbps * share)
    hbm_us = 0.0
    if system.hbm_gbps_per_chip is not None:
        touched = c.HBM_TOUCHES[algorithm][phase] * r * size * (n - 1) / n
        hbm_us = touched / (1000 * system.hbm_gbps_per_chip * share)
    return intra_steps(system, algorithm), link_us, hbm_us


def inter_phase(system: NeuronSystem, algorithm: str, size: float, share: float = 1.0):
    """(EFA steps, efa_us) of one phase between nodes on a ``size``-byte buffer per group."""
    x = system.nodes
    steps = {"ring": x - 1, "mesh": 1, "rdh": int(math.log2(x))}[algorithm]
    gbps = system.efa_gbps_per_rank * system.efa_efficiency(algorithm) * share
    return steps, size * (x - 1) / x / (1000 * gbps)
