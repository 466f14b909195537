"""A system as NCCL's tuner sees it: the results of its topology searches and a few facts about the
machine, checked.

NCCL decides channel counts and per-channel bandwidths in its topology search (src/graph/search.cc,
ncclTopoCompute); the tuner (src/graph/tuning.cc, ncclTopoTuneModel) only reads the results. So this
description takes the results as numbers, one :class:`NcclGraph` per search NCCL runs. For one NVLink
domain around a switch, :func:`trnsim.model.runtimes.nccl_search.single_domain_system` reproduces the
search and fills them in.
"""

import math
from dataclasses import dataclass

from trnsim.errors import UsageError
from trnsim.model.runtimes.nccl_constants import (
    MAX_CHANNELS,
    NET_OVERHEAD_US,
    POSTSET_DOUBLE_BW,
    POSTSET_DOUBLE_MAX_CHANNELS,
)

INTRA_LINKS = ("nvlink", "pci")
CPUS = tuple(NET_OVERHEAD_US)


@dataclass(frozen=True)
class NcclGraph:
    """What the tuner reads from one search result (struct ncclTopoGraph, src/include/graph.h).

    Attributes
    ----------
    n_channels:
        Channels the search found (graph->nChannels), 1 to 64.
    bw_intra_gbps, bw_inter_gbps:
        Bandwidth per channel inside a node and across nodes (graph->bwIntra, graph->bwInter), GB/s.
    latency_inter_us:
        Extra network latency the search recorded (graph->latencyInter, from the network plugin's
        device properties); 0 for most plugins (an assumption: range 0 to a few microseconds).
    """

    n_channels: int
    bw_intra_gbps: float
    bw_inter_gbps: float
    latency_inter_us: float = 0.0

    @property
    def total_intra_gbps(self) -> float:
        return self.n_channels * self.bw_intra_gbps

    @property
    def total_inter_gbps(self) -> float:
        return self.n_channels * self.bw_inter_gbps


@dataclass(frozen=True)
class NcclSystem:
    """A communicator as NCCL's tuner sees it.

    Attributes
    ----------
    compute_capability:
        The GPUs' compute capability times ten (90 Hopper, 100 Blackwell); all ranks alike.
    n_ranks, n_nodes:
        Ranks in the communicator (at least 2: NCCL prices nothing for one rank, it copies locally)
        and nodes as NCCL counts them (a multi-node NVLink domain that NCCL fuses into one topology
        counts as one node); ranks per node must be whole.
    intra_link:
        ``"nvlink"`` when NCCL's paths between a node's GPUs are NVLink (graph->typeIntra == PATH_NVL),
        ``"pci"`` otherwise; with one rank per node NCCL's intra type is PATH_LOC, which takes the
        PCI latencies whatever this says.
    ring, tree:
        The ring and tree search results; ``tree`` defaults to ``ring`` (NCCL searches trees with the
        ring's channel count, src/init.cc lines 1184-1185; equal speed is an assumption).
    nvls:
        The NVLS search result, or None when the GPUs have no NVLink SHARP (multicast) switch.
    collnet_direct, collnet_chain:
        The CollNet search results when the network reduces in the switch (a CollNet plugin such as
        SHARP is loaded and enabled), else None.
    collnet_allgather:
        The CollNet plugin offers iallgather/ireducescatter (needed by multi-node NVLS and CollNetDirect
        allgather/reducescatter, tuning.cc lines 353-374).
    nvswitch:
        The node has NVSwitches (CollNetDirect requires them, tuning.cc line 509).
    cpu:
        ``"x86_intel"``, ``"x86_amd"``, ``"arm"`` or ``"power"``: the network post overhead, the LL
        bandwidth cap row on several nodes, Tree/Simple PCI latency on POWER and the Blackwell NVLSTree
        correction depend on it.
    ll128:
        Whether NCCL enables LL128 by default; None applies NCCL's rule (tuning.cc lines 518-536):
        compute capability >= 70 and NVLink (or one GPU) inside a node, assuming the GPU-NIC paths are
        PXB or better (PXN or better from compute capability 90).
    simple_tree_pattern:
        The tree search fell back to NCCL_TOPO_PATTERN_TREE on some node (Tree bandwidth x 0.85);
        an assumption, default no.
    comm_channels:
        comm->nChannels after connect.cc's duplication (used by the multi-node Ring/Simple plateau
        rule); None derives it: twice the smaller of ring and tree channels, doubled again on
        compute capability >= 90 with several nodes, ring bwIntra > 45 and under 16 channels,
        at most 64 (not counting NCCL_MIN/MAX_NCHANNELS, CTA limits or unpack networking).
    ring_same_channels:
        The ring search kept the same GPU order on every channel (graph->sameChannels; broadcast and
        reduce latency depend on it); an assumption, default yes.
    pat:
        NCCL_PAT_ENABLE: None is NCCL's default (PAT when there is one rank per node, compute
        capability >= 60 and the network is not device-offloaded).
    """

    compute_capability: int
    n_ranks: int
    n_nodes: int
    intra_link: str
    ring: NcclGraph
    tree: NcclGraph | None = None
    nvls: NcclGraph | None = None
    collnet_direct: NcclGraph | None = None
    collnet_chain: NcclGraph | None = None
    collnet_allgather: bool = False
    nvswitch: bool = True
    cpu: str = "x86_intel"
    ll128: bool | None = None
    simple_tree_pattern: bool = False
    comm_channels: int | None = None
    ring_same_channels: bool = True
    pat: bool | None = None

    def __post_init__(self):
        _check(self)

    @property
    def ranks_per_node(self) -> int:
        return self.n_ranks // self.n_nodes

    @property
    def tree_graph(self) -> NcclGraph:
        return self.tree if self.tree is not None else self.ring

    @property
    def collnet(self) -> bool:
        """NCCL's comm->config.collnetEnable after its checks (a CollNet search found channels)."""
        return self.collnet_direct is not None or self.collnet_chain is not None

    @property
    def ll128_enabled(self) -> bool:
        if self.ll128 is not None:
            return self.ll128
        return self.compute_capability >= 70 and (self.intra_link == "nvlink" or self.ranks_per_node == 1)

    @property
    def pat_enabled(self) -> bool:
        """src/graph/tuning.cc lines 215-223, ncclPatEnable."""
        if self.compute_capability < 60:
            return False
        if self.pat is not None:
            return self.pat
        return self.n_nodes == self.n_ranks

    @property
    def comm_n_channels(self) -> int:
        if self.comm_channels is not None:
            return self.comm_channels
        channels = min(MAX_CHANNELS, 2 * min(self.ring.n_channels, self.tree_graph.n_channels))
        if (
            self.compute_capability >= 90
            and self.n_nodes > 1
            and self.ring.bw_intra_gbps > POSTSET_DOUBLE_BW
            and channels < POSTSET_DOUBLE_MAX_CHANNELS
        ):
            channels *= 2
        return min(MAX_CHANNELS, channels)


