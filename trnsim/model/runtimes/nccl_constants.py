"""The numbers NCCL's own cost model uses, copied from NCCL 2.30.7's source (NVIDIA/nccl, commit
5067397c2676d5aed50042fc39e5c8ee96eb0027, makefiles/version.mk: NCCL_MAJOR 2, NCCL_MINOR 30,
NCCL_PATCH 7).

Each table names the file, the function or definition and the lines it comes from. The indexes follow
NCCL's: algorithms in the order of src/include/plugin/nccl_tuner.h (Tree 0, Ring 1, CollNetDirect 2,
CollNetChain 3, NVLS 4, NVLSTree 5, PAT 6), protocols LL 0, LL128 1, Simple 2, hardware NVLINK 0, PCI 1,
NET 2, compute-capability classes Volta 0, Ampere 1, Hopper 2, Blackwell 3, and node-count columns
N1 / N2 / N4 (one node, two nodes, more). Bandwidths are GB/s (10**9 B/s), latencies microseconds.
"""

NCCL_VERSION = "2.30.7"
NCCL_COMMIT = "5067397c2676d5aed50042fc39e5c8ee96eb0027"

# src/include/plugin/nccl_tuner.h lines 28-40: NCCL_ALGO_* and NCCL_PROTO_* (the order NCCL loops in,
# hence its tie rule: the first pair in this order among equal times wins)
ALGORITHMS = ("tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat")
PROTOCOLS = ("ll", "ll128", "simple")
TREE, RING, COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE, PAT = range(7)
LL, LL128, SIMPLE = range(3)
# src/include/plugin/nccl_tuner.h lines 45-47: NCCL_HW_NVLINK, NCCL_HW_PCI, NCCL_HW_NET
NVLINK, PCI, NET = range(3)

# src/include/nccl_common.h lines 72-82: the functions the tuner covers (NCCL_NUM_FUNCTIONS 5);
# AlltoAll (8) is not among them (see :data:`ALLTOALL_AS_P2P`)
FUNCTIONS = ("broadcast", "reduce", "allgather", "reducescatter", "allreduce")


def compcap_index(compute_capability: int) -> int:
    """src/graph/tuning.cc ncclTopoTuneModel lines 263-266: the row of the per-architecture tables."""
    if compute_capability >= 100:
        return 3
    if compute_capability >= 90:
        return 2
    return 1 if compute_capability >= 80 else 0


# src/graph/tuning.cc lines 138-144, nvlsEfficiency[NCCL_NUM_COMPCAPS]
NVLS_EFFICIENCY = (0.0, 0.0, 0.85, 0.74)

# src/graph/tuning.cc lines 149-155, ncclTunerConstantsDefaults.baseLatencies[algorithm][protocol]
BASE_LATENCY_US = (
    (6.8, 14.0, 8.4),  # Tree
    (6.6, 14.0, 8.4),  # Ring
    (0.0, 0.0, 0.0),  # CollNetDirect
    (0.0, 0.0, 0.0),  # CollNetChain
    (0.0, 0.0, 0.0),  # NVLS
    (0.0, 0.0, 0.0),  # NVLSTree
    (8.0, 8.0, 8.0),  # PAT
)

# src/graph/tuning.cc lines 156-176, ncclTunerConstantsDefaults.hwLatencies[hw][algorithm][protocol]
HW_LATENCY_US = (
    (  # NVLINK, lines 158-163
        (0.6, 1.25, 4.0),
        (0.6, 1.9, 3.4),
        (0.0, 0.0, 3.7),
        (0.0, 0.0, 2.8),
        (0.0, 0.0, 25.0),
        (0.0, 0.0, 25.0),
        (0.0, 0.0, 4.0),
    ),
    (  # PCI, lines 164-169
        (1.0, 1.9, 4.0),
        (1.0, 2.5, 5.7),
        (0.0, 0.0, 3.7),
        (0.0, 0.0, 2.8),
        (0.0, 0.0, 0.0),
        (0.0, 0.0, 0.0),
        (0.0, 0.0, 4.0),
    ),
    (  # NET, lines 170-175
        (5.0, 8.5, 14.0),
        (2.7, 4.0, 14.0),
        (0.0, 0.0, 31.0),
        (0.0, 0.0, 30.0),
        (0.0, 0.0, 18.0),
        (0.0, 0.0, 20.9),
        (0.0, 0.0, 14.0),
    ),
)

