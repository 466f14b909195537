"""NCCL's ncclTopoTuneModel (src/graph/tuning.cc lines 243-541, NCCL 2.30.7): per function, algorithm
and protocol, a bandwidth (GB/s, the 'algorithm bandwidth' the time divides the size by) and a
latency (microseconds), with NCCL's enable rules applied (a disabled pair has bandwidth 0).

The code follows the C++ loop statement by statement; comments give the lines. NCCL keeps these in
float32, this module in float64 (a relative difference under 1e-6).
"""

import math
from dataclasses import dataclass

from trnsim.model.runtimes import nccl_constants as c
from trnsim.model.runtimes.nccl_system import NcclGraph, NcclSystem

ALLREDUCE, ALLGATHER, REDUCESCATTER = (
    c.FUNCTIONS.index(f) for f in ("allreduce", "allgather", "reducescatter")
)
BROADCAST, REDUCE = c.FUNCTIONS.index("broadcast"), c.FUNCTIONS.index("reduce")


@dataclass(frozen=True)
class NcclTuning:
    """comm->bandwidths and comm->latencies, indexed [function][algorithm][protocol] as NCCL's."""

    bandwidth_gbps: tuple[tuple[tuple[float, ...], ...], ...]
    latency_us: tuple[tuple[tuple[float, ...], ...], ...]


def log2i(n: int) -> int:
    """src/include/utils.h line 56 (log2Down of bitops.h): floor(log2(n)), -1 for 0."""
    return n.bit_length() - 1 if n > 0 else -1


def graph_for(system: NcclSystem, a: int) -> NcclGraph | None:
    """graphs[a] of src/init.cc lines 980-981 (Tree and PAT read the tree search, NVLS and NVLSTree
    the NVLS one); ring and tree get the smaller of their channel counts (init.cc line 1459)."""
    if a in (c.NVLS, c.NVLS_TREE):
        return system.nvls
    if a == c.COLLNET_DIRECT:
        return system.collnet_direct
    if a == c.COLLNET_CHAIN:
        return system.collnet_chain
    graph = system.ring if a == c.RING else system.tree_graph
    channels = min(system.ring.n_channels, system.tree_graph.n_channels)
    return NcclGraph(channels, graph.bw_intra_gbps, graph.bw_inter_gbps, graph.latency_inter_us)


def _caps(system: NcclSystem) -> dict[str, float]:
    """Lines 263-276: the per-architecture caps for this node count."""
    n_nodes = system.n_nodes
    cci = c.compcap_index(system.compute_capability)
    index2 = n_nodes - 1 if n_nodes <= 2 else 2
    index1 = cci if n_nodes == 1 else (1 if system.cpu == "x86_amd" else 0)
    return {
        "ll_max": c.LL_MAX_BW_GBPS[index1][index2],
        "tree": c.PER_CH_MAX_TREE_BW_GBPS[cci][index2],
        "ring_ll128": c.PER_CH_MAX_RING_LL128_BW_GBPS[cci][index2],
        "tree_ll128": c.PER_CH_MAX_TREE_LL128_BW_GBPS[cci][index2],
        "nvls_tree": c.PER_CH_MAX_NVLS_TREE_BW_GBPS[cci][index2],
        "nvls_eff": c.NVLS_EFFICIENCY[cci],
    }


def considered(coll: int, a: int, p: int, system: NcclSystem) -> bool:
    """Lines 294-304: the pairs the loop prices for each function (others keep bandwidth 0)."""
    if coll in (BROADCAST, REDUCE) and a != c.RING:
        return False
    if coll in (REDUCESCATTER, ALLGATHER) and a not in (c.PAT, c.RING, c.NVLS, c.COLLNET_DIRECT):
        return False
    if coll == ALLREDUCE and a == c.PAT:
        return False
    if a in (c.NVLS, c.NVLS_TREE) and p != c.SIMPLE:
        return False
    return not (a == c.PAT and (p != c.SIMPLE or not system.pat_enabled))


def _nvls_bw(system: NcclSystem, coll: int, a: int, graph: NcclGraph, caps: dict) -> float | None:
    """Lines 307-323: NVLS and NVLSTree bandwidth per channel (None: fewer than 2 channels)."""
    if graph.n_channels < 2:
        return None
    ppn = system.n_ranks / system.n_nodes
    intra = graph.bw_intra_gbps * caps["nvls_eff"] * (graph.n_channels - 1) / graph.n_channels
    intra *= 2.0 if coll == ALLREDUCE else (ppn - 1) / ppn
    inter = graph.bw_inter_gbps * (2 if system.n_nodes <= 2 and a == c.NVLS_TREE else 1)
    return min(intra, inter, caps["nvls_tree"] if a == c.NVLS_TREE else math.inf)