def _whole(name: str, value, low: int, high: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high and value > high):
        span = f"from {low} to {high}" if high else f"of at least {low}"
        raise UsageError(f"NCCL system: {name}: expected a whole number {span}, got {value!r}")


def _rate(name: str, value, positive: bool = True) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (positive and value == 0):
        what = "a positive" if positive else "a non-negative"
        raise UsageError(f"NCCL system: {name}: expected {what} finite number, got {value!r}")


def _check_graph(name: str, graph) -> None:
    if not isinstance(graph, NcclGraph):
        raise UsageError(f"NCCL system: {name}: expected an NcclGraph, got {type(graph).__name__}")
    _whole(f"{name}.n_channels", graph.n_channels, 1, MAX_CHANNELS)
    _rate(f"{name}.bw_intra_gbps", graph.bw_intra_gbps)
    _rate(f"{name}.bw_inter_gbps", graph.bw_inter_gbps, positive=False)
    _rate(f"{name}.latency_inter_us", graph.latency_inter_us, positive=False)


def _check(system: NcclSystem) -> None:
    _whole("compute_capability", system.compute_capability, 30, 1000)
    _whole("n_ranks", system.n_ranks, 2)
    _whole("n_nodes", system.n_nodes, 1)
    if system.n_ranks % system.n_nodes:
        raise UsageError(
            f"NCCL system: n_ranks: expected a multiple of n_nodes ({system.n_nodes}), got {system.n_ranks}"
        )
    if system.intra_link not in INTRA_LINKS:
        raise UsageError(
            f"NCCL system: intra_link: expected one of {', '.join(INTRA_LINKS)}, got {system.intra_link!r}"
        )
    if system.cpu not in CPUS:
        raise UsageError(f"NCCL system: cpu: expected one of {', '.join(CPUS)}, got {system.cpu!r}")
    for name in ("ring", "tree", "nvls", "collnet_direct", "collnet_chain"):
        graph = getattr(system, name)
        if graph is not None or name == "ring":
            _check_graph(name, graph)
    if system.comm_channels is not None:
        _whole("comm_channels", system.comm_channels, 1, MAX_CHANNELS)
