"""NCCL's cost model: hand computations of tuning.cc's formulas (NCCL 2.30.7), its selection rules as
properties, and a loose check against NVIDIA's published peak for one H100 node.

The hand computations write tuning.cc's arithmetic out with the constants typed in from the source
(src/graph/tuning.cc lines 149-211 for the tables), not taken from the module under test.
"""

import doctest
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trnsim.model.runtimes.nccl as nccl_module
from trnsim.errors import UsageError
from trnsim.model.runtimes.nccl import NcclGraph, NcclSystem, predict, single_domain_system

GiB, MiB, KiB = 1 << 30, 1 << 20, 1 << 10


def _pair(prediction, algorithm, protocol):
    [choice] = [x for x in prediction.candidates if (x.algorithm, x.protocol) == (algorithm, protocol)]
    return choice


# An 8-GPU Hopper node as NCCL's searches leave it (see test_nccl_search.py for the search itself):
# ring and tree 12 channels x 30 GB/s, NVLS 8 channels, bwIntra 40, bwInter 60.
HOPPER8 = NcclSystem(
    compute_capability=90,
    n_ranks=8,
    n_nodes=1,
    intra_link="nvlink",
    ring=NcclGraph(12, 30.0, 30.0),
    nvls=NcclGraph(8, 40.0, 60.0),
)


def test_one_hopper_node_by_hand():
    # NVLS allreduce (lines 307-324, 379, 425): per channel min(40 x 0.85 x 7/8 x 2, 60) = 59.5,
    # x 8 channels = 476 GB/s bus, x nRanks / nsteps = 8 / 14 -> 272 GB/s; latency is NVLINK's 25 us
    nvls_bw = min(40 * 0.85 * 7 / 8 * 2, 60.0) * 8 * 8 / 14
    assert nvls_bw == pytest.approx(272.0)
    big = predict(HOPPER8, "allreduce", GiB)
    nvls = _pair(big, "nvls", "simple")
    assert nvls.time_us == pytest.approx(25.0 + GiB / (1000 * 272.0))
    # Ring/Simple: 12 x 30 = 360 bus -> x 8/14; latency 8.4 + 14 steps x 3.4 = 56
    ring = _pair(big, "ring", "simple")
    assert ring.latency_us == pytest.approx(8.4 + 14 * 3.4)
    assert ring.time_us == pytest.approx(56.0 + GiB / (1000 * 360 * 8 / 14))
    assert (big.pick.algorithm, big.pick.protocol) == ("nvls", "simple")
    # nccl-tests' bus bandwidth of NVLS's time: size / time x 2 x 7/8
    assert big.pick.busbw_gbps == pytest.approx(GiB / (1000 * nvls.time_us) * 2 * 7 / 8)

    # 8 B: Ring/LL, bandwidth min(llMaxBw Hopper N1 141, 360 x 0.5) x 8/14, latency 6.6 + 14 x 0.6 = 15
    tiny = predict(HOPPER8, "allreduce", 8)
    assert (tiny.pick.algorithm, tiny.pick.protocol) == ("ring", "ll")
    assert tiny.pick.time_us == pytest.approx(15.0 + 8 / (1000 * 141 * 8 / 14))

    # 64 KiB Tree/LL: min(360 x .92, 12 x 38.7) = 331.2; LL: min(331.2 / 3.8, 141); x .5; tree
    # correction for log2(65536 / 64) = 10: .6 (lines 623-641); latency 6.8 + 2 x 7 x 0.6 = 15.2
    tree_bw = min(min(360 * 0.92, 12 * 38.7) / 3.8, 141) * 0.5 * 0.6
    tree = _pair(predict(HOPPER8, "allreduce", 64 * KiB), "tree", "ll")
    assert tree.model_bw_gbps == pytest.approx(tree_bw)
    assert tree.time_us == pytest.approx(15.2 + 65536 / (1000 * tree_bw))