# src/graph/tuning.cc lines 177-183, llMaxBws[index1][N1/N2/N4]. On one node index1 is the
# compute-capability class; on several it is the CPU: 0 Intel (and any non-AMD), 1 AMD (lines 268-271).
LL_MAX_BW_GBPS = (
    (39.0, 39.0, 20.4),
    (87.7, 22.5, 19.0),
    (141.0, 45.0, 35.0),
    (2 * 141.0, 2 * 45.0, 2 * 35.0),
)
# src/graph/tuning.cc lines 184-190, perChMaxRingLL128Bws[compcap][N1/N2/N4]
PER_CH_MAX_RING_LL128_BW_GBPS = (
    (20.0, 20.0, 20.0),
    (20.0, 20.0, 20.0),
    (36.7, 36.7, 36.7),
    (40.0, 40.0, 40.0),
)
# src/graph/tuning.cc lines 191-197, perChMaxTreeLL128Bws[compcap][N1/N2/N4]
PER_CH_MAX_TREE_LL128_BW_GBPS = (
    (20.0, 20.0, 20.0),
    (20.0, 20.0, 20.0),
    (36.7, 36.7, 29.0),
    (55.6, 31.67, 20.0),
)
# src/graph/tuning.cc lines 198-204, perChMaxTreeBws[compcap][N1/N2/N4]
PER_CH_MAX_TREE_BW_GBPS = (
    (26.5, 18.5, 10.0),
    (24.0, 23.6, 17.8),
    (38.7, 41.4, 36.0),
    (70.0, 42.8, 24.0),
)
# src/graph/tuning.cc lines 205-211, perChMaxNVLSTreeBws[compcap][N1/N2/N4]
PER_CH_MAX_NVLS_TREE_BW_GBPS = (
    (26.5, 18.5, 10.0),
    (24.0, 23.6, 17.8),
    (0.0, 57.7, 45.5),
    (0.0, 96.0, 80.0),
)

# src/graph/tuning.cc ncclTopoTuneModel lines 326-337: the protocol and algorithm efficiency factors
RING_LL_FACTOR = 0.5  # line 327: Ring/LL busBw = min(llMaxBw, busBw * .5)
RING_LL128_FACTOR = 0.92  # line 329: Ring/LL128 min(busBw * 0.92, nChannels * perChMaxRingLL128Bw)
TREE_ALLREDUCE_FACTOR = 0.92  # line 331: Tree allreduce min(busBw * .92, nChannels * perChMaxTreeBw)
TREE_LL_FACTOR = 1.0 / 3.8  # line 332: Tree/LL min(busBw / 3.8, llMaxBw)
TREE_LL128_FACTOR_ONE_NODE = 7.0 / 9.0  # line 335: Tree/LL128 on one node ...
TREE_LL128_FACTOR_NODES = 120.0 / 128.0  # ... and on several
SIMPLE_TREE_PATTERN_FACTOR = 0.85  # line 336: when the tree search fell back to NCCL_TOPO_PATTERN_TREE
PAT_FACTOR = 0.75  # line 337
COLLNET_DIRECT_SM90_FACTOR = 0.85  # line 348, minCompCap >= 90
COLLNET_DIRECT_INTER_FACTOR = 0.9  # line 342, allgather/reducescatter: ppn * min(bwIntra, bwInter * 0.9)
COLLNET_DIRECT_ARITY_US = 0.4  # line 421: "0.4 us arity serialization latency"
PAT_LOG_LATENCY_DIVISOR = 3.5  # line 432: log2(nNodes) * (interLat / 3.5)
PAT_LINEAR_LATENCY_US = 2.8  # line 433: + nRanks * 2.8
# src/graph/tuning.cc ncclTopoGetAlgoTime lines 647-650: multi-node Ring/Simple allreduce "plateau"
RING_PLATEAU_FACTOR = (1.9, 1.4)  # minCompCap < 80, >= 80
RING_PLATEAU_MIN_BYTES = 64  # nBytes / (comm->nChannels * nRanks) >= 64

# src/graph/tuning.cc lines 225-233, getNetOverhead: 1 us (Intel or non-x86), 2 us (AMD x86); x3 for
# Simple (line 408); applies to multi-node rings (lines 404-410)
NET_OVERHEAD_US = {"x86_intel": 1.0, "x86_amd": 2.0, "arm": 1.0, "power": 1.0}
NET_OVERHEAD_SIMPLE_FACTOR = 3

