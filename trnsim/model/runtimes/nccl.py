"""What NCCL itself predicts a collective costs, and which algorithm and protocol it picks.

NCCL chooses how to run each collective from a cost model of its own (src/graph/tuning.cc and
src/enqueue.cc; this module follows NCCL 2.30.7, commit 5067397c). At init, ncclTopoTuneModel gives
every (function, algorithm, protocol) a bandwidth and a latency from the topology search's results and
fixed tables; per call, ncclTopoGetAlgoTime prices each enabled pair as

    time_us = latency_us + nBytes / (1000 x bandwidth_gbps)

and topoGetAlgoInfo takes the smallest (the first in NCCL's order on a tie: Tree, Ring, CollNetDirect,
CollNetChain, NVLS, NVLSTree, PAT, then LL, LL128, Simple). That is what NCCL *expects*, the basis of
its choice, not a measurement: a runtime view next to trnsim's 'ideal' fabric limit.

Taken from NCCL verbatim (:mod:`~trnsim.model.runtimes.nccl_constants` cites file and lines for each):
the base and per-hop latencies per algorithm, protocol and link kind; the LL / LL128 / Tree / NVLSTree
bandwidth caps per architecture and node count; the efficiency factors (Ring LL x0.5, LL128 x0.92, Tree
x0.92 and LL /3.8, LL128 x7/9 or x120/128, PAT x0.75, NVLS efficiency 0.85 Hopper / 0.74 Blackwell,
CollNet ratios); the tree correction by size; the Ring/Simple multi-node plateau; the latency formulas;
the enable rules (NVLS needs multicast hardware, 2 channels and, across nodes, CollNet; NVLSTree
several nodes; PAT allgather/reducescatter with one rank per node; CollNet an in-network reduction and
at most 8 local ranks, CollNetDirect also NVSwitches; Tree allreduce only; broadcast and reduce ring
only; NVLS allgather/reducescatter at most 32 local ranks; LL128 NCCL's default rule); NCCL's sizes
(``nBytes`` is the whole buffer for allreduce, broadcast and reduce, and the gathered or scattered
whole, ranks x count, for allgather and reducescatter, enqueue.h ncclFuncMaxSendRecvCount) and its bus
bandwidth to algorithm bandwidth ratios.

Assumed (each named; the :class:`NcclSystem` field that overrides it in brackets):

- the search results: channel counts and per-channel speeds (``ring``, ``tree``, ``nvls``, ``collnet_*``;
  speeds are among search.cc's 3 to 96 GB/s steps). :func:`single_domain_system` reproduces NCCL's
  search for GPUs on one NVSwitch domain; other systems give them as numbers. The tree search's speed
  is the ring's unless given;
- network latency the plugin reports, 0 us (``latency_inter_us``; a few us at most);
- the CPU: x86 Intel, net overhead 1 us per step, x3 for Simple (``cpu``; AMD 2 us);
- the ring search kept one GPU order (``ring_same_channels``) and trees did not fall back to the simple
  pattern (``simple_tree_pattern``);
- comm->nChannels as connect.cc doubles it, without NCCL_MIN/MAX_NCHANNELS (``comm_channels``);
- a sum of a type NVLS and CollNet can reduce; no fp8 (NCCL penalises fp8 rings over 8 ranks); one
  operation, not an aggregated group (NCCL divides Tree latency over batched ops); no tuner plugin; no
  NCCL_ALGO / NCCL_PROTO unless passed to :func:`predict`; CUDA newer than 11.8;
- float64 where NCCL uses float32 (relative difference under 1e-6, which could only swap two pairs
  whose times agree to 1e-6).

Alltoall is not NCCL's to price: ncclAlltoAll runs as point-to-point sends and receives (enqueue.cc
lines 3070-3083). :func:`predict` models it simply, as ``p2p``/``simple`` (an assumption, not NCCL's):
one Ring/Simple hop of latency (base + one hardware latency) plus the bytes leaving each rank
(``(n-1)/n`` of its buffer) over the ring search's total per-GPU bandwidth inside the node, and over
the node's inter-node ring bandwidth shared by its ranks across nodes, whichever takes longer. It
ignores that NCCL sends pieces of up to 16 KiB per channel with LL (NCCL_P2P_LL_THRESHOLD).

Example: two Ampere GPUs whose ring search found 4 channels of 20 GB/s, no NVLS. At 8 B Ring/LL wins
with its latency, 6.6 us base + 2 steps x 0.6 us; at 1 GiB Ring/Simple, whose bandwidth is the ring's
80 GB/s (2 ranks: algorithm and bus bandwidth are equal) less its 15.2 us of latency.

>>> ring = NcclGraph(n_channels=4, bw_intra_gbps=20.0, bw_inter_gbps=20.0)
>>> two = NcclSystem(compute_capability=80, n_ranks=2, n_nodes=1, intra_link="nvlink", ring=ring)
>>> small = predict(two, "allreduce", 8)
>>> small.pick.algorithm, small.pick.protocol, round(small.pick.time_us, 2)
('ring', 'll', 7.8)
>>> big = predict(two, "allreduce", 1 << 30)
>>> big.pick.algorithm, big.pick.protocol, round(big.pick.busbw_gbps, 1)
('ring', 'simple', 79.9)
"""

