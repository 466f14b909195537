"""The numbers the Neuron runtime's collectives are documented with, and the assumptions that fill in
what the documentation leaves out.

Source: the AWS Neuron SDK documentation (repository aws-neuron/aws-neuron-sdk, commit
81ce03ae261e12925e53437a0f690478e6366155, release 2.32.0); each constant names its file and section.
Sizes are bytes, latencies microseconds, bandwidths GB/s (10**9 B/s). Neuron's tools write "MB" for
2**20 bytes (nccom-test.rst, "CLI arguments": "``-f 1048576`` can be written as ``-f 1MB``"), so the
size ranges below read "MB" as MiB.

A constant whose comment says "assumption" is not published: it has a range, and
:class:`~trnsim.model.runtimes.neuron_system.NeuronSystem` takes another value.
"""

NEURON_DOCS_COMMIT = "81ce03ae261e12925e53437a0f690478e6366155"

MiB = 1 << 20

# The algorithms the runtime runs inside one NeuronLink domain, and across EFA.
# neuron-runtime/explore/intranode-collective-comm.rst: Ring, Mesh, KangaRing, RDH;
# neuron-runtime/explore/internode-collective-comm.rst: Ring, Mesh, RDH (one rank per node), and the
# Hierarchical algorithm that composes an intra-node and an inter-node one (multiple ranks per node).
INTRA_ALGORITHMS = ("mesh", "rdh", "kangaring", "ring")
INTER_ALGORITHMS = ("mesh", "rdh", "ring")

# intranode-collective-comm.rst, "Algorithm Summary" table, column "Sweet Range (Empirically)", and
# the figure mesh-rdh-kr-summary.png under it: Mesh < 1MB, RDH 1-56MB, KangaRing > 56MB, Ring
# "Fallback only". Measured on the 16-chip 2D torus with 4 ranks per chip (the page's Mesh and RDH
# sections: "4 local ranks", "4 groups of 16 ranks", "the other 60 off-chip ranks"): 64 ranks.
MESH_BELOW_BYTES = 1 * MiB
KANGARING_ABOVE_BYTES = 56 * MiB
RANGES_RANKS = 64

# intranode-collective-comm.rst, "Collective Communication Operations": "the per-hop latency of
# Ring/KangaRing is about 1-2 us (HBM load dependent)". The middle of the range.
HOP_LATENCY_US = 1.5
HOP_LATENCY_RANGE_US = (1.0, 2.0)

# internode-collective-comm.rst, "Collective Communication Operations": "the per-hop or point-to-point
# latency is ~15us"; neuron-runtime/about/collectives.rst, "System Connectivity": ib_write_lat, HBM
# to HBM across servers, 15 us.
EFA_HOP_LATENCY_US = 15.0

# Assumption: the fixed cost of one call (the compute engine triggering the CC core, the first
# semaphore handshake, the completion signal; compute-comm-overlap.rst, "Background"). nccom-test.rst's
# smallest published time, the 32-rank fp32 all-gather of 1 KiB in the --show-input-output-size example
# (6.16 us, a Mesh of two steps), less two hops of 1.5 us, leaves about 3 us; its 8-rank --stats
# example (10.0 us at 1 KiB) leaves about 7 us. Range 2-10 us. (The --show-algorithm example's
# 300 us floor is far above both and unexplained; it is not used.)
CALL_OVERHEAD_US = 3.0
CALL_OVERHEAD_RANGE_US = (2.0, 10.0)

# Assumption: the share of a link each inter-node algorithm keeps over EFA. The order is documented
# (internode-collective-comm.rst, "Algorithm Summary", "Network BW Utilization": Ring high, RDH
# "> Mesh; < Ring", Mesh low, from ingress congestion); the values are not. Ranges: Ring 0.9-1,
# RDH 0.6-0.9, Mesh 0.3-0.6.
INTER_EFFICIENCY = {"ring": 1.0, "rdh": 0.8, "mesh": 0.5}

# HBM accesses per byte of a chunk passing one rank (intranode-collective-comm.rst, "KangaRing
# AllGather" and "KangaRing ReduceScatter"): Ring all-gather 1R1W (2), reduce-scatter 2R1W (3);
# KangaRing per two ranks 1R2W (3) and 3R1W (4), so 1.5 and 2 per rank. Mesh and RDH have "Normal"
# HBM pressure in the summary table: taken as Ring's (an assumption).
HBM_TOUCHES = {
    "ring": {"allgather": 2.0, "reducescatter": 3.0},
    "mesh": {"allgather": 2.0, "reducescatter": 3.0},
    "rdh": {"allgather": 2.0, "reducescatter": 3.0},
    "kangaring": {"allgather": 1.5, "reducescatter": 2.0},
}

# Logical NeuronCores. about-neuron/arch/neuron-features/logical-neuroncore-config.rst: "LNC can only
# be set to 1 or 2"; Trainium2 has 8 physical cores, LNC=2 (the default) exposes 4 ranks per chip.
# about-neuron/arch/neuron-hardware/trainium3.rst: Trainium3 also has 8 cores and LNC.
LNC_VALUES = (1, 2)
DEFAULT_LNC = 2
PHYSICAL_CORES_PER_CHIP = 8

# compute-comm-overlap.rst, "Overlap Between Communications - Multi-stream CC": two CC cores per
# physical core, so four per logical core at LNC=2, "supporting up to four concurrent CC streams".
CC_CORES_PER_PHYSICAL_CORE = 2

# compute-comm-overlap.rst, "Adjusting Static DMA Priority": a DMA engine serves up to 16 rings round
# robin, switching only at packet boundaries; compute DMA packets default to 4 KiB
# (NEURON_RT_DBG_DMA_PACKETIZATION_SIZE, "the empirically determined minimum for DMA/HBM efficiency",
# may only grow); collective DMA packets default to, and at most are, 64 KiB
# (NEURON_RT_DBG_CC_DMA_PACKET_SIZE, may only shrink).
DMA_RINGS_PER_ENGINE = 16
COMPUTE_DMA_PACKET_BYTES = 4096
CC_DMA_PACKET_BYTES = 65536
MIN_DMA_PACKET_BYTES = 4096  # assumption: the smallest packet worth setting, the compute default