def _refine(system: NcclSystem, coll: int, a: int, p: int, bus: float, graph: NcclGraph, caps: dict) -> float:
    """Lines 326-350: the protocol and algorithm factors and caps."""
    nch = graph.n_channels
    if a == c.RING and p == c.LL:
        bus = min(caps["ll_max"], bus * c.RING_LL_FACTOR)
    if a == c.RING and p == c.LL128:
        bus = min(bus * c.RING_LL128_FACTOR, nch * caps["ring_ll128"])
    if a == c.TREE and coll == ALLREDUCE:
        bus = min(bus * c.TREE_ALLREDUCE_FACTOR, nch * caps["tree"])
    if a == c.TREE and p == c.LL:
        bus = min(bus * c.TREE_LL_FACTOR, caps["ll_max"])
    if a == c.TREE and p == c.LL128:
        factor = c.TREE_LL128_FACTOR_ONE_NODE if system.n_nodes == 1 else c.TREE_LL128_FACTOR_NODES
        bus = min(bus * factor, nch * caps["tree_ll128"])
    if a == c.TREE and system.simple_tree_pattern:
        bus *= c.SIMPLE_TREE_PATTERN_FACTOR
    if a == c.PAT:
        bus *= c.PAT_FACTOR
    if a in (c.COLLNET_DIRECT, c.COLLNET_CHAIN) and p != c.SIMPLE:
        bus = 0.0
    if a == c.COLLNET_DIRECT and p == c.SIMPLE:
        ppn = system.n_ranks / system.n_nodes
        if coll in (ALLGATHER, REDUCESCATTER):
            bus = ppn * min(graph.bw_intra_gbps, graph.bw_inter_gbps * c.COLLNET_DIRECT_INTER_FACTOR)
        else:
            factor = ppn / nch  # GPU/NIC ratio
            factor -= (factor - 1) / 2
            bus /= factor
            if system.compute_capability >= 90:
                bus *= c.COLLNET_DIRECT_SM90_FACTOR
    return bus


def _collnet_gather_ok(system: NcclSystem, coll: int, a: int, p: int) -> bool:
    """Lines 351-374: multi-node NVLS and CollNetDirect allgather/reducescatter need the CollNet
    plugin's iallgather/ireducescatter and no more local ranks than CollNet heads (taken as the
    CollNetDirect channel count, an assumption)."""
    if a not in (c.NVLS, c.COLLNET_DIRECT) or p != c.SIMPLE or coll not in (ALLGATHER, REDUCESCATTER):
        return True
    if system.n_nodes <= 1:
        return True
    if not (system.collnet and system.collnet_allgather):
        return False
    heads = system.collnet_direct.n_channels if system.collnet_direct is not None else 0
    return system.ranks_per_node <= heads


def bandwidth(system: NcclSystem, coll: int, a: int, p: int) -> float:
    """comm->bandwidths[coll][a][p] before the enable rules (lines 305-383); 0 when not priced."""
    graph = graph_for(system, a)
    if graph is None or not considered(coll, a, p, system):
        return 0.0
    caps = _caps(system)
    collnet = a in (c.COLLNET_DIRECT, c.COLLNET_CHAIN)
    bw = graph.bw_intra_gbps if system.n_nodes <= 2 or collnet else graph.bw_inter_gbps
    if a in (c.NVLS, c.NVLS_TREE):
        bw = _nvls_bw(system, coll, a, graph, caps)
        if bw is None:
            return 0.0
    bus = _refine(system, coll, a, p, graph.n_channels * bw, graph, caps)
    if not _collnet_gather_ok(system, coll, a, p):
        bus = 0.0
    # lines 376-382: bus bandwidth to algorithm bandwidth (not for non-ring allgather/reducescatter)
    if not (a != c.RING and coll in (ALLGATHER, REDUCESCATTER)):
        bus *= system.n_ranks / nsteps(system, coll) if a in (c.RING, c.NVLS, c.NVLS_TREE) else 0.5
    return bus


def nsteps(system: NcclSystem, coll: int) -> int:
    """Lines 289-291."""
    n = system.n_ranks
    if coll == ALLREDUCE:
        return 2 * (n - 1)
    return n - 1 if coll in (REDUCESCATTER, ALLGATHER) else n


def _hw_latency(system: NcclSystem, hw: int, a: int, p: int) -> float:
    # lines 277-280: on POWER CPUs Tree/Simple over PCI takes Ring/Simple's latency
    if system.cpu == "power" and hw == c.PCI and a == c.TREE and p == c.SIMPLE:
        return c.HW_LATENCY_US[c.PCI][c.RING][c.SIMPLE]
    return c.HW_LATENCY_US[hw][a][p]


