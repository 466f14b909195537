"""On a ring and on a fully connected graph with equal links, every algorithm equals its textbook
closed form (Thakur, Rabenseifner and Gropp 2005; Bruck et al. 1997; Patarasuk and Yuan 2009)."""

import math

import pytest
from collectives.synthetic import complete_topology, ring_topology

from trnsim.model.engine import evaluate

ALPHA_US = 1.0  # step_ns = 1000 in the synthetic topologies
BW = 100.0  # GB/s per link
# sizes that nccl-tests runs unchanged on every group size here (2-8 and 16 ranks): multiples of
# 16 bytes x lcm(2, ..., 8, 16) = 26,880 B, so the closed forms apply to the requested size itself
_UNIT = 16 * 1680
SIZES = [_UNIT, _UNIT * 39, _UNIT * 39_936]


def _time(topology, op, algo, size):
    result = evaluate(topology, op, [size], topology.chips, algo=algo)
    assert result.rows[0].bytes == size
    return result.rows[0].time_us


def _us(seconds: float) -> float:
    return seconds * 1e6


def beta(size: float, bw_gbps: float = BW) -> float:
    """Microseconds to move ``size`` bytes over one link."""
    return _us(size / (bw_gbps * 1e9))


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


@pytest.mark.parametrize("p", [3, 5, 8, 16])
@pytest.mark.parametrize("size", SIZES)
def test_complete_graph_closed_forms(p, size):
    topo = complete_topology(p, BW)
    log_p = math.log2(p)
    expected = {
        ("allreduce", "ring"): 2 * (p - 1) * (ALPHA_US + beta(size / p)),
        ("allgather", "ring"): (p - 1) * (ALPHA_US + beta(size / p)),
        ("reducescatter", "ring"): (p - 1) * (ALPHA_US + beta(size / p)),
        ("allreduce", "mesh"): 2 * (ALPHA_US + beta(size / p)),
        ("allgather", "mesh"): ALPHA_US + beta(size / p),
        ("reducescatter", "mesh"): ALPHA_US + beta(size / p),
        ("alltoall", "mesh"): ALPHA_US + beta(size / p),
        ("alltoall", "pairwise"): (p - 1) * (ALPHA_US + beta(size / p)),
    }
    if p & (p - 1) == 0:
        expected.update(
            {
                ("allreduce", "rdh"): 2 * log_p * ALPHA_US + 2 * (p - 1) / p * beta(size),
                ("allgather", "rdh"): log_p * ALPHA_US + (p - 1) / p * beta(size),
                ("reducescatter", "rdh"): log_p * ALPHA_US + (p - 1) / p * beta(size),
                ("alltoall", "bruck"): log_p * (ALPHA_US + beta(size / 2)),
                ("allgather", "bruck"): log_p * ALPHA_US + (p - 1) / p * beta(size),
            }
        )
    if p % 2 == 1:
        # K_p with p odd splits into (p-1)/2 Hamiltonian cycles: p-1 directed rings share the data
        expected[("allreduce", "multiring")] = 2 * (p - 1) * ALPHA_US + 2 * (p - 1) / p * beta(size / (p - 1))
    # one dimension (the whole clique): the mesh exchange, one chunk (more chunks only add alphas)
    expected[("allgather", "multidim")] = ALPHA_US + beta(size / p)
    expected[("reducescatter", "multidim")] = ALPHA_US + beta(size / p)
    expected[("allreduce", "multidim")] = 2 * (ALPHA_US + beta(size / p))
    expected[("allreduce", "tree")] = _pipelined_tree_us(p, size)
    for (op, algo), want in expected.items():
        got = _time(topo, op, algo, size)
        assert close(got, want), (op, algo, p, size, got, want)