from dataclasses import dataclass
from functools import lru_cache

from trnsim.errors import NotApplicableError, UsageError
from trnsim.model.runtimes import nccl_constants as c
from trnsim.model.runtimes.nccl_search import single_domain_system
from trnsim.model.runtimes.nccl_system import NcclGraph, NcclSystem
from trnsim.model.runtimes.nccl_tuner import ALLREDUCE, NcclTuning, log2i, tune

__all__ = [
    "OPS",
    "NcclChoice",
    "NcclGraph",
    "NcclPrediction",
    "NcclSystem",
    "predict",
    "single_domain_system",
]

OPS = (*c.FUNCTIONS, "alltoall")
# nccl-tests' bus bandwidth factors (src/*.cu of NVIDIA/nccl-tests, doc/PERFORMANCE.md)
_BUS_FACTOR = {
    "allreduce": lambda n: 2 * (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "reducescatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
}


@dataclass(frozen=True)
class NcclChoice:
    """One (algorithm, protocol) priced as NCCL prices it.

    ``latency_us`` and ``model_bw_gbps`` are the two terms of NCCL's time (its latency after the
    size-dependent adjustments and its algorithm bandwidth after the tree correction);
    ``algbw_gbps = size / time`` and ``busbw_gbps`` are nccl-tests' columns for that time.
    """

    algorithm: str
    protocol: str
    latency_us: float
    model_bw_gbps: float
    time_us: float
    algbw_gbps: float
    busbw_gbps: float


@dataclass(frozen=True)
class NcclPrediction:
    """Every enabled pair in NCCL's order, and the one NCCL picks."""

    op: str
    size_bytes: int
    candidates: tuple[NcclChoice, ...]
    pick: NcclChoice
    nccl_version: str = c.NCCL_VERSION


def _indexes(names, known: tuple[str, ...], what: str) -> frozenset[int] | None:
    if names is None:
        return None
    if isinstance(names, str):
        names = [names]
    wrong = [name for name in names if name not in known]
    if wrong:
        raise UsageError(
            f"NCCL {what}: expected names among {', '.join(known)}, got {', '.join(map(str, wrong))}"
        )
    return frozenset(known.index(name) for name in names)


@lru_cache(maxsize=256)
def _tuning(system: NcclSystem, algorithms, protocols) -> NcclTuning:
    return tune(system, algorithms, protocols)


def _runtime_ok(system: NcclSystem, coll: int, a: int) -> bool:
    """src/enqueue.cc updateCollCostTable lines 1998-2012 (supported op and type assumed)."""
    if a in (c.COLLNET_DIRECT, c.COLLNET_CHAIN) and (
        not system.collnet or system.ranks_per_node > c.MAX_DIRECT_ARITY + 1
    ):
        return False
    nvls_off = system.nvls is None or (coll != ALLREDUCE and system.ranks_per_node > c.MAX_NVLS_ARITY)
    if a in (c.NVLS, c.NVLS_TREE) and nvls_off:
        return False
    return not (a == c.NVLS and not system.collnet and system.n_nodes > 1)


def algo_time(system: NcclSystem, tuning: NcclTuning, coll: int, a: int, p: int, n_bytes: int):
    """src/graph/tuning.cc ncclTopoGetAlgoTime lines 630-655 for one op: (latency_us, bw_gbps,
    time_us), or None when the pair is disabled (NCCL's time -1)."""
    bw = tuning.bandwidth_gbps[coll][a][p]
    lat = tuning.latency_us[coll][a][p]
    if bw == 0:
        return None
    log_size = log2i(n_bytes >> 6)
    # Tree always; NVLSTree on Blackwell with an x86 CPU
    corrected = a == c.TREE or (system.compute_capability >= 100 and system.cpu.startswith("x86"))
    if coll == ALLREDUCE and corrected and 0 <= log_size < c.TREE_CORRECTION_LIMIT.get(a, 0):
        bw *= c.TREE_CORRECTION[p][log_size]
    if (
        a == c.RING
        and p == c.SIMPLE
        and system.n_nodes > 1
        and coll == ALLREDUCE
        and n_bytes // (system.comm_n_channels * system.n_ranks) >= c.RING_PLATEAU_MIN_BYTES
    ):
        lat *= c.RING_PLATEAU_FACTOR[0 if system.compute_capability < 80 else 1]
    return lat, bw, lat + n_bytes / (1000 * bw)


def _choice(
    op: str, n: int, size: int, a_name: str, p_name: str, lat: float, bw: float, time: float
) -> NcclChoice:
    algbw = size / (1000 * time) if time > 0 else 0.0
    return NcclChoice(a_name, p_name, lat, bw, time, algbw, algbw * _BUS_FACTOR[op](n))


def _alltoall(system: NcclSystem, size: int) -> NcclChoice:
    """The point-to-point model of the module docstring."""
    n, ppn, ring = system.n_ranks, system.ranks_per_node, system.ring
    hw = c.NET if system.n_nodes > 1 else (c.NVLINK if system.intra_link == "nvlink" else c.PCI)
    lat = c.BASE_LATENCY_US[c.RING][c.SIMPLE] + c.HW_LATENCY_US[hw][c.RING][c.SIMPLE]
    seconds = size * (ppn - 1) / n / (1000 * ring.total_intra_gbps)
    if system.n_nodes > 1:
        inter_gbps = ring.total_inter_gbps / ppn
        if inter_gbps <= 0:
            raise UsageError(
                "NCCL system: ring.bw_inter_gbps: expected a positive number across nodes, got 0"
            )
        seconds = max(seconds, size * (n - ppn) / n / (1000 * inter_gbps))
    moved = size * (n - 1) / n
    bw = moved / (1000 * seconds) if seconds > 0 else ring.total_intra_gbps
    return _choice("alltoall", n, size, "p2p", "simple", lat, bw, lat + seconds)


def predict(
    system: NcclSystem,
    op: str,
    size_bytes: int,
    algorithms: list[str] | None = None,
    protocols: list[str] | None = None,
) -> NcclPrediction:
    """NCCL's predicted time for every enabled (algorithm, protocol) of ``op`` at ``size_bytes``, and
    its pick.

    Parameters
    ----------
    system:
        The communicator as NCCL sees it.
    op:
        One of :data:`OPS`.
    size_bytes:
        NCCL's ``nBytes`` (nccl-tests' size): the buffer for allreduce, broadcast and reduce; the
        gathered output for allgather; the full input for reducescatter; each rank's send buffer for
        alltoall. At least 1 byte.
    algorithms, protocols:
        NCCL_ALGO / NCCL_PROTO as lists of names (:data:`~nccl_constants.ALGORITHMS`,
        :data:`~nccl_constants.PROTOCOLS`); None keeps NCCL's defaults. Not applied to alltoall.
    """
    if op not in OPS:
        raise UsageError(f"NCCL op: expected one of {', '.join(OPS)}, got {op!r}")
    if isinstance(size_bytes, bool) or not isinstance(size_bytes, int) or size_bytes < 1:
        raise UsageError(f"NCCL size: expected a whole number of bytes of at least 1, got {size_bytes!r}")
    if op == "alltoall":
        only = _alltoall(system, size_bytes)
        return NcclPrediction(op, size_bytes, (only,), only)
    tuning = _tuning(
        system,
        _indexes(algorithms, c.ALGORITHMS, "algorithms"),
        _indexes(protocols, c.PROTOCOLS, "protocols"),
    )
    coll, candidates, pick = c.FUNCTIONS.index(op), [], None
    for a, a_name in enumerate(c.ALGORITHMS):
        if not _runtime_ok(system, coll, a):
            continue
        for p, p_name in enumerate(c.PROTOCOLS):
            priced = algo_time(system, tuning, coll, a, p, size_bytes)
            if priced is None:
                continue
            choice = _choice(op, system.n_ranks, size_bytes, a_name, p_name, *priced)
            candidates.append(choice)
            if pick is None or choice.time_us < pick.time_us:  # strictly less: the first wins a tie
                pick = choice
    if pick is None:
        raise NotApplicableError(f"NCCL: no algorithm and protocol enabled for {op} on this system")
    return NcclPrediction(op, size_bytes, tuple(candidates), pick)
