"""trnsim.model.cluster.runtime: cluster collectives as NCCL or the Neuron runtime run them."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trnsim.errors import NotApplicableError, ParameterError
from trnsim.model.cluster import evaluate_cluster
from trnsim.model.cluster.runtime import (
    apply_cluster_runtime,
    cluster_runtime,
    inter_search,
    nccl_cluster_system,
    neuron_cluster_system,
    tree_speed,
)
from trnsim.model.runtimes import nccl_constants as c
from trnsim.topology.load import load_topology
from trnsim.topology.scaleout import fabric_choice, plan_fabric

BIG = 1 << 33  # 8 GiB, nccl-tests' largest size in G14


def _cluster(sku, domains, overrides=(), **edits):
    domain = load_topology(sku, overrides=list(overrides))
    spec = domain.spec
    choice = fabric_choice(spec, domain.n_chips, spec.switched.racks if spec.switched else None, **edits)
    return domain, plan_fabric(choice, domain.n_chips, domains)


def _busbw(sku, domains, runtime, overrides=(), **edits):
    domain, plan = _cluster(sku, domains, overrides, **edits)
    ideal = evaluate_cluster(domain, plan, "allreduce", [BIG])
    return apply_cluster_runtime(domain, ideal, runtime).rows[0]


def test_ideal_is_the_composition_itself():
    domain, plan = _cluster("trn2-nl16", 4)
    ideal = evaluate_cluster(domain, plan, "allreduce", [1 << 20, 1 << 30])
    assert apply_cluster_runtime(domain, ideal, "ideal") is ideal
    assert apply_cluster_runtime(domain, ideal, None) is ideal


def test_the_default_follows_the_file_only_where_a_cluster_runs_it():
    assert cluster_runtime(None, "nccl") == "nccl"
    assert cluster_runtime(None, "xla") == "ideal"  # no cluster model of XLA: the composition
    assert cluster_runtime(" NCCL ") == "nccl"
    with pytest.raises(ParameterError, match="expected one of ideal, nccl, neuron"):
        cluster_runtime("xla")


@given(
    nic=st.floats(1.0, 200.0),
    nics=st.integers(1, 72),
    nvlink=st.floats(10.0, 1000.0),
    limit=st.integers(1, 64),
)
def test_inter_search_takes_the_largest_total_any_speed_allows(nic, nics, nvlink, limit):
    speeds = c.SPEEDS_INTER[90]
    channels, speed = inter_search(speeds, nic, nics, nvlink, limit)
    # brute force: every speed and every channel count that fits the NICs, the NVLinks and the limit
    best = max(
        (
            k * s
            for s in speeds
            if s <= nic
            for k in range(1, limit + 1)
            # a NIC's channels at a speed, as NCCL counts them: a rate a rounding error short still fits
            if k <= nics * math.floor(nic / s + 1e-9) and k * s <= nvlink + 1e-9
        ),
        default=0.0,
    )
    if best:
        assert channels * speed == pytest.approx(best)
        assert channels <= limit and channels * speed <= nvlink + 1e-9 and speed <= nic


def test_nccl_sees_one_node_per_domain_at_its_nic_rate_times_the_efficiency():
    domain, plan = _cluster("hgx-h100", 2)
    system = nccl_cluster_system(domain, plan)
    assert (system.n_ranks, system.n_nodes) == (16, 2)
    # 400 Gbit/s per GPU = 50 GB/s as NCCL sees it; 45 is Hopper's fastest inter speed that 8 channels
    # fit through a GPU's 18 x 20.6 GB/s of NVLink (48 fits only 7); the fabric keeps 90% of it
    assert system.ring.n_channels == 8
    assert system.ring.bw_inter_gbps == pytest.approx(45.0 * 0.9)
    assert system.nvls.bw_inter_gbps == pytest.approx(48.0 * 0.9)  # one head per NIC, its fastest speed
    # the tree's bwIntra rises one speed (to 48) on the way to twice bwInter: 48 is the fastest
    assert system.tree.bw_intra_gbps == pytest.approx(48.0 * 0.9)
    assert system.tree.bw_inter_gbps == pytest.approx(45.0 * 0.9)
    half = nccl_cluster_system(*_cluster("hgx-h100", 2, ["scale_out.efficiency=0.45"]))
    assert half.ring.bw_inter_gbps == pytest.approx(system.ring.bw_inter_gbps / 2)


@given(start=st.integers(0, 15), channels=st.integers(1, 32), nvlink=st.floats(1.0, 2000.0))
def test_tree_speed_rises_while_under_twice_the_ring_speed_and_it_fits(start, channels, nvlink):
    speeds = c.SPEEDS_INTER[90]
    speed = speeds[start]
    got = tree_speed(speeds, speed, channels, nvlink)
    assert got in speeds and got >= speed
    if got > speed:
        assert channels * got <= nvlink + 1e-9
        below = speeds[speeds.index(got) + 1]  # the speed it rose from
        assert below < 2 * speed
    faster = [s for s in speeds if s > got]
    if faster and got < 2 * speed:  # it stopped below twice: the next speed does not fit
        assert channels * min(faster) > nvlink


def test_hashed_flows_that_cannot_collide_keep_the_spray_rate():
    # two 8-GPU servers share one 32-GPU rack: no flow leaves the ToR, hashing costs nothing
    hashed = _busbw("hgx-h100", 2, "nccl", ["scale_out.network=roce"])
    sprayed = _busbw("hgx-h100", 2, "nccl", ["scale_out.network=roce"], policy="spray")
    assert hashed.busbw_gbps == pytest.approx(sprayed.busbw_gbps, rel=1e-12)


@pytest.mark.parametrize("runtime", ["ideal", "nccl"])
def test_busbw_does_not_rise_with_domains_under_hashing(runtime):
    got = [_busbw("gb200-nvl72", d, runtime, policy="hash").busbw_gbps for d in (1, 2, 4, 8, 20)]
    assert all(later <= earlier * (1 + 1e-9) for earlier, later in zip(got, got[1:], strict=False)), got
    # across racks hashed flows collide: below the sprayed fabric of the same racks
    sprayed = _busbw("gb200-nvl72", 20, runtime, policy="spray").busbw_gbps
    assert got[-1] < sprayed


def test_nccl_rows_carry_the_ideal_beside_and_name_the_pick():
    domain, plan = _cluster("hgx-b200", 2)
    ideal = evaluate_cluster(domain, plan, "allreduce", [8, 1 << 20, BIG])
    got = apply_cluster_runtime(domain, ideal, "nccl")
    for mine, theirs in zip(got.rows, ideal.rows, strict=True):
        assert mine.ideal_busbw_gbps == theirs.busbw_gbps and mine.ideal_time_us == theirs.time_us
        algorithm, protocol = mine.algorithm.split("/")
        assert algorithm in c.ALGORITHMS and protocol in c.PROTOCOLS
        n = 16
        assert mine.busbw_gbps == pytest.approx(2 * (n - 1) / n * mine.bytes / (mine.time_us * 1e3))
    assert got.rows[-1].busbw_gbps > got.rows[0].busbw_gbps
    assert math.isclose(
        got.rows[-1].efficiency * got.rows[-1].time_us, ideal.rows[-1].efficiency * ideal.rows[-1].time_us
    )


def test_neuron_builds_its_nodes_from_the_domain():
    domain, plan = _cluster("trn2-nl16", 4)
    system = neuron_cluster_system(domain, plan)
    assert (system.nodes, system.chips_per_node, system.ranks_per_chip) == (4, 16, 1)
    assert system.torus_dims == (4, 4)
    assert system.efa_gbps_per_rank == pytest.approx(800 / 8)  # spraying: the whole NIC
    assert system.efa_hop_latency_us == pytest.approx(plan.choice.hop_ns / 1e3)
    row = _busbw("trn2-nl16", 4, "neuron")
    assert "+" in row.algorithm and row.busbw_gbps > 0


@pytest.mark.parametrize(
    ("sku", "runtime", "words"),
    [
        ("hgx-h100", "neuron", "its chips are GPUs"),
        ("tpu-v5p-4x4x8", "neuron", "the file's scale-out is dcn"),
        ("tpu-v5p-4x4x8", "nccl", "no runtime.nccl section"),
        ("trn2-nl16", "nccl", "no runtime.nccl section"),
    ],
)
def test_a_runtime_refuses_what_it_cannot_model(sku, runtime, words):
    domain, plan = _cluster(sku, 2)
    ideal = evaluate_cluster(domain, plan, "allreduce", [1 << 20])
    with pytest.raises(NotApplicableError, match=words):
        apply_cluster_runtime(domain, ideal, runtime)


def test_nccl_adds_the_networks_hop_latency_per_step_across_nodes():
    domain, plan = _cluster("hgx-h100", 2)
    system = nccl_cluster_system(domain, plan)
    hop = plan.choice.hop_ns / 1e3
    assert system.ring.latency_inter_us == system.tree.latency_inter_us == hop == 15.0
    faster = nccl_cluster_system(domain, _cluster("hgx-h100", 2, hop_ns=5000.0)[1])
    from trnsim.model.runtimes.nccl import predict

    # a tree's latency across two nodes counts the network twice (up and down): 2 x 10 us less
    slow, fast = (predict(s, "allreduce", 8, ["tree"], ["ll"]).pick.latency_us for s in (system, faster))
    assert slow - fast == pytest.approx(2 * (15.0 - 5.0))