# Four nodes of eight Hopper GPUs; ring and tree 16 channels, 30 GB/s inside, 12 GB/s across nodes.
NODES4 = NcclSystem(
    compute_capability=90, n_ranks=32, n_nodes=4, intra_link="nvlink", ring=NcclGraph(16, 30.0, 12.0)
)


def test_four_nodes_by_hand():
    size = 256 * MiB
    got = predict(NODES4, "allreduce", size)
    # Ring/Simple: more than 2 nodes -> bwInter; 16 x 12 = 192 bus x 32 / 62
    ring_bw = 16 * 12 * 32 / 62
    # latency (lines 404-412): intra max(3.4 NVLINK, 1 us net overhead x 3) on 62 - 6 steps, NET's 14
    # on 2 x (4 - 1) = 6 steps; plateau (lines 647-650): 256 MiB / (32 comm channels x 32 ranks) >= 64
    # bytes, so x 1.4 (compute capability >= 80)
    ring_lat = (8.4 + 56 * max(3.4, 1.0 * 3) + 6 * 14.0) * 1.4
    ring = _pair(got, "ring", "simple")
    assert ring.latency_us == pytest.approx(ring_lat)
    assert ring.time_us == pytest.approx(ring_lat + size / (1000 * ring_bw))
    # Ring/LL128: min(192 x .92, 16 x 36.7) x 32/62; latency 14 + 56 x max(1.9, 1.0) + 6 x 4.0
    ll128_bw = min(192 * 0.92, 16 * 36.7) * 32 / 62
    ll128 = _pair(got, "ring", "ll128")
    assert ll128.time_us == pytest.approx(14 + 56 * 1.9 + 6 * 4.0 + size / (1000 * ll128_bw))
    # Tree/Simple: min(192 x .92, 16 x 36.0 (Hopper N4)) x .5, corrected by .9 (log2(size / 64) = 22);
    # latency 8.4 + 2 x ((8 - 1) x 4.0 + log2(4) x 14.0)
    tree_bw = min(192 * 0.92, 16 * 36.0) * 0.5 * 0.9
    tree = _pair(got, "tree", "simple")
    assert tree.time_us == pytest.approx(8.4 + 2 * (7 * 4.0 + 2 * 14.0) + size / (1000 * tree_bw))
    best = min((ring, ll128, tree), key=lambda x: x.time_us)
    assert got.pick == min(got.candidates, key=lambda x: x.time_us) == best
    assert (best.algorithm, best.protocol) == ("ring", "ll128")  # 3088.8 us against Simple's 3104.7


# Four nodes of one GPU each: PAT allgather is on (one rank per node).
SINGLES = NcclSystem(
    compute_capability=90, n_ranks=4, n_nodes=4, intra_link="nvlink", ring=NcclGraph(2, 12.0, 12.0)
)


def test_pat_allgather_by_hand():
    size = 4 * MiB  # the gathered buffer
    got = predict(SINGLES, "allgather", size)
    # PAT (lines 337, 429-433): 2 x 12 x .75 = 18, no bus->algorithm ratio for allgather;
    # latency 8 + log2(4) x 14 (NET Tree/Simple, ppn 1) / 3.5 + 4 ranks x 2.8
    pat = _pair(got, "pat", "simple")
    assert pat.time_us == pytest.approx(8 + 2 * 14 / 3.5 + 4 * 2.8 + size / (1000 * 18.0))
    # Ring/Simple: 2 x 12 x 4/3; latency 8.4 + 3 inter steps x 14 (ppn 1: NET Tree/Simple)
    ring = _pair(got, "ring", "simple")
    assert ring.time_us == pytest.approx(8.4 + 3 * 14 + size / (1000 * 24 * 4 / 3))
    assert {x.algorithm for x in got.candidates} == {"ring", "pat"}
    # at 1 KiB Ring/LL's latency wins: 6.6 + 3 x 5.0 (NET Tree/LL)
    small = predict(SINGLES, "allgather", KiB)
    assert (small.pick.algorithm, small.pick.protocol) == ("ring", "ll")
    assert small.pick.latency_us == pytest.approx(6.6 + 3 * 5.0)


