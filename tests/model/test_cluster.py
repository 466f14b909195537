import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from model import systems
from trnsim.model.cluster import evaluate_cluster, inter_time_us
from trnsim.model.engine import evaluate
from trnsim.topology.load import load_topology
from trnsim.topology.scaleout import fabric_choice, plan_fabric


def _cluster(sku, domains, overrides=(), **edits):
    domain = load_topology(sku, overrides=list(overrides))
    spec = domain.spec
    choice = fabric_choice(spec, domain.n_chips, spec.switched.racks if spec.switched else None, **edits)
    return domain, plan_fabric(choice, domain.n_chips, domains)


def test_sequential_allreduce_is_its_phases_in_closed_form_on_a_ring_of_domains():
    domain, plan = _cluster("trn2-nl16", 8)
    size = 1 << 28
    got = evaluate_cluster(domain, plan, "allreduce", [size], inter_algo="ring", overlap=False).rows[0]
    rs = evaluate(domain, "reducescatter", [size], domain.chips, exact_bounds=False).rows[0].time_us
    ag = evaluate(domain, "allgather", [size], domain.chips, exact_bounds=False).rows[0].time_us
    n, d = 16, 8
    rate = 800 / 8 * 0.9  # GB/s per chip across domains (the file's 800 Gbit/s at the assumed 90%)
    ring = 2 * (d - 1) * (15.0 + size / n / d / (rate * 1e3))
    assert got.time_us == pytest.approx(rs + ag + ring, rel=1e-12)
    assert got.chunks == 1 and got.inter_algorithm == "ring"
    assert got.busbw_gbps == pytest.approx(2 * (n * d - 1) / (n * d) * size / (got.time_us * 1e3))


def test_pipelined_phases_follow_the_chunk_formula_and_pick_the_best_count():
    domain, plan = _cluster("trn2-nl16", 8)
    size = 1 << 30
    got = evaluate_cluster(domain, plan, "allreduce", [size], inter_algo="ring").rows[0]
    rate = 800 / 8 * 0.9

    def total(c):
        piece = size // c
        up = sum(
            evaluate(domain, op, [piece], domain.chips, exact_bounds=False).rows[0].time_us
            for op in ("reducescatter", "allgather")
        )
        out = inter_time_us("allreduce", "ring", 8, piece / 16, rate, 15_000)
        return up + out + (c - 1) * max(up, out)

    options = {c: total(c) for c in (1, 2, 4, 8, 16, 32, 64)}
    assert got.time_us == pytest.approx(min(options.values()), rel=1e-12)
    assert got.chunks == min(options, key=options.get) and got.chunks > 1
    assert got.time_us < got.sequential_us  # overlapping the NICs with the domain's links pays


@pytest.mark.parametrize("op", ["allreduce", "allgather", "reducescatter", "alltoall"])
def test_where_efa_binds_large_sizes_reach_the_efa_bound(op):
    # scale-up links 100x faster than the file's: the NICs are the bottleneck, and busbw tends to
    # the EFA cut (every NIC of a domain busy throughout)
    domain, plan = _cluster("trn2-nl16", 16, ["chip.lane_gbps=400"])
    rows = evaluate_cluster(
        domain, plan, op, [1 << 36], inter_algo="pairwise" if op == "alltoall" else "ring"
    ).rows
    row = rows[0]
    assert row.bound_limited_by.startswith("the NICs' cut")
    assert row.busbw_gbps == pytest.approx(row.bound_busbw_gbps, rel=0.03)
    assert row.busbw_gbps <= row.bound_busbw_gbps * (1 + 1e-9)


