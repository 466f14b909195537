"""trnsim.model.cluster.inter: the cross-domain phase of the ops added in issue 27, in closed form."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.model.cluster.clusters import catalog_cluster
from trnsim.model.cluster.inter import flows_leaving, inter_time_us

LARGEST = 20_000


def _brute_pipeline(depth: int, m: float, alpha: float, rate: float) -> tuple[float, int]:
    """The pipelined broadcast by brute force: every piece count from 1 to 20,000, each piece one
    step of ``alpha + piece / rate`` per hop, ``depth - 1 + k`` steps in all; the best and its count."""
    return min(((depth - 1 + k) * (alpha + m / k / (rate * 1e3)), k) for k in range(1, LARGEST + 1))


@given(
    d=st.integers(2, 300),
    m=st.floats(1e3, 1e10),
    hop_us=st.floats(0.5, 30.0),
    rate=st.floats(1.0, 400.0),
    op=st.sampled_from(["broadcast", "reduce"]),
)
def test_chain_and_tree_take_the_best_piece_count(d, m, hop_us, rate, op):
    # a chain is D-1 hops deep, a double binary tree ceil(log2 D); both send m/k a step
    for algorithm, depth in (("chain", d - 1), ("tree", math.ceil(math.log2(d)))):
        got = inter_time_us(op, algorithm, d, m, rate, hop_us * 1e3)
        brute, pieces = _brute_pipeline(depth, m, hop_us, rate)
        if pieces < LARGEST:
            assert got == pytest.approx(brute, rel=1e-12)
        else:  # the best count lies beyond the brute force's: the closed form is faster
            assert got <= brute * (1 + 1e-12)
        assert got >= m / (rate * 1e3) + (depth - 1) * hop_us  # every byte at the NIC's rate, the fill
    chain = inter_time_us(op, "chain", d, m, rate, hop_us * 1e3)
    assert inter_time_us(op, "tree", d, m, rate, hop_us * 1e3) <= chain * (1 + 1e-12)


def test_a_chain_tends_to_the_nics_rate_and_costs_the_buffer_without_latency():
    m, rate = 1e12, 90.0
    big = inter_time_us("broadcast", "chain", 64, m, rate, 15_000)
    assert big == pytest.approx(m / (rate * 1e3), rel=0.02)  # ~S/rate: fill and per-piece latency vanish
    assert inter_time_us("broadcast", "chain", 64, 1e6, rate, 0.0) == pytest.approx(1e6 / (rate * 1e3))
    # two domains: one hop, one piece
    assert inter_time_us("reduce", "chain", 2, 1e6, rate, 15_000) == pytest.approx(15 + 1e6 / (rate * 1e3))


def test_sendrecv_gather_and_scatter_in_closed_form():
    m, rate, d = 4e8, 45.0, 8
    byte_us = 1 / (rate * 1e3)
    # the boundary rank's whole buffer, one step
    assert inter_time_us("sendrecv", "direct", d, m, rate, 15_000) == pytest.approx(15 + m * byte_us)
    # a rank of the root's domain receives (sends) m/D from (to) each of D-1 counterparts
    for op in ("gather", "scatter"):
        assert inter_time_us(op, "direct", d, m, rate, 15_000) == pytest.approx(
            15 + (d - 1) / d * m * byte_us
        )
        assert inter_time_us(op, "pairwise", d, m, rate, 15_000) == pytest.approx(
            (d - 1) * (15 + m / d * byte_us)
        )


def test_a_sendrecv_sends_from_one_rank_of_each_domain():
    _, plan = catalog_cluster("trn3-nl72x2-gen1", 16, policy="hash")
    # a ToR of a 144-chip domain's rack: its ports to chips, one chip of 144 sends
    assert flows_leaving(plan, "direct", "sendrecv") == math.ceil(plan.tor_down / plan.chips_per_domain) == 1
    assert flows_leaving(plan, "direct", "alltoall") == plan.tor_down
    _, rail = catalog_cluster("trn3-nl72x2-gen1", 16, policy="hash", design="rail")
    # a rail switch holds one position of every domain: the last position sends to the first's rail,
    # so every domain's flow leaves it (a ring's neighbours stay on it)
    assert flows_leaving(rail, "direct", "sendrecv") == 16
    assert flows_leaving(rail, "chain", "broadcast") == 0