# ---- properties over systems NCCL could describe --------------------------------------------------


@st.composite
def systems(draw, one_node=False, nvls=None):
    cc = draw(st.sampled_from([70, 80, 90, 100]))
    nodes = 1 if one_node else draw(st.sampled_from([1, 2, 3, 4, 8]))
    ppn = draw(st.sampled_from([1, 2, 4, 8] if nodes > 1 else [2, 4, 8, 16, 72]))
    channels = draw(st.integers(1, 32))
    ring = NcclGraph(channels, draw(st.floats(1, 100)), draw(st.floats(0.5, 50)), draw(st.floats(0, 3)))
    has_nvls = cc >= 90 and (draw(st.booleans()) if nvls is None else nvls)
    nvls_graph = (
        NcclGraph(draw(st.integers(2, 32)), draw(st.floats(5, 90)), draw(st.floats(5, 90)))
        if has_nvls
        else None
    )
    collnet = NcclGraph(draw(st.integers(1, 8)), 20.0, 20.0) if nodes > 1 and draw(st.booleans()) else None
    return NcclSystem(
        compute_capability=cc,
        n_ranks=nodes * ppn,
        n_nodes=nodes,
        intra_link=draw(st.sampled_from(["nvlink", "pci"])),
        ring=ring,
        nvls=nvls_graph,
        collnet_direct=collnet,
        collnet_chain=collnet,
        cpu=draw(st.sampled_from(["x86_intel", "x86_amd", "arm"])),
    )


OPS = ["allreduce", "allgather", "reducescatter", "broadcast", "reduce"]
sizes = st.integers(1, 1 << 34)


@settings(max_examples=150, deadline=None)
@given(systems(), st.sampled_from(OPS), sizes)
def test_the_pick_is_the_first_minimum(system, op, size):
    got = predict(system, op, size)
    fastest = min(x.time_us for x in got.candidates)
    assert got.pick.time_us == fastest
    assert got.pick == next(x for x in got.candidates if x.time_us == fastest)  # NCCL's order breaks ties
    for x in got.candidates:
        assert x.time_us == pytest.approx(x.latency_us + size / (1000 * x.model_bw_gbps))
        assert math.isfinite(x.time_us) and x.time_us > 0


@settings(max_examples=100, deadline=None)
@given(systems(), st.sampled_from(OPS), st.integers(6, 33))
def test_time_grows_with_size(system, op, log_size):
    """Doubling the size never makes a pair faster. (Between powers of two Tree's correction table can:
    NCCL's Tree/LL allreduce gets faster from 1 MiB - 1 to 1 MiB, its factor going .4 -> .5.)"""
    smaller, larger = predict(system, op, 1 << log_size), predict(system, op, 1 << (log_size + 1))
    before = {(x.algorithm, x.protocol): x.time_us for x in smaller.candidates}
    for x in larger.candidates:
        assert x.time_us > before[x.algorithm, x.protocol]


@settings(max_examples=100, deadline=None)
@given(systems(), st.sampled_from(OPS), sizes, sizes)
def test_time_grows_with_size_outside_trees(system, op, a, b):
    lo, hi = sorted((a, b))
    before = {(x.algorithm, x.protocol): x.time_us for x in predict(system, op, lo).candidates}
    for x in predict(system, op, hi).candidates:
        if "tree" not in x.algorithm:
            assert x.time_us >= before[x.algorithm, x.protocol]


@settings(max_examples=100, deadline=None)
@given(systems(one_node=True))
def test_ring_allreduce_on_one_node_is_ll_small_and_simple_large(system):
    assert predict(system, "allreduce", 8, algorithms=["ring"]).pick.protocol == "ll"
    assert predict(system, "allreduce", 1 << 40, algorithms=["ring"]).pick.protocol == "simple"


