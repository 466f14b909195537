"""NCCL's topology search (src/graph/search.cc ncclTopoCompute, NCCL 2.30.7) for one NVLink domain
around a switch, reduced to arithmetic: what channel counts and per-channel speeds the ring, tree and
NVLS searches end with when every GPU reaches one NVSwitch node over ``links`` NVLinks.

NCCL models such a domain as GPUs joined to one NVS node by a link of ``links x`` :func:`nvlink_bw_gbps`
each way (src/graph/topo.cc lines 845-858). A ring channel takes its speed once from every GPU's link
to the switch and once from every link back; a tree channel (a chain inside the node) at most once; an
NVLS channel once from every GPU and twice from its head GPU (search.cc ncclTopoSearchTryNvls, lines
410-443; channel ``c``'s head is GPU ``c``, lines 858-861). The search tries the speeds of
:data:`~trnsim.model.runtimes.nccl_constants.SPEEDS_INTRA` as search.cc lines 1152-1287 do.

Assumptions (named): the search is not cut short by its timeouts (NCCL_SEARCH_TIMEOUT*); every GPU has
the same link count; nothing but the switch joins the GPUs (no NVLink bridges, no PCI path faster
than the NVLinks); a domain that spans several hosts (NVLink across trays) is fused into one node as
NCCL does for multi-node NVLink, which is then one NCCL node.
"""

import math

from trnsim.errors import UsageError
from trnsim.model.runtimes import nccl_constants as c
from trnsim.model.runtimes.nccl_system import NcclGraph, NcclSystem


def _fits(total_gbps: float, speed: float, limit: int) -> int:
    """How many times ``speed`` can be taken from a link of ``total_gbps``, subtracting as followPath
    does (search.cc lines 79 and 113-117: refuse when the link has less than asked, round to 1e-3)."""
    left, count = total_gbps, 0
    while count < limit and left >= speed:
        left = math.floor((left - speed) * 1000 + 0.5) / 1000
        count += 1
    return count


def _speeds(compute_capability: int) -> tuple[float, ...]:
    key = 100 if compute_capability >= 100 else 90 if compute_capability >= 90 else 0
    return c.SPEEDS_INTRA[key]


def _start(speeds, max_bw: float, total_bw: float, min_channels: int) -> int:
    """search.cc lines 1170-1173: the first speed within the link and the channels' total."""
    index = 0
    while (speeds[index] > max_bw or speeds[index] * min_channels > total_bw) and index < len(speeds) - 1:
        index += 1
    return index


def _at_or_below(speeds, bw: float) -> int:
    """search.cc line 1261: the index pass 2 starts from."""
    index = 0
    while speeds[index] > bw and index < len(speeds) - 1:
        index += 1
    return index


def ring_search(compute_capability: int, link_gbps: float) -> tuple[int, float]:
    """The ring graph's (channels, GB/s per channel) after both passes and ncclTopoDupChannels."""
    speeds, limit = _speeds(compute_capability), c.RING_MAX_CHANNELS
    index = _start(speeds, link_gbps, link_gbps, 1)
    best_n, best_bw = 0, 0.0
    while True:  # pass 1: lower the speed until a solution, then while above .49 x the best
        speed = speeds[index]
        found = _fits(link_gbps, speed, limit)
        if found * speed > best_n * best_bw:
            best_n, best_bw = found, speed
        if best_n == limit or best_n * best_bw >= link_gbps:
            break
        if index < len(speeds) - 1 and (best_n == 0 or speeds[index + 1] / best_bw > c.SPEED_DROP_LIMIT):
            index += 1
            continue
        break
    if best_n == 0:
        raise UsageError(f"NCCL search: no ring channel fits {link_gbps:g} GB/s per GPU")
    best_n, best_bw = _dup(compute_capability, best_n, best_bw, limit)
    index, minimum = _at_or_below(speeds, best_bw), best_n
    while index > 0:  # pass 2: try every faster speed with at least as many channels
        index -= 1
        found = _fits(link_gbps, speeds[index], limit)
        if found >= minimum and found * speeds[index] > best_n * best_bw:
            best_n, best_bw = found, speeds[index]
    return best_n, best_bw


def _dup(compute_capability: int, n: int, bw: float, limit: int) -> tuple[int, float]:
    """search.cc lines 1036-1049, ncclTopoDupChannels."""
    if bw < c.DUP_MIN_BW:
        return n, bw
    if compute_capability > 80 and bw < c.DUP_SM90_MAX_BW and n > c.DUP_SM90_MAX_CHANNELS:
        return n, bw
    dup = min(2 * n, limit)
    return dup, bw / math.ceil(dup / n)


