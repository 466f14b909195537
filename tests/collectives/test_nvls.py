"""In-network reduction (NVLS/SHARP): the nvls algorithm against its closed form, and its bound."""

import pytest
from conftest import topology

from trnsim.errors import NotApplicableError
from trnsim.model.engine import evaluate
from trnsim.topology.load import load_topology

BIG = 8 << 30


@pytest.mark.parametrize(("sku", "bw"), [("hgx-b200", 900), ("gb200-nvl72", 900), ("hgx-h100", 450)])
def test_nvls_all_reduce_sends_each_byte_once_up_and_once_down(sku, bw):
    # pipelined, a member's links carry size (1 + 1/p) each way at the steady state: the reduce
    # stage's size up and its shard down, the multicast's shard up and the size down
    topo = topology(sku, raw=True)
    p = topo.n_ranks
    row = evaluate(topo, "allreduce", [BIG], topo.chips, algo="nvls").rows[0]
    # m chunks in m + 1 rounds: the first only reduces (size/m up), the last only multicasts
    # (size/m down), the others do both; each round pays alpha plus link, switch, link
    m, size = row.chunks, row.bytes
    latency = topo.spec.latency
    per_round_us = (latency.step_ns + 2 * latency.link_ns + latency.switch_ns) / 1e3
    closed_us = (m + 1) * per_round_us + size / m / (bw * 1e9) * ((m - 1) * (1 + 1 / p) + 2) * 1e6
    assert row.time_us == pytest.approx(closed_us, rel=1e-9)
    steady = 2 * (p - 1) / p * bw / (1 + 1 / p)
    assert 0.97 * steady < row.busbw_gbps < steady <= row.bound_busbw_gbps
    # the bound is no longer the wire rate: 2(p-1)/p of it
    assert row.bound_busbw_gbps == pytest.approx(2 * (p - 1) / p * bw, rel=1e-9)


def test_nvls_all_gather_and_reduce_scatter_are_bound_by_the_members_links():
    topo = topology("hgx-b200", raw=True)
    for op in ("allgather", "reducescatter"):
        row = evaluate(topo, op, [BIG], topo.chips, algo="nvls").rows[0]
        # one phase: the size crosses a member's links one way, busbw factor (p-1)/p
        assert row.busbw_gbps == pytest.approx(7 / 8 * 900, rel=0.01), op


def test_nvls_needs_switches_that_reduce():
    topo = topology("trn3-nl72x2-gen1")
    with pytest.raises(NotApplicableError, match="reduce in the network"):
        evaluate(topo, "allreduce", [1 << 20], topo.chips, algo="nvls")
    peer = topology("ualink-72")  # UALink 1.0 switches do not reduce
    with pytest.raises(NotApplicableError):
        evaluate(peer, "allreduce", [1 << 20], peer.chips, algo="nvls")


def test_auto_picks_nvls_for_large_all_reduce_on_nvl72():
    topo = topology("gb200-nvl72")
    rows = evaluate(topo, "allreduce", [1 << 20, 1 << 30], topo.chips).rows
    assert rows[-1].algorithm == "nvls" and rows[-1].busbw_gbps > 1.7 * 810 * 0.9


@pytest.mark.parametrize("fail", ["switch:r0.nvlink.sw0", "link:nvlink:0"])
def test_nvls_runs_on_the_switches_left_after_a_failure(fail):
    # a dead switch (or one GPU's link to it) takes that switch out of every reduction: the others
    # carry its share, so the bandwidth term grows by 18/17
    healthy = load_topology("gb200-nvl72")
    damaged = load_topology("gb200-nvl72", overrides=[f"fail={fail}"])
    size = 1 << 34
    whole = evaluate(healthy, "allreduce", [size], healthy.chips, algo="nvls", exact_bounds=False).rows[0]
    left = evaluate(damaged, "allreduce", [size], damaged.chips, algo="nvls", exact_bounds=False).rows[0]
    assert left.busbw_gbps / whole.busbw_gbps == pytest.approx(17 / 18, rel=0.005)
