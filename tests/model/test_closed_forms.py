"""On a ring and on a fully connected graph with equal links, every algorithm equals its textbook
closed form (Thakur, Rabenseifner and Gropp 2005; Bruck et al. 1997; Patarasuk and Yuan 2009)."""

import math

import pytest
from collectives.synthetic import complete_topology, ring_topology

from model import systems
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


# --- with latency: every term of the alpha-beta model set through a topology file and --set ------

A_NS, L_NS, R_NS, C_NS = 700.0, 40.0, 250.0, 2000.0  # step alpha, per link, per relaying chip, per call
EDITS = [
    f"latency.step_ns={A_NS}",
    f"latency.link_ns={L_NS}",
    f"latency.relay_ns={R_NS}",
    f"latency.collective_ns={C_NS}",
]


def _steps_us(steps: float, links: int = 1, relays: int = 0) -> float:
    """``steps`` steps' latency in microseconds: alpha, plus each step's path of ``links`` links
    through ``relays`` relaying chips."""
    return steps * (A_NS + links * L_NS + relays * R_NS) / 1e3


@pytest.mark.parametrize("p", [3, 4, 5, 8])
@pytest.mark.parametrize("size", SIZES)
def test_ring_topology_alpha_beta_with_link_and_relay_latency(p, size, tmp_path):
    """On a ring of p chips (one link of B each way between neighbours), with alpha, link, relay and
    per-call latencies set by --set: the textbook forms (Thakur et al. 2005), each step costing
    alpha plus its longest path's latency."""
    topo = systems.load(systems.ring(p, lanes=int(BW)), tmp_path, EDITS)
    once = C_NS / 1e3
    block = beta(size / p)  # one block of S/p over one link
    far = p // 2  # mesh: the farthest member is p//2 links away, through p//2 - 1 relaying chips
    # mesh on a ring: per directed link, sum of k over the distances k < p/2 that go its way, plus
    # half of the p/2 flows at distance p/2 (ECMP splits them): p^2/8 blocks (even p), (p^2-1)/8 (odd)
    mesh_blocks = p * p / 8 if p % 2 == 0 else (p * p - 1) / 8
    mesh_step = _steps_us(1, far, far - 1) + mesh_blocks * block
    expected = {
        ("allreduce", "ring"): once + _steps_us(2 * (p - 1)) + 2 * (p - 1) * block,
        ("allgather", "ring"): once + _steps_us(p - 1) + (p - 1) * block,
        ("reducescatter", "ring"): once + _steps_us(p - 1) + (p - 1) * block,
        ("allreduce", "torus"): once + _steps_us(2 * (p - 1)) + 2 * (p - 1) * block / 2,
        ("allgather", "torus"): once + _steps_us(p - 1) + (p - 1) * block / 2,
        ("allgather", "mesh"): once + mesh_step,
        ("reducescatter", "mesh"): once + mesh_step,
        ("alltoall", "mesh"): once + mesh_step,
        ("allreduce", "mesh"): once + 2 * mesh_step,
    }
    for (op, algo), want in expected.items():
        got = _time(topo, op, algo, size)
        assert close(got, want), (op, algo, p, size, got, want)


@pytest.mark.parametrize("p", [3, 4, 5, 6, 7, 8])
@pytest.mark.parametrize("size", SIZES)
def test_complete_graph_alpha_beta_with_link_latency(p, size, tmp_path):
    """On p chips joined pairwise (a tray of direct links), with latencies set by --set: every flow
    is one link, so each step costs alpha + one link's latency + its block over one link."""
    topo = systems.load(systems.complete(p, lanes=int(BW)), tmp_path, EDITS)
    once = C_NS / 1e3
    log_p = math.ceil(math.log2(p))
    expected = {
        ("allreduce", "ring"): once + _steps_us(2 * (p - 1)) + 2 * (p - 1) / p * beta(size),
        ("allgather", "ring"): once + _steps_us(p - 1) + (p - 1) / p * beta(size),
        ("reducescatter", "ring"): once + _steps_us(p - 1) + (p - 1) / p * beta(size),
        ("allreduce", "mesh"): once + _steps_us(2) + 2 * beta(size / p),
        ("allgather", "mesh"): once + _steps_us(1) + beta(size / p),
        ("reducescatter", "mesh"): once + _steps_us(1) + beta(size / p),
        ("alltoall", "mesh"): once + _steps_us(1) + beta(size / p),
        ("alltoall", "pairwise"): once + _steps_us(p - 1) + (p - 1) * beta(size / p),
        # Bruck's all-gather, any p: ceil(log2 p) rounds, each block sent once: (p-1)/p S in all
        ("allgather", "bruck"): once + _steps_us(log_p) + (p - 1) / p * beta(size),
    }
    if p & (p - 1) == 0:
        expected[("allreduce", "rdh")] = once + _steps_us(2 * log_p) + 2 * (p - 1) / p * beta(size)
        expected[("allgather", "rdh")] = once + _steps_us(log_p) + (p - 1) / p * beta(size)
        expected[("reducescatter", "rdh")] = once + _steps_us(log_p) + (p - 1) / p * beta(size)
        expected[("alltoall", "bruck")] = once + _steps_us(log_p) + log_p * beta(size / 2)
    for (op, algo), want in expected.items():
        got = _time(topo, op, algo, size)
        assert close(got, want), (op, algo, p, size, got, want)