def tree_search(compute_capability: int, link_gbps: float, n_ranks: int, channels: int) -> float:
    """The tree graph's GB/s per channel: ``channels`` (the ring's) chains, searched from the speed that
    fits ``channels x speed`` in ``link x n / (n - 1)`` (search.cc line 1168), lowered until they fit,
    then raised while they still do (lines 1279-1282); ncclTopoDupChannels cannot add channels
    (maxChannels is the ring's)."""
    speeds = _speeds(compute_capability)
    index = _start(speeds, link_gbps, link_gbps * n_ranks / (n_ranks - 1), channels)
    while _fits(link_gbps, speeds[index], channels) < channels:
        if index == len(speeds) - 1:
            raise UsageError(f"NCCL search: {channels} tree channels do not fit {link_gbps:g} GB/s per GPU")
        index += 1
    first = speeds[index]
    while (
        index > 0 and speeds[index] < 2 * first and _fits(link_gbps, speeds[index - 1], channels) >= channels
    ):
        index -= 1
    return speeds[index]


def nvls_search(compute_capability: int, link_gbps: float, n_ranks: int) -> NcclGraph | None:
    """The NVLS graph: min(32, n) channels, one head each (channel c's head is GPU c; min = max
    channels inside a node, search.cc lines 1126-1138), at the fastest speed whose head GPU carries
    (channels + 1) x speed; then bwInter raised one speed at a time while under twice bwIntra (lines
    1274-1278). None when the channels never fit."""
    speeds = _speeds(compute_capability)
    channels = min(c.MAX_NVLS_ARITY, n_ranks)
    index = _start(speeds, link_gbps, link_gbps * n_ranks / (n_ranks - 1), channels)
    while _fits(link_gbps, speeds[index], channels + 1) < channels + 1:
        if index == len(speeds) - 1:
            return None
        index += 1
    bw_intra = bw_inter = speeds[index]
    while index > 0 and bw_inter < 2 * bw_intra:
        index -= 1
        bw_inter = speeds[index]
    return NcclGraph(channels, bw_intra, bw_inter)


def single_domain_system(
    compute_capability: int,
    n_ranks: int,
    links_per_rank: int,
    link_gbps: float | None = None,
    nvls: bool = True,
    cpu: str = "x86_intel",
) -> NcclSystem:
    """An :class:`NcclSystem` for ``n_ranks`` GPUs on one NVSwitch domain (one NCCL node).

    Parameters
    ----------
    compute_capability:
        90 Hopper, 100 Blackwell, ...
    n_ranks:
        GPUs in the domain (2 to 72, NCCL_MAX_LOCAL_RANKS).
    links_per_rank:
        NVLinks from each GPU to the switches.
    link_gbps:
        Bandwidth NCCL counts per NVLink; None takes NCCL's own figure for the compute capability
        (src/graph/topo.h, e.g. 20.6 GB/s for 90, 40.1 for 100).
    nvls:
        The switches do NVLink SHARP (multicast and in-switch reduction).
    cpu:
        See :class:`NcclSystem`.
    """
    if isinstance(n_ranks, bool) or not isinstance(n_ranks, int) or not 2 <= n_ranks <= 72:
        raise UsageError(f"NCCL system: n_ranks: expected a whole number from 2 to 72, got {n_ranks!r}")
    if isinstance(links_per_rank, bool) or not isinstance(links_per_rank, int) or links_per_rank < 1:
        raise UsageError(
            f"NCCL system: links_per_rank: expected a whole number of at least 1, got {links_per_rank!r}"
        )
    per_link = c.nvlink_bw_gbps(compute_capability) if link_gbps is None else link_gbps
    if not isinstance(per_link, (int, float)) or not math.isfinite(per_link) or per_link <= 0:
        raise UsageError(f"NCCL system: link_gbps: expected a positive finite number, got {link_gbps!r}")
    total = links_per_rank * per_link
    ring_n, ring_bw = ring_search(compute_capability, total)
    tree_bw = tree_search(compute_capability, total, n_ranks, ring_n)
    nvls_graph = (
        nvls_search(compute_capability, total, n_ranks) if nvls and compute_capability >= 90 else None
    )
    return NcclSystem(
        compute_capability=compute_capability,
        n_ranks=n_ranks,
        n_nodes=1,
        intra_link="nvlink",
        ring=NcclGraph(ring_n, ring_bw, ring_bw),
        tree=NcclGraph(ring_n, tree_bw, tree_bw),
        nvls=nvls_graph,
        cpu=cpu,
    )
