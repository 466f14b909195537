"""The Neuron group description: ranks from LNC, torus distances by brute force, DMA shares, and bad
values refused in one line."""

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trnsim.errors import UsageError
from trnsim.model.runtimes import neuron_constants as c
from trnsim.model.runtimes.neuron_system import (
    NeuronSystem,
    dma_shares,
    lnc_ranks_per_chip,
    max_cc_streams,
    torus_links,
    torus_mean_hops,
)


def test_documented_values():
    # logical-neuroncore-config.rst: 8 physical cores; LNC=2 (default) -> 4 ranks, LNC=1 -> 8
    assert lnc_ranks_per_chip() == 4 and lnc_ranks_per_chip(1) == 8
    # 16 chips at LNC=2: 64 ranks (collectives.rst: "4 ranks for a total of 64 ranks per server")
    server = NeuronSystem(chips_per_node=16, ranks_per_chip=lnc_ranks_per_chip(2), link_gbps_per_rank=128.0)
    assert server.n_ranks == 64
    # compute-comm-overlap.rst: two CC cores per physical core, four streams at LNC=2
    assert max_cc_streams(2) == 4 and max_cc_streams(1) == 2
    # the sources' numbers, typed in from the pages, not from the constants module's comments
    assert (c.MESH_BELOW_BYTES, c.KANGARING_ABOVE_BYTES) == (1 << 20, 56 << 20)
    assert c.HOP_LATENCY_RANGE_US[0] <= c.HOP_LATENCY_US <= c.HOP_LATENCY_RANGE_US[1] == 2.0
    assert c.EFA_HOP_LATENCY_US == 15.0
    assert c.CALL_OVERHEAD_RANGE_US[0] <= c.CALL_OVERHEAD_US <= c.CALL_OVERHEAD_RANGE_US[1]
    assert (c.COMPUTE_DMA_PACKET_BYTES, c.CC_DMA_PACKET_BYTES, c.DMA_RINGS_PER_ENGINE) == (4096, 65536, 16)


@given(
    chips=st.integers(1, 64),
    nodes=st.integers(1, 8),
    lnc=st.sampled_from([1, 2]),
    cores=st.sampled_from([2, 4, 8]),
)
def test_ranks_are_chips_times_cores_over_lnc(chips, nodes, lnc, cores):
    r = lnc_ranks_per_chip(lnc, cores)
    if chips * nodes * r < 2:
        return
    system = NeuronSystem(
        chips_per_node=chips, ranks_per_chip=r, link_gbps_per_rank=10.0, nodes=nodes, efa_gbps_per_rank=1.0
    )
    assert r * lnc == cores
    assert system.n_ranks == nodes * chips * cores // lnc
    assert system.chip_link_gbps == pytest.approx(10.0 * r)


def _brute_torus(dims):
    """Breadth-first search from one chip over the torus' links: (mean distance to the others, distinct
    neighbours)."""

    def neighbours(p):
        steps = (
            tuple((p[i] + d) % m if i == k else p[i] for i, m in enumerate(dims))
            for k in range(len(dims))
            for d in (1, -1)
        )
        return {q for q in steps if q != p}

    origin = (0,) * len(dims)
    seen, frontier, depth, total = {origin}, [origin], 0, 0
    while frontier:
        depth += 1
        frontier = [q for p in frontier for q in neighbours(p) if q not in seen and not seen.add(q)]
        total += depth * len(frontier)
    return total / (len(seen) - 1), len(neighbours(origin))


@pytest.mark.parametrize("dims", [(4, 4), (4,), (2,), (2, 2), (8,), (4, 4, 4), (2, 4), (3, 5), (16,)])
def test_torus_distances_match_brute_force(dims):
    mean, neighbours = _brute_torus(dims)
    assert torus_mean_hops(dims) == pytest.approx(mean)
    assert torus_links(dims) == neighbours
    if dims == (4, 4):
        assert mean == pytest.approx(32 / 15)  # 2 per chip over all 16, self included


@given(st.lists(st.integers(1, 1 << 20), min_size=1, max_size=16))
def test_dma_shares_are_proportional_to_packets(sizes):
    shares = dma_shares(sizes)
    assert sum(shares) == pytest.approx(1.0)
    for size, share in zip(sizes, shares, strict=True):
        assert share == pytest.approx(size / sum(sizes))
    # a bigger packet never gets the smaller share (compute-comm-overlap.rst: "Increasing packet size
    # elevates processing priority")
    order = sorted(range(len(sizes)), key=lambda i: sizes[i])
    assert all(shares[a] <= shares[b] for a, b in itertools.pairwise(order))


def _system(**changes):
    fields = {"chips_per_node": 16, "ranks_per_chip": 4, "link_gbps_per_rank": 128.0, "torus_dims": (4, 4)}
    return NeuronSystem(**{**fields, **changes})


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"chips_per_node": 0}, "chips_per_node: expected a whole number of at least 1"),
        ({"chips_per_node": 1, "ranks_per_chip": 1, "torus_dims": None}, "at least 2 ranks"),
        ({"ranks_per_chip": 2.0}, "ranks_per_chip"),
        ({"link_gbps_per_rank": 0}, "link_gbps_per_rank: expected a positive"),
        ({"link_gbps_per_rank": math.nan}, "link_gbps_per_rank"),
        ({"nodes": 2}, "efa_gbps_per_rank: expected a positive"),
        ({"torus_dims": (4, 3)}, "torus_dims: expected dimensions whose product is chips_per_node"),
        ({"torus_dims": [4, 4]}, "torus_dims: expected a tuple"),
        ({"hbm_gbps_per_chip": -1.0}, "hbm_gbps_per_chip"),
        ({"hop_latency_us": math.inf}, "hop_latency_us"),
        ({"efa_mesh_efficiency": 1.5}, "efa_mesh_efficiency: expected at most 1"),
        ({"efa_rdh_efficiency": 0}, "efa_rdh_efficiency"),
        ({"ranges_per_rank": "yes"}, "ranges_per_rank"),
        ({"nodes": True}, "nodes"),
    ],
)
def test_bad_values_are_refused_in_one_line(changes, words):
    with pytest.raises(UsageError, match=words) as error:
        _system(**changes)
    assert str(error.value).startswith("Neuron system: ") and "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: lnc_ranks_per_chip(4), "lnc: expected one of 1, 2"),
        (lambda: lnc_ranks_per_chip(True), "lnc"),
        (lambda: lnc_ranks_per_chip(2, 7), "physical_cores: expected a multiple of lnc"),
        (lambda: max_cc_streams(3), "lnc"),
        (lambda: dma_shares([]), "expected 1 to 16 rings"),
        (lambda: dma_shares([4096] * 17), "expected 1 to 16 rings"),
        (lambda: dma_shares([0]), "packet_bytes"),
    ],
)
def test_bad_arguments_are_refused_in_one_line(call, words):
    with pytest.raises(UsageError, match=words) as error:
        call()
    assert "\n" not in str(error.value)