def _pipelined_tree_us(p: int, size: int) -> float:
    """A double binary tree on K_p, simulated round by round at the best chunk count.

    Stage i of 2 log p: the reduce levels deepest first, then the broadcast levels; in round r the
    stages i with 0 <= r - i < m are busy on one chunk each (size/m, half on each tree); a round costs
    alpha plus the busiest directed link's bytes over one link.
    """
    import numpy as np

    from trnsim.model.cost import MAX_CHUNKS, MIN_CHUNK_BYTES

    depth = p.bit_length() - 1
    edges = []
    for mirror in (False, True):
        for node in range(1, p):
            parent, level = (node - 1) // 2, (node + 1).bit_length() - 1
            edges.append((level, p - 1 - node, p - 1 - parent) if mirror else (level, node, parent))
    stages = [[(c, par) for lv, c, par in edges if lv == d] for d in range(depth, 0, -1)]
    stages += [[(par, c) for lv, c, par in edges if lv == d] for d in range(1, depth + 1)]
    n = len(stages)
    links = sorted({link for stage in stages for link in stage})
    # uses[i, l]: how many of stage i's flows cross directed link l; prefix sums over the stages
    uses = np.array([[stage.count(link) for link in links] for stage in stages], dtype=float)
    prefix = np.vstack([np.zeros(len(links)), np.cumsum(uses, axis=0)])

    def total(m):
        # every round r = 0 .. m+n-2 at once: stages r-m+1 .. r (clipped to 0 .. n-1) are busy
        rounds = np.arange(m + n - 1)
        lo, hi = np.maximum(rounds - m + 1, 0), np.minimum(rounds, n - 1)
        busy = prefix[hi + 1] - prefix[lo]  # rounds x links: flows on each link in each round
        return float(np.sum(ALPHA_US + beta(size / 2 / m) * busy.max(axis=1)))

    top = max(1, min(MAX_CHUNKS, size // MIN_CHUNK_BYTES))
    return min(total(m) for m in range(1, top + 1))


@pytest.mark.parametrize("p", [2, 3, 4, 7, 8])
@pytest.mark.parametrize("size", SIZES)
def test_ring_graph_closed_forms(p, size):
    topo = ring_topology(p, lanes=int(BW))
    # a ring of two chips has two links between them (both wraps), so one ring flow gets both
    link = 2 * BW if p == 2 else BW
    expected = {
        ("allreduce", "ring"): 2 * (p - 1) * (ALPHA_US + beta(size / p, link)),
        ("allgather", "ring"): (p - 1) * (ALPHA_US + beta(size / p, link)),
        ("reducescatter", "ring"): (p - 1) * (ALPHA_US + beta(size / p, link)),
        # both directions of the ring, half the data each (the torus algorithm on one axis is the same)
        ("allreduce", "torus"): 2 * (p - 1) * (ALPHA_US + beta(size / (2 * p))),
        ("allgather", "torus"): (p - 1) * (ALPHA_US + beta(size / (2 * p))),
    }
    if p >= 3:
        expected[("allreduce", "multiring")] = 2 * (p - 1) * (ALPHA_US + beta(size / (2 * p)))
    if p == 3:  # a triangle is a clique: one direct exchange
        expected[("allgather", "multidim")] = ALPHA_US + beta(size / p)
        expected[("allreduce", "multidim")] = 2 * (ALPHA_US + beta(size / p))
    elif p > 3:
        # one ring dimension: each rank's data goes both ways, at most p/2 hops (p/2 - 1 hops of a
        # whole block each way, then half a block for even p); one chunk, since every hop uses the
        # same links and chunking only adds alphas
        hops = p // 2
        gather = hops * ALPHA_US + (p - 1) / 2 * beta(size / p)
        expected[("allgather", "multidim")] = gather
        expected[("allreduce", "multidim")] = 2 * gather
    else:
        expected[("allgather", "multidim")] = ALPHA_US + beta(size / p, link)
    for (op, algo), want in expected.items():
        got = _time(topo, op, algo, size)
        assert close(got, want), (op, algo, p, size, got, want)


def test_ring_allreduce_meets_the_patarasuk_yuan_bandwidth_optimum():
    # on a unidirectional ring, 2(p-1)/p * S / B is optimal; busbw then equals the link bandwidth
    topo = ring_topology(8, lanes=int(BW), step_ns=0.0)
    row = evaluate(topo, "allreduce", [1 << 30], topo.chips, algo="ring").rows[0]
    assert math.isclose(row.busbw_gbps, BW, rel_tol=1e-12)