@settings(max_examples=60, deadline=None)
@given(systems(nvls=False), st.sampled_from(OPS), sizes)
def test_no_nvls_without_the_hardware(system, op, size):
    assert not {x.algorithm for x in predict(system, op, size).candidates} & {"nvls", "nvls_tree"}


@settings(max_examples=150, deadline=None)
@given(
    systems(),
    st.sampled_from(OPS),
    sizes,
    st.sets(st.sampled_from(["tree", "ring", "nvls", "pat", "collnet_direct"])),
)
def test_disabling_algorithms_never_speeds_up_the_pick(system, op, size, off):
    full = predict(system, op, size)
    keep = [
        a
        for a in ("tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat")
        if a not in off
    ]
    try:
        fewer = predict(system, op, size, algorithms=keep)
    except UsageError:  # nothing left enabled: NCCL refuses too (enqueue.cc lines 2052-2065)
        assert not {x.algorithm for x in full.candidates} - off
        return
    assert fewer.pick.time_us >= full.pick.time_us
    assert {x.algorithm for x in fewer.candidates} <= set(keep)


@settings(max_examples=60, deadline=None)
@given(systems(), sizes)
def test_which_functions_get_which_algorithms(system, size):
    assert {x.algorithm for x in predict(system, "broadcast", size).candidates} == {"ring"}
    assert {x.algorithm for x in predict(system, "reduce", size).candidates} == {"ring"}
    for op in ("allgather", "reducescatter"):
        assert {x.algorithm for x in predict(system, op, size).candidates} <= {
            "ring",
            "pat",
            "nvls",
            "collnet_direct",
        }
    algorithms = {x.algorithm for x in predict(system, "allreduce", size).candidates}
    assert "pat" not in algorithms
    if system.n_nodes == 1:
        assert "nvls_tree" not in algorithms
    if system.ranks_per_node > 1:
        assert "pat" not in {x.algorithm for x in predict(system, "allgather", size).candidates}
    if system.collnet_direct is None:
        assert not algorithms & {"collnet_direct", "collnet_chain"}
        if system.n_nodes > 1:
            assert "nvls" not in algorithms  # multi-node NVLS needs CollNet (tuning.cc line 505)


def test_nvls_needs_two_channels_and_at_most_32_local_ranks_outside_allreduce():
    one_channel = NcclSystem(90, 8, 1, "nvlink", NcclGraph(12, 30.0, 30.0), nvls=NcclGraph(1, 40.0, 60.0))
    assert "nvls" not in {x.algorithm for x in predict(one_channel, "allreduce", MiB).candidates}
    wide = single_domain_system(100, 72, 18)
    assert "nvls" in {x.algorithm for x in predict(wide, "allreduce", MiB).candidates}
    assert "nvls" not in {x.algorithm for x in predict(wide, "allgather", MiB).candidates}
    narrow = single_domain_system(100, 32, 18)
    assert "nvls" in {x.algorithm for x in predict(narrow, "allgather", MiB).candidates}


def test_ll128_follows_nccls_default_rule_and_the_override():
    pci = NcclSystem(90, 8, 1, "pci", NcclGraph(2, 12.0, 12.0))
    assert "ll128" not in {x.protocol for x in predict(pci, "allreduce", MiB).candidates}
    assert "ll128" in {
        x.protocol for x in predict(pci, "allreduce", MiB, protocols=["ll128", "simple"]).candidates
    }
    assert "ll128" in {x.protocol for x in predict(HOPPER8, "allreduce", MiB).candidates}