def latency(system: NcclSystem, coll: int, a: int, p: int) -> float:
    """comm->latencies[coll][a][p] (lines 384-435)."""
    graph = graph_for(system, a)
    inter_latency = graph.latency_inter_us if graph is not None else 0.0
    n, n_nodes, ppn = system.n_ranks, system.n_nodes, system.n_ranks / system.n_nodes
    intra_hw = c.NVLINK if system.intra_link == "nvlink" and system.ranks_per_node > 1 else c.PCI
    hw = intra_hw if n_nodes == 1 else c.NET
    lat = c.BASE_LATENCY_US[a][p]
    intra = _hw_latency(system, intra_hw, a, p)
    inter = _hw_latency(system, c.NET, c.TREE if ppn == 1 else a, p) + inter_latency
    if p == c.SIMPLE:
        inter += inter_latency  # line 391: the flush's extra latency
    steps, local = nsteps(system, coll), n // n_nodes
    if a == c.RING:
        return lat + _ring_latency(system, coll, p, hw, intra, inter, steps)
    if a == c.TREE:
        return lat + (2 * ((local - 1) * intra + log2i(n_nodes) * inter) if coll == ALLREDUCE else 0.0)
    if a == c.COLLNET_DIRECT:
        return lat + 2 * (min(1, local - 1) * intra + (local - 1) * c.COLLNET_DIRECT_ARITY_US) + inter
    if a == c.COLLNET_CHAIN:
        return lat + 2 * (local - 1) * intra + inter
    if a == c.NVLS:  # line 425: NVLS replaces the base latency
        return intra + (inter if n_nodes > 1 else 0.0)
    if a == c.NVLS_TREE:
        return lat + intra + 2 * log2i(n_nodes) * inter
    if coll in (ALLGATHER, REDUCESCATTER):  # PAT
        return lat + log2i(n_nodes) * (inter / c.PAT_LOG_LATENCY_DIVISOR) + n * c.PAT_LINEAR_LATENCY_US
    return lat


def _ring_latency(system, coll, p, hw, intra, inter, steps) -> float:
    """Lines 393-413."""
    hw_lat = _hw_latency(system, hw, c.RING, p)
    if coll in (REDUCE, BROADCAST):
        if system.ring_same_channels:
            return hw_lat
        if p == c.SIMPLE:  # "some chunk latency, waiting for proper chunk modeling"
            hw_lat = _hw_latency(system, hw, c.TREE, p)
        return steps * hw_lat
    overhead = 0.0
    if system.n_nodes > 1:
        overhead = c.NET_OVERHEAD_US[system.cpu] * (c.NET_OVERHEAD_SIMPLE_FACTOR if p == c.SIMPLE else 1)
    intra = max(intra, overhead)
    inter_steps = 0 if system.n_nodes == 1 else (2 if coll == ALLREDUCE else 1) * (system.n_nodes - 1)
    return (steps - inter_steps) * intra + inter_steps * inter


def algorithm_enabled(system: NcclSystem, a: int) -> bool:
    """Lines 498-512 (algoEnable without NCCL_ALGO)."""
    if system.n_nodes == 1 and a == c.NVLS_TREE:
        return False
    if not system.collnet and (
        a in (c.COLLNET_DIRECT, c.COLLNET_CHAIN) or (a == c.NVLS and system.n_nodes > 1)
    ):
        return False
    return not (a == c.COLLNET_DIRECT and not system.nvswitch)


def tune(
    system: NcclSystem, algorithms: frozenset[int] | None, protocols: frozenset[int] | None
) -> NcclTuning:
    """The whole table, with NCCL_ALGO / NCCL_PROTO given as sets of indexes (None: NCCL's defaults;
    an LL128 named in ``protocols`` is on whatever NCCL's default rule says, lines 446 and 518)."""
    bws, lats = [], []
    for coll in range(len(c.FUNCTIONS)):
        bw_rows, lat_rows = [], []
        for a in range(len(c.ALGORITHMS)):
            algo_on = algorithm_enabled(system, a) and (algorithms is None or a in algorithms)
            bw_row, lat_row = [], []
            for p in range(len(c.PROTOCOLS)):
                proto_on = protocols is None or p in protocols
                if protocols is None and p == c.LL128:
                    proto_on = system.ll128_enabled
                bw = bandwidth(system, coll, a, p) if algo_on and proto_on else 0.0
                bw_row.append(bw)
                lat_row.append(latency(system, coll, a, p))
            bw_rows.append(tuple(bw_row))
            lat_rows.append(tuple(lat_row))
        bws.append(tuple(bw_rows))
        lats.append(tuple(lat_rows))
    return NcclTuning(tuple(bws), tuple(lats))
