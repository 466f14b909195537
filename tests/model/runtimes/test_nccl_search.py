"""NCCL's topology search for one switch domain, worked by hand from src/graph/search.cc (NCCL 2.30.7)
and checked as properties: whatever it finds fits the GPU's links."""

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from trnsim.errors import UsageError
from trnsim.model.runtimes.nccl_search import nvls_search, ring_search, single_domain_system, tree_search


def test_eight_hopper_gpus_by_hand():
    # 18 NVLinks x 20.6 GB/s (topo.h SM90_NVLINK_BW) = 370.8 GB/s each way per GPU.
    link = 18 * 20.6
    # Ring, pass 1 from 60 GB/s (the fastest SM90 speed under 370.8): 6 channels (360 <= 370.8 < 420);
    # lower speeds give 7 x 50 = 350, 9 x 40, 12 x 30, 15 x 24, 18 x 20 = 360: none better; 15 / 60 < .49
    # stops. ncclTopoDupChannels: 60 >= 50, so 12 channels of 30. Pass 2: 40, 50, 60 fit only 9, 7, 6.
    assert ring_search(90, link) == (12, 30.0)
    # Tree: 12 channels, the first speed with 12 x speed <= 370.8 x 8 / 7 = 423.8 is 30; 40 fits 9.
    assert tree_search(90, link, 8, 12) == 30.0
    # NVLS: 8 channels, head GPUs carry 9 x speed: 50 -> 450 > 370.8, 40 -> 360 fits; bwInter climbs
    # 50, 60 (the fastest) while under 2 x 40.
    graph = nvls_search(90, link, 8)
    assert (graph.n_channels, graph.bw_intra_gbps, graph.bw_inter_gbps) == (8, 40.0, 60.0)


def test_seventy_two_blackwell_gpus_by_hand():
    link = 18 * 40.1  # 721.8 GB/s (topo.h SM100_NVLINK_BW)
    # Ring from 90: 8 x 90 = 720; 80 x 9, 60 x 12, 45 x 16 tie at 720 (not better); 40 / 90 < .49.
    # Doubled: 16 x 45. Pass 2: 50 fits 14 < 16.
    assert ring_search(100, link) == (16, 45.0)
    assert tree_search(100, link, 72, 16) == 45.0
    # NVLS: 32 channels (NCCL_MAX_NVLS_ARITY), heads carry 33 x speed: 24 -> 792 > 721.8, 20 -> 660;
    # bwInter 24, 30, 40 (stops at 2 x 20).
    graph = nvls_search(100, link, 72)
    assert (graph.n_channels, graph.bw_intra_gbps, graph.bw_inter_gbps) == (32, 20.0, 40.0)


def test_the_domain_system_carries_the_searches():
    system = single_domain_system(90, 8, 18)
    assert (system.ring.n_channels, system.ring.bw_intra_gbps) == (12, 30.0)
    assert system.tree.n_channels == 12 and system.nvls.n_channels == 8
    assert system.comm_n_channels == 24  # connect.cc line 460 doubles 12
    assert single_domain_system(90, 8, 18, nvls=False).nvls is None
    assert single_domain_system(80, 8, 12).nvls is None  # NVLS needs compute capability 90


@example(90, 8, 1, 5.9996)  # two channels of 3.0 fit, by NCCL's rounding
@settings(max_examples=200, deadline=None)
@given(st.sampled_from([70, 80, 90, 100]), st.integers(2, 72), st.integers(1, 18), st.floats(5, 60))
def test_what_the_search_finds_fits_the_links(cc, n, links, per_link):
    total = links * per_link
    try:
        system = single_domain_system(cc, n, links, per_link)
    except UsageError:
        return  # slower than the slowest speed NCCL tries
    ring, tree = system.ring, system.tree
    assert 1 <= ring.n_channels <= 32

    def slack(channels: int) -> float:
        # NCCL rounds a link's remaining bandwidth to 1e-3 GB/s after each channel takes its speed
        # (search.cc line 79, SUB_ROUND), so each channel may take up to 0.0005 more than is left:
        # 5.9996 GB/s fits two channels of 3.0, as NCCL finds
        return 5e-4 * channels + 1e-9

    # a ring channel takes its speed once from every GPU's link (3.0 is the slowest speed tried)
    assert ring.n_channels * ring.bw_intra_gbps <= total + slack(ring.n_channels)
    assert tree.n_channels == ring.n_channels
    assert tree.n_channels * tree.bw_intra_gbps <= total + slack(tree.n_channels)
    if system.nvls is not None:
        nvls = system.nvls
        assert nvls.n_channels == min(32, n)
        assert (nvls.n_channels + 1) * nvls.bw_intra_gbps <= total + slack(nvls.n_channels + 1)


def test_bad_domains_are_refused():
    with pytest.raises(UsageError, match="n_ranks: expected a whole number from 2 to 72"):
        single_domain_system(90, 73, 18)
    with pytest.raises(UsageError, match="links_per_rank"):
        single_domain_system(90, 8, 0)
    with pytest.raises(UsageError, match="link_gbps"):
        single_domain_system(90, 8, 18, link_gbps=float("nan"))