def test_alltoall_is_point_to_point():
    """Not NCCL's tuner: (n - 1) / n of the buffer over the ring search's per-GPU total, plus one
    Ring/Simple hop (8.4 + 3.4 us on NVLink)."""
    got = predict(HOPPER8, "alltoall", GiB)
    assert [(x.algorithm, x.protocol) for x in got.candidates] == [("p2p", "simple")]
    assert got.pick.time_us == pytest.approx(8.4 + 3.4 + GiB * 7 / 8 / (1000 * 12 * 30.0))
    assert got.pick.busbw_gbps == pytest.approx(GiB / (1000 * got.pick.time_us) * 7 / 8)
    # across nodes each rank's share of the node's inter-node bandwidth bounds it
    across = predict(NODES4, "alltoall", GiB).pick
    assert across.time_us == pytest.approx(8.4 + 14.0 + GiB * 24 / 32 / (1000 * 16 * 12.0 / 8))


# ---- published figures ----------------------------------------------------------------------------


def test_one_h100_node_near_the_published_peaks():
    """NVIDIA's figures for nccl-tests all_reduce_perf on one 8 x H100 node: "On 8 GPUs, you should reach
    a peak busBw of ~480GB/s (algbw ~275GB/s)" with NVLink SHARP, and ~370 GB/s with NCCL_ALGO=RING
    (S. Jeaugey, NVIDIA/nccl-tests issue 212, 2024-05-06; the 480 GB/s also in GTC 2024 talk S62129).
    A loose check, +-25%: NCCL's model is what NCCL expects, not a measurement."""
    node = single_domain_system(compute_capability=90, n_ranks=8, links_per_rank=18, nvls=True)
    peak = predict(node, "allreduce", 8 * GiB)
    assert peak.pick.algorithm == "nvls"
    assert 480 * 0.75 <= peak.pick.busbw_gbps <= 480 * 1.25
    assert 275 * 0.75 <= peak.pick.algbw_gbps <= 275 * 1.25
    ring = predict(node, "allreduce", 8 * GiB, algorithms=["ring"])
    assert 370 * 0.75 <= ring.pick.busbw_gbps <= 370 * 1.25


# ---- input ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: predict(HOPPER8, "allgatherv", 8), "NCCL op"),
        (lambda: predict(HOPPER8, "allreduce", 0), "NCCL size"),
        (lambda: predict(HOPPER8, "allreduce", 8, algorithms=["rings"]), "NCCL algorithms"),
        (lambda: predict(HOPPER8, "allreduce", 8, protocols=["ll256"]), "NCCL protocols"),
    ],
)
def test_bad_calls_say_what_was_expected(call, words):
    with pytest.raises(UsageError, match=words) as error:
        call()
    assert "\n" not in str(error.value) and "expected" in str(error.value)


def test_docstring_example_runs():
    result = doctest.testmod(nccl_module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_trees_correction_makes_a_power_of_two_faster_than_one_byte_less():
    """NCCL's treeCorrectionFactor is indexed by log2(size / 64): at 1 MiB Tree/LL's factor rises from
    .4 to .5 (tuning.cc line 624), so NCCL expects 1 MiB to finish sooner than 1 MiB - 1 byte."""
    below = _pair(predict(HOPPER8, "allreduce", MiB - 1), "tree", "ll")
    at = _pair(predict(HOPPER8, "allreduce", MiB), "tree", "ll")
    assert at.model_bw_gbps / below.model_bw_gbps == pytest.approx(0.5 / 0.4)
    assert at.time_us < below.time_us


def test_a_tie_goes_to_the_first_pair_in_nccls_order():
    """Two ranks, one 1 GB/s channel, 7400 B: Ring/LL takes 6.6 + 2 x 0.6 + 7400 / (1000 x 1 x .5) =
    22.6 us and Ring/Simple 8.4 + 2 x 3.4 + 7400 / (1000 x 1) = 22.6 us; NCCL keeps the first it met
    (a strict '<', enqueue.cc line 2038): LL."""
    two = NcclSystem(80, 2, 1, "nvlink", NcclGraph(1, 1.0, 1.0))
    got = predict(two, "allreduce", 7400, algorithms=["ring"], protocols=["ll", "simple"])
    times = {x.protocol: x.time_us for x in got.candidates}
    assert times["ll"] == times["simple"] == pytest.approx(22.6)
    assert got.pick.protocol == "ll"