@pytest.mark.parametrize(("sku", "domains"), [("trn2-nl64", 2), ("trn2-nl64", 256), ("trn3-nl72x2-gen1", 16)])
def test_large_sizes_reach_the_compositions_ceiling_and_stay_under_the_bound(sku, domains):
    domain, plan = _cluster(sku, domains)
    row = evaluate_cluster(domain, plan, "allreduce", [1 << 36]).rows[0]
    assert row.busbw_gbps <= row.ceiling_busbw_gbps * (1 + 1e-9) <= row.bound_busbw_gbps * (1 + 1e-9)
    assert row.busbw_gbps > 0.9 * row.ceiling_busbw_gbps


def test_more_domains_cost_latency_at_small_sizes():
    small = [
        evaluate_cluster(*_cluster("trn2-nl64", d), "allreduce", [1 << 20]).rows[0].busbw_gbps
        for d in (2, 16, 256, 6250)
    ]
    assert small == sorted(small, reverse=True) and small[0] > 4 * small[-1]


def test_hashing_on_the_tor_uplinks_slows_the_cross_domain_phase():
    domain, sprayed = _cluster("trn2-nl16", 16, ["chip.lane_gbps=400"])
    _, hashed = _cluster("trn2-nl16", 16, ["chip.lane_gbps=400"], policy="hash")
    fast = evaluate_cluster(domain, sprayed, "allgather", [1 << 34], inter_algo="ring").rows[0]
    slow = evaluate_cluster(domain, hashed, "allgather", [1 << 34], inter_algo="ring").rows[0]
    assert slow.time_us > 2 * fast.time_us
    # rail-optimised leaves keep a ring's neighbours on one switch: no collisions
    _, rail = _cluster("trn2-nl16", 16, ["chip.lane_gbps=400"], policy="hash", design="rail")
    railed = evaluate_cluster(domain, rail, "allgather", [1 << 34], inter_algo="ring").rows[0]
    assert railed.time_us == pytest.approx(fast.time_us)


def test_inter_algorithms_closed_forms():
    # halving-doubling on a power of two: 2 log2 D steps and 2(D-1)/D m/B
    m, rate = 1e9, 25.0
    assert inter_time_us("allreduce", "rdh", 16, m, rate, 10_000) == pytest.approx(
        8 * 10 + 2 * 15 / 16 * m / (rate * 1e3)
    )
    # a non-power of two folds the others in and out: 2 extra steps of the whole buffer
    assert inter_time_us("allreduce", "rdh", 24, m, rate, 10_000) == pytest.approx(
        8 * 10 + 2 * 15 / 16 * m / (rate * 1e3) + 2 * (10 + m / (rate * 1e3))
    )
    assert inter_time_us("allgather", "ring", 5, m, rate, 0) == pytest.approx(4 / 5 * m / (rate * 1e3))
    assert inter_time_us("alltoall", "pairwise", 1, m, rate, 0) == 0.0


def test_direct_alltoall_posts_every_send_at_once():
    m, rate = 1e9, 25.0
    assert inter_time_us("alltoall", "direct", 6250, m, rate, 15_000) == pytest.approx(
        15 + 6249 / 6250 * m / (rate * 1e3)
    )
    domain, plan = _cluster("trn2-nl64", 6250)
    row = evaluate_cluster(domain, plan, "alltoall", [1 << 30]).rows[0]
    assert row.inter_algorithm == "direct"  # 6,249 pairwise steps of 15 us lose


def test_rail_leaves_spare_a_cluster_that_fits_one_leaf_every_collision():
    domain, sprayed = _cluster("trn3-nl72x2-gen1", 16)
    _, railed = _cluster("trn3-nl72x2-gen1", 16, policy="hash", design="rail")
    _, tor = _cluster("trn3-nl72x2-gen1", 16, policy="hash")
    for op in ("allreduce", "alltoall"):
        fast = evaluate_cluster(domain, sprayed, op, [1 << 30]).rows[0].time_us
        assert evaluate_cluster(domain, railed, op, [1 << 30]).rows[0].time_us == pytest.approx(fast)
        assert evaluate_cluster(domain, tor, op, [1 << 30]).rows[0].time_us > 1.2 * fast


