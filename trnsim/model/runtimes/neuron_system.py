"""A group of ranks as the Neuron runtime sees it, as numbers: chips, ranks per chip, nodes, the
NeuronLink and EFA bandwidth each rank has, the chips' torus if they form one; and how concurrent
collective streams share the DMA engines.

A rank is a logical NeuronCore: ``physical cores / LNC`` per chip (:func:`lnc_ranks_per_chip`). A
node is one NeuronLink domain (a server's 16-chip torus, or an UltraServer's 64 chips: the runtime's
"intra-node" covers every chip joined by NeuronLink, neuron-runtime/about/collectives.rst,
"Intra-node Collectives"); nodes talk over EFA. The group takes the same ranks on every chip and
node (internode-collective-comm.rst: groups across nodes "are always formed with symmetry").
"""

import math
from dataclasses import dataclass

from trnsim.errors import UsageError
from trnsim.model.runtimes import neuron_constants as c


def _whole(name: str, value, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise UsageError(f"Neuron system: {name}: expected a whole number of at least {low}, got {value!r}")


def _rate(name: str, value, positive: bool = True) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (positive and value == 0):
        what = "a positive" if positive else "a non-negative"
        raise UsageError(f"Neuron system: {name}: expected {what} finite number, got {value!r}")


def lnc_ranks_per_chip(lnc: int = c.DEFAULT_LNC, physical_cores: int = c.PHYSICAL_CORES_PER_CHIP) -> int:
    """Ranks (logical NeuronCores) a chip exposes: its physical cores over the LNC setting.

    logical-neuroncore-config.rst: LNC is 1 or 2; 8 physical cores give 4 ranks at LNC=2 (the
    default) and 8 at LNC=1.

    >>> lnc_ranks_per_chip(2), lnc_ranks_per_chip(1)
    (4, 8)
    """
    if lnc not in c.LNC_VALUES or isinstance(lnc, bool):
        raise UsageError(f"Neuron system: lnc: expected one of 1, 2, got {lnc!r}")
    _whole("physical_cores", physical_cores, 1)
    if physical_cores % lnc:
        raise UsageError(
            f"Neuron system: physical_cores: expected a multiple of lnc ({lnc}), got {physical_cores}"
        )
    return physical_cores // lnc


def max_cc_streams(lnc: int = c.DEFAULT_LNC) -> int:
    """Concurrent collective streams a logical core can run: one per CC core, two CC cores per physical
    core (compute-comm-overlap.rst, "Multi-stream CC": four at LNC=2)."""
    lnc_ranks_per_chip(lnc)
    return c.CC_CORES_PER_PHYSICAL_CORE * lnc


def dma_shares(packet_bytes) -> tuple[float, ...]:
    """The share of a DMA engine each of several busy rings gets.

    An engine serves its rings round robin and switches only at packet boundaries
    (compute-comm-overlap.rst, "Adjusting Static DMA Priority"), so while all are busy each ring moves
    one packet per turn: its share is its packet size over the sum. At most
    :data:`~neuron_constants.DMA_RINGS_PER_ENGINE` rings.

    >>> dma_shares([65536, 4096])  # a collective at the 64 KiB default against compute's 4 KiB
    (0.9411764705882353, 0.058823529411764705)
    """
    sizes = list(packet_bytes)
    if not 1 <= len(sizes) <= c.DMA_RINGS_PER_ENGINE:
        raise UsageError(
            f"Neuron DMA: packet_bytes: expected 1 to {c.DMA_RINGS_PER_ENGINE} rings, got {len(sizes)}"
        )
    for size in sizes:
        _whole("packet_bytes", size, 1)
    total = sum(sizes)
    return tuple(size / total for size in sizes)


def torus_links(dims: tuple[int, ...]) -> int:
    """Links per chip in a torus: two per dimension of more than 2 chips, one for a dimension of 2."""
    return sum(2 if m > 2 else 1 for m in dims if m > 1)


def torus_mean_hops(dims: tuple[int, ...]) -> float:
    """Mean shortest-path hops from a chip to the other chips of a torus (a ring's distance is
    ``min(k, m - k)``, dimensions add)."""
    chips = math.prod(dims)
    if chips < 2:
        return 0.0
    total = sum(sum(min(k, m - k) for k in range(m)) / m for m in dims)  # mean over all chips, self too
    return total * chips / (chips - 1)


@dataclass(frozen=True)
class NeuronSystem:
    """A collective group on Trainium chips, as numbers.

    Attributes
    ----------
    chips_per_node:
        Chips of one NeuronLink domain in the group (at least 1).
    ranks_per_chip:
        Ranks of each chip in the group: :func:`lnc_ranks_per_chip` for whole chips (4 at LNC=2), 1
        for a one-rank-per-chip group.
    link_gbps_per_rank:
        NeuronLink bandwidth per rank, per direction, GB/s: the chip's links over its ranks (for
        example 4 links x 128 GB/s / 4 ranks = 128). Traffic between ranks of one chip is not
        charged to it (an assumption: on-chip moves cost HBM, below, and hops).
    nodes:
        NeuronLink domains joined over EFA (default 1).
    efa_gbps_per_rank:
        EFA bandwidth per rank per direction, GB/s (collectives.rst: 200 Gbit/s per chip, 50 Gbit/s
        = 6.25 GB/s per rank at 4 ranks per chip). Needed when ``nodes > 1``.
    torus_dims:
        The node's chips as a torus (``(4, 4)``); their product is ``chips_per_node``. None: every chip
        one hop from every other (a switched fabric).
    hbm_gbps_per_chip:
        HBM bandwidth per chip, GB/s, or None to leave HBM out. With it, an algorithm's time is
        bounded by its HBM accesses (:data:`~neuron_constants.HBM_TOUCHES`): what makes KangaRing
        beat Ring and RDH at large sizes.
    hop_latency_us, efa_hop_latency_us, call_overhead_us:
        Per algorithm step on NeuronLink and over EFA, and per call
        (:mod:`~trnsim.model.runtimes.neuron_constants` gives sources and ranges).
    efa_ring_efficiency, efa_rdh_efficiency, efa_mesh_efficiency:
        The share of the EFA bandwidth each inter-node algorithm keeps (assumptions, in
        :data:`~neuron_constants.INTER_EFFICIENCY`).
    ranges_per_rank:
        Apply the documented size ranges (measured at 64 ranks) to each rank's share of the buffer
        (size / ranks, against 1 MiB / 64 and 56 MiB / 64), so a group of 16 ranks leaves Mesh at
        256 KiB and RDH at 14 MiB. An assumption: it reconciles nccom-test.rst's 16-rank
        --show-algorithm example (Mesh at 128 KiB, RDH at 2 MiB, KangaRing at 32 MiB) with the
        documented 64-rank ranges; False applies the ranges to the size as they are.
    """

    chips_per_node: int
    ranks_per_chip: int
    link_gbps_per_rank: float
    nodes: int = 1
    efa_gbps_per_rank: float = 0.0
    torus_dims: tuple[int, ...] | None = None
    hbm_gbps_per_chip: float | None = None
    hop_latency_us: float = c.HOP_LATENCY_US
    efa_hop_latency_us: float = c.EFA_HOP_LATENCY_US
    call_overhead_us: float = c.CALL_OVERHEAD_US
    efa_ring_efficiency: float = c.INTER_EFFICIENCY["ring"]
    efa_rdh_efficiency: float = c.INTER_EFFICIENCY["rdh"]
    efa_mesh_efficiency: float = c.INTER_EFFICIENCY["mesh"]
    ranges_per_rank: bool = True

    def __post_init__(self):
        _check(self)

    @property
    def ranks_per_node(self) -> int:
        return self.chips_per_node * self.ranks_per_chip

    @property
    def n_ranks(self) -> int:
        return self.nodes * self.ranks_per_node

    @property
    def chip_link_gbps(self) -> float:
        return self.link_gbps_per_rank * self.ranks_per_chip

    def efa_efficiency(self, algorithm: str) -> float:
        return getattr(self, f"efa_{algorithm}_efficiency")


def _check(s: NeuronSystem) -> None:
    _whole("chips_per_node", s.chips_per_node, 1)
    _whole("ranks_per_chip", s.ranks_per_chip, 1)
    _whole("nodes", s.nodes, 1)
    if s.n_ranks < 2:
        raise UsageError("Neuron system: expected at least 2 ranks in the group, got 1")
    _rate("link_gbps_per_rank", s.link_gbps_per_rank)
    _rate("efa_gbps_per_rank", s.efa_gbps_per_rank, positive=s.nodes > 1)
    for name in ("hop_latency_us", "efa_hop_latency_us", "call_overhead_us"):
        _rate(name, getattr(s, name), positive=False)
    for algorithm in c.INTER_ALGORITHMS:
        value = s.efa_efficiency(algorithm)
        _rate(f"efa_{algorithm}_efficiency", value)
        if value > 1:
            raise UsageError(f"Neuron system: efa_{algorithm}_efficiency: expected at most 1, got {value!r}")
    if s.hbm_gbps_per_chip is not None:
        _rate("hbm_gbps_per_chip", s.hbm_gbps_per_chip)
    if s.torus_dims is not None:
        dims = s.torus_dims
        if not isinstance(dims, tuple) or not dims:
            raise UsageError(f"Neuron system: torus_dims: expected a tuple of whole numbers, got {dims!r}")
        for size in dims:
            _whole("torus_dims", size, 1)
        if math.prod(dims) != s.chips_per_node:
            raise UsageError(
                f"Neuron system: torus_dims: expected dimensions whose product is chips_per_node "
                f"({s.chips_per_node}), got {dims!r}"
            )
    if not isinstance(s.ranges_per_rank, bool):
        raise UsageError(f"Neuron system: ranges_per_rank: expected true or false, got {s.ranges_per_rank!r}")