# src/graph/tuning.cc lines 620-627, treeCorrectionFactor[protocol][log2(nBytes / 64)], powers of two
# from 64 B to 256 MiB; applied to Tree allreduce for log2 index 0..22 (line 640) and, on Blackwell with
# an x86 CPU, to NVLSTree allreduce for 0..23 (lines 643-646)
TREE_CORRECTION = (
    (1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    + (1.0, 1.0, 1.0, 1.0),
    (1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.9, 0.9)
    + (0.9, 1.0, 1.0, 1.0),
    (0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7, 0.7)
    + (0.8, 0.9, 0.9, 0.9),
)
TREE_CORRECTION_LIMIT = {TREE: 23, NVLS_TREE: 24}

# src/include/device.h line 26; the protocol buffers of src/init.cc lines 810-813 (DEFAULT_LL_BUFFSIZE
# = NCCL_LL_LINES_PER_THREAD 8 x NCCL_LL_MAX_NTHREADS 512 x NCCL_STEPS x 16-byte ncclLLFifoLine;
# DEFAULT_LL128_BUFFSIZE = NCCL_LL128_ELEMS_PER_THREAD 120 x NCCL_LL128_MAX_NTHREADS 640 x NCCL_STEPS x
# 8 bytes; DEFAULT_BUFFSIZE 4 MiB), device.h lines 93-115 for the thread counts
NCCL_STEPS = 8
BUFFER_BYTES = (8 * 512 * NCCL_STEPS * 16, 120 * 640 * NCCL_STEPS * 8, 1 << 22)
# The payload each protocol carries: LL 8 bytes of data per 16-byte line (4-byte flag per 4-byte data,
# device.h lines 75-85); LL128 120 of every 128 bytes (NCCL_LL128_DATAELEMS 15 of NCCL_LL128_LINEELEMS
# 16 eight-byte words, device.h lines 110-112); Simple all of it. The tuner's 0.5 / 0.92 factors above
# are its rounded view of these.
PAYLOAD_FRACTION = (0.5, 120 / 128, 1.0)

# src/include/device.h: MAXCHANNELS (line 91), NCCL_MAX_DIRECT_ARITY (199), NCCL_MAX_NVLS_ARITY (213)
MAX_CHANNELS = 64
MAX_DIRECT_ARITY = 7
MAX_NVLS_ARITY = 32
# src/init.cc lines 1176-1177: the ring search looks for 1 to MAXCHANNELS / 2 channels
RING_MAX_CHANNELS = MAX_CHANNELS // 2

# src/graph/topo.h lines 17-35: the bandwidths NCCL's topology gives its links, GB/s
LOC_BW = 5000.0
NVLINK_BW_GBPS = {60: 18.0, 70: 20.0, 80: 20.0, 86: 12.0, 90: 20.6, 100: 40.1}
PCI_BW = 12.0  # PCI Gen3 x16; also the 256-thread threshold of tuning.cc line 245
NET_BW = 12.0  # 100 Gbit


def nvlink_bw_gbps(compute_capability: int) -> float:
    """src/graph/topo.h lines 274-282, ncclTopoNVLinkBw: one NVLink's bandwidth as NCCL counts it."""
    cc = compute_capability
    if cc >= 100:
        return NVLINK_BW_GBPS[100]
    if cc >= 90:
        return NVLINK_BW_GBPS[90]
    if cc == 86:
        return NVLINK_BW_GBPS[86]
    if cc >= 80:
        return NVLINK_BW_GBPS[80]
    if cc >= 70:
        return NVLINK_BW_GBPS[70]
    return NVLINK_BW_GBPS[60] if cc >= 60 else NVLINK_BW_GBPS[80]


# src/graph/search.cc lines 1051-1067: the per-channel speeds the topology search tries, fastest first,
# within a node (system->inter == 0) and across nodes
SPEEDS_INTRA = {
    0: (40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0),
    90: (60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0),
    100: (90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0),
}
SPEEDS_INTER = {
    0: (48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.4, 1.2)
    + (0.24, 0.12),
    90: (48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24)
    + (0.12,),
    100: (96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0)
    + (2.4, 1.2, 0.24, 0.12),
}
# src/graph/search.cc lines 1036-1049, ncclTopoDupChannels: a search result of at least 25 GB/s per
# channel is doubled into twice the channels at half the speed, unless (compute capability > 80) it is
# under 50 GB/s with more than 4 channels
DUP_MIN_BW = 25.0
DUP_SM90_MAX_BW = 50.0
DUP_SM90_MAX_CHANNELS = 4
# src/graph/search.cc line 1245: pass 1 stops lowering the speed below .49 x the best found
SPEED_DROP_LIMIT = 0.49

# src/transport/nvls.cc lines 155-157 and 209-214: the channels NVLS kernels run on (comm->nvlsChannels);
# the tuner uses the NVLS search graph's channel count instead, so these only describe the launch
NVLS_LAUNCH_CHANNELS = {90: 16, 100: 32, "100_one_node": 24}

# src/graph/connect.cc line 460 (ring/tree channels doubled after the search) and lines 480-483
# (doubled again on compute capability >= 90, several nodes, ring bwIntra > 45 GB/s, under 16 channels)
POSTSET_DOUBLE_BW = 45.0
POSTSET_DOUBLE_MAX_CHANNELS = 16

# src/enqueue.cc taskAppend lines 3070-3083: ncclAlltoAll is enqueued as nRanks ncclSend/ncclRecv
# pairs (point to point); the tuner (ncclTopoTuneModel, ncclTopoGetAlgoTime) never prices it
ALLTOALL_AS_P2P = True