@pytest.mark.parametrize("p", [3, 5, 6, 7, 9, 12])
def test_bruck_on_any_group_size_sends_each_block_once(p):
    """Bruck's all-gather on K_p for p not a power of two: after round k a rank holds min(2^(k+1), p)
    blocks, so the rounds send 1, 2, 4, ... blocks and the last only the p - 2^k still missing; in
    all p - 1 blocks of S/p, over ceil(log2 p) rounds (Bruck et al. 1997). All-to-all: in round k
    each rank forwards the blocks whose offset j (0 <= j < p) has bit k set, counted here one by one.
    """
    topo = complete_topology(p, BW)
    size = _UNIT * 39 * 9 * 11  # divisible by 16 p for every p here
    rounds = math.ceil(math.log2(p))
    gather = rounds * ALPHA_US + (p - 1) / p * beta(size)
    assert close(_time(topo, "allgather", "bruck", size), gather)
    moved = [sum(1 for j in range(p) if (j >> k) & 1) for k in range(rounds)]
    alltoall = sum(ALPHA_US + beta(blocks * size / p) for blocks in moved)
    assert close(_time(topo, "alltoall", "bruck", size), alltoall)


@pytest.mark.parametrize("m", [2, 3, 4])
@pytest.mark.parametrize("size", SIZES)
def test_hierarchical_closed_forms_on_two_racks(m, size, tmp_path):
    """Two racks of m chips (r = 2 groups, p = 2m): inside a rack every pair has a direct link of
    B_in, across the racks each chip one link of B_x to its counterpart. Hierarchical all-reduce is
    a reduce-scatter inside (each member sends its counterparts' S/m to each other), an all-reduce of
    the S/m shard across the r groups (a reduce-scatter and an all-gather, S/(m r) per flow), and an
    all-gather inside; all-gather is across (each block S/p) then inside (the r blocks held, r S/p);
    all-to-all carries to the other group's counterpart what its m members need (m S/p), then
    delivers inside (r S/p)."""
    inner, cross = 100.0, 30.0
    topo = systems.load(systems.two_racks(m, int(inner), int(cross)), tmp_path, [f"latency.link_ns={L_NS}"])
    r, p = 2, 2 * m
    step = ALPHA_US + L_NS / 1e3

    def inside(nbytes):
        return step + beta(nbytes, inner)

    def across(nbytes):
        return step + beta(nbytes, cross)

    expected = {
        "allreduce": 2 * inside(size / m) + 2 * across(size / (m * r)),
        "allgather": across(size / p) + inside(r * size / p),
        "reducescatter": inside(r * size / p) + across(size / p),
        "alltoall": across(m * size / p) + inside(r * size / p),
    }
    for op, want in expected.items():
        got = _time(topo, op, "hierarchical", size)
        assert close(got, want), (op, m, size, got, want)


@pytest.mark.parametrize(("kind", "p"), [("ring", 5), ("ring", 8), ("complete", 4), ("racks", 3)])
@pytest.mark.parametrize("op", ["allreduce", "allgather", "reducescatter", "alltoall"])
def test_the_latency_floor_is_one_alpha_and_the_diameter_in_links(kind, p, op, tmp_path):
    """The bound's latency part: no collective finishes before one step's alpha and the latency of
    the links between its farthest two members (the graph's diameter over the group, found here by
    networkx, each link at the lowest link latency; relaying chips not counted). At a size that small
    it binds: bound busbw = factor x S / that time."""
    import networkx as nx

    document = {"ring": systems.ring, "complete": systems.complete, "racks": systems.two_racks}[kind](p)
    topo = systems.load(document, tmp_path, EDITS)
    graph = nx.Graph(list(topo.links))
    diameter = max(nx.shortest_path_length(graph, u, v) for u in topo.chips for v in topo.chips)
    floor_us = (A_NS + diameter * L_NS) / 1e3
    ranks = len(topo.chips)
    size = 16 * ranks  # the smallest size nccl-tests runs for every op here
    result = evaluate(topo, op, [size], topo.chips, algo="all")
    assert result.bound.latency_us == pytest.approx(floor_us, rel=1e-12, abs=0)
    row = result.rows[0]
    assert row.bound_limited_by == "latency"
    want = systems.busbw_factor(op, ranks) * size / (floor_us * 1e3)
    assert row.bound_busbw_gbps == pytest.approx(want, rel=1e-12, abs=0)
    assert row.time_us >= floor_us + C_NS / 1e3  # and no algorithm beats it (nor the per-call cost)