def test_busbw_never_passes_its_own_ceiling():
    for edits in ({}, {"policy": "hash"}, {"policy": "hash", "design": "rail"}):
        domain, plan = _cluster("trn3-nl72x2-gen1", 16, **edits)
        for row in evaluate_cluster(domain, plan, "allreduce", [1 << 26, 1 << 30, 1 << 34]).rows:
            assert row.busbw_gbps <= row.ceiling_busbw_gbps * (1 + 1e-9)


def test_tiny_sizes_cost_the_smallest_in_domain_buffer_and_align_on_every_rank():
    domain, plan = _cluster("trn2-nl64", 2)
    rows = evaluate_cluster(domain, plan, "allreduce", [8, 512, 1024]).rows
    assert all(row.intra_us > 0 for row in rows)  # never free
    result = evaluate_cluster(domain, plan, "allgather", [1024, 1_000_001])
    assert result.dropped == [1024] and result.rows[0].bytes == 1_000_001 // (128 * 16) * 128 * 16


ONE_DOMAIN = ["trn2-nl16", "trn3-nl32x2-gen1", "ring6", "hgx-h100"]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    system=st.sampled_from(ONE_DOMAIN),
    op=st.sampled_from(["allreduce", "allgather", "reducescatter", "alltoall"]),
    sizes=st.lists(st.integers(16, 30).map(lambda k: 1 << k), min_size=1, max_size=3, unique=True),
    overlap=st.booleans(),
)
# found by this test: one domain's all-reduce ran as a reduce-scatter and an all-gather costed apart
# (2% slower than the engine's multidim on nl32x2 at 1 GiB; on ring6 at 64 KiB sized for those ops,
# 65,472 B, so faster than the engine), and the cluster's bound had the ranks reduce where the
# switches do (hgx-h100: a 405 GB/s bound under the 610 GB/s nvls reaches)
@example(system="trn3-nl32x2-gen1", op="allreduce", sizes=[1 << 22, 1 << 30], overlap=True)
@example(system="ring6", op="allreduce", sizes=[1 << 16], overlap=False)
@example(system="hgx-h100", op="allreduce", sizes=[1 << 16, 1 << 30], overlap=True)
def test_a_cluster_of_one_domain_is_the_engine_on_that_domain(system, op, sizes, overlap):
    """No cross-domain phase: every size costs what the engine gives the domain alone (its fastest
    algorithm), and the cluster's bound (injection and EFA cuts, no latency term) is never tighter
    than the engine's exact bandwidth bound: a lower bound on time cannot exceed the optimum. Nor
    does busbw pass the composition's ceiling."""
    from trnsim.topology.synthetic import ring_topology

    if system == "ring6":
        domain = ring_topology(6)
        plan = plan_fabric(fabric_choice(domain.spec, 6, None, nic_gbit_per_chip=800.0), 6, 1)
    else:
        domain, plan = _cluster(system, 1, nic_gbit_per_chip=None if system != "hgx-h100" else 800.0)
    cluster = evaluate_cluster(domain, plan, op, sorted(sizes), overlap=overlap)
    alone = evaluate(domain, op, sorted(sizes), domain.chips)
    assert [row.bytes for row in cluster.rows] == [row.bytes for row in alone.rows]
    for together, single in zip(cluster.rows, alone.rows, strict=True):
        assert together.time_us == pytest.approx(single.time_us, rel=1e-12, abs=0), together.bytes
        assert together.inter_us == 0.0
        bandwidth_bound = systems.busbw_factor(op, domain.n_ranks) / alone.bound.seconds_per_byte / 1e9
        assert together.bound_busbw_gbps >= bandwidth_bound * (1 - 1e-9)
        assert together.busbw_gbps <= together.ceiling_busbw_gbps * (1 + 1e-9)
        assert together.efficiency <= 1 + 1e-9
