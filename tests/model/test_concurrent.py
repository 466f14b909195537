"""Concurrent groups: closed forms (disjoint links cost nothing, shared links cost their share) and
loads that add up to routing every group's flows in one step."""

from pathlib import Path

import numpy as np
import pytest
from conftest import topology

from trnsim.collectives import algorithms
from trnsim.collectives.schedule import Context, Step
from trnsim.errors import UsageError
from trnsim.model.concurrent import evaluate_concurrent
from trnsim.model.engine import evaluate
from trnsim.model.router import Router
from trnsim.topology import load_topology
from trnsim.topology.groups import select_group, select_groups

ROOT = Path(__file__).resolve().parents[2]
SIZES = [1 << 20, 1 << 30]
HASH = ["routing.policy=hash", "routing.hash_seeds=4"]


@pytest.mark.parametrize("algo", ["ring", "auto"])
def test_torus_rows_on_their_own_links_take_their_time_alone(algo):
    topo = topology("trn2-nl16")
    rows = [topo.chips[4 * i : 4 * i + 4] for i in range(4)]
    together = evaluate_concurrent(topo, "allreduce", SIZES, rows, algo=algo)
    alone = evaluate(topo, "allreduce", SIZES, rows[0], algo=algo)
    for row, single in zip(together.rows, alone.rows, strict=True):
        assert row.time_us == pytest.approx(single.time_us, rel=1e-12)
        assert row.slowdown == pytest.approx(1.0)


def test_the_sixteen_z_rings_of_nl64_own_their_links():
    topo = topology("trn2-nl64")
    rings = [[topo.chips[r + 16 * z] for z in range(4)] for r in range(16)]
    together = evaluate_concurrent(topo, "allreduce", SIZES, rings)
    alone = evaluate(topo, "allreduce", SIZES, rings[0])
    assert [r.time_us for r in together.rows] == pytest.approx([r.time_us for r in alone.rows], rel=1e-12)


def test_groups_sharing_z_links_slow_down_by_their_shared_load():
    # {z0, z2} and {z1, z3} of one z ring: each flow goes both ways round, and every directed
    # link either group uses carries half of each: the bandwidth term doubles, the latency stays
    topo = topology("trn2-nl64")
    a, b = [topo.chips[0], topo.chips[32]], [topo.chips[16], topo.chips[48]]
    small, large = (evaluate_concurrent(topo, "allreduce", [s], [a, b], algo="ring").rows[0] for s in SIZES)
    slope_together = large.time_us - small.time_us
    slope_alone = large.alone_time_us - small.alone_time_us
    assert slope_together / slope_alone == pytest.approx(2.0, rel=1e-9)


def test_link_loads_are_the_sum_of_every_groups_flows_routed_together():
    # brute force: route the groups' ring steps merged into one step over their union
    topo = topology("trn3-nl72x2-gen1")
    groups = [select_group(topo, f"tray:{k}") for k in (0, 5, 20)]
    result = evaluate_concurrent(topo, "allgather", [1 << 24], groups, algo="ring")
    union = [chip for group in groups for chip in group]
    router = Router(topo, union)
    merged = np.zeros(len(router.arrays.src))
    for offset, group in zip(range(0, len(union), 4), groups, strict=True):
        for step in algorithms.find("ring").schedule(Context(topo, group), "allgather"):
            src, dst, weight = step.flows()
            merged += step.repeat * router.route(Step(src + offset, dst + offset, weight)).link_loads
    np.testing.assert_allclose(result.link_loads["ring"], merged, rtol=1e-12, atol=1e-15)


def test_all_trays_of_nl72x2_at_once_are_as_fast_as_one():
    topo = topology("trn3-nl72x2-gen1")
    trays = [select_group(topo, f"tray:{k}") for k in range(36)]
    together = evaluate_concurrent(topo, "allreduce", SIZES, trays)
    assert all(row.slowdown == pytest.approx(1.0) for row in together.rows)


def test_groups_must_be_disjoint_and_of_one_size():
    topo = topology("trn2-nl16")
    with pytest.raises(UsageError, match="disjoint"):
        evaluate_concurrent(topo, "allreduce", SIZES, [topo.chips[0:4], topo.chips[3:7]])
    with pytest.raises(UsageError, match="one size"):
        evaluate_concurrent(topo, "allreduce", SIZES, [topo.chips[0:4], topo.chips[4:6]])


def test_groups_on_the_command_line(cli):
    import json

    result = cli(
        "collective",
        "allreduce",
        "--sku",
        "nl64",
        "--groups",
        "0,32;16,48",
        "--algo",
        "ring",
        "--sizes",
        "1G",
        "--format",
        "json",
    )
    assert result.code == 0, result.err
    row = json.loads(result.out)["rows"][0]
    assert row["slowdown"] == pytest.approx(2.0, rel=1e-3) and len(row["group_times_us"]) == 2
    assert (
        cli("collective", "allreduce", "--sku", "nl64", "--groups", "stride:16", "--group", "0-3").code == 2
    )


def test_one_group_under_hash_routing_takes_its_time_alone():
    # every seed routes every group; with one group nothing is shared, so the mean and the worst
    # seed's time are the single-group evaluation's
    topo = load_topology("trn3-nl32x2-gen1", overrides=HASH)
    group = select_group(topo, "all")
    together = evaluate_concurrent(topo, "alltoall", SIZES, [group], algo="mesh")
    alone = evaluate(topo, "alltoall", SIZES, group, algo="mesh")
    for row, single in zip(together.rows, alone.rows, strict=True):
        assert row.time_us == pytest.approx(single.time_us, rel=1e-12)
        assert row.worst_time_us == pytest.approx(single.worst_time_us, rel=1e-12)
    assert row.worst_time_us > row.time_us  # the seeds differ: hashing is not all alike


def test_hashed_groups_wait_for_the_unluckiest_group():
    # each seed is one hash function for every group: the run waits for that seed's slowest group,
    # so its time is the mean of a maximum, above every group's own mean once the groups differ
    topo = load_topology("trn3-nl72x2-gen1", overrides=HASH)
    servers = select_groups(topo, "server:*")
    result = evaluate_concurrent(topo, "alltoall", [1 << 28], servers, algo="mesh").rows[0]
    for k in (0, 1, 4):  # the trays share no link: each group's mean is its time alone
        alone = evaluate(topo, "alltoall", [1 << 28], servers[k], algo="mesh").rows[0]
        assert result.group_times_us[k] == pytest.approx(alone.time_us, rel=1e-12)
    assert len({round(t, 6) for t in result.group_times_us}) > 1
    assert result.time_us > max(result.group_times_us) * (1 + 1e-6)
    assert result.time_us <= result.worst_time_us
    # "alone" waits for the unluckiest group too: what is left is sharing, and nothing is shared
    assert result.slowdown == pytest.approx(1.0, rel=1e-12)


def test_hashed_groups_that_share_links_slow_each_other():
    topo = load_topology("trn2-nl64", overrides=HASH)
    a, b = [topo.chips[0], topo.chips[32]], [topo.chips[16], topo.chips[48]]
    row = evaluate_concurrent(topo, "allreduce", [1 << 30], [a, b], algo="ring").rows[0]
    assert row.slowdown > 1.5


def test_the_bound_holds_under_sharing():
    topo = topology("trn2-nl64")
    for op in ("allreduce", "alltoall"):
        result = evaluate_concurrent(topo, op, SIZES, select_groups(topo, "stride:16"))
        for row in result.rows:
            assert 0 < row.efficiency <= 1 + 1e-9
            assert row.busbw_gbps <= row.bound_busbw_gbps * (1 + 1e-9)


@pytest.mark.parametrize(
    ("sku", "pick"),
    [
        ("trn2-nl64", lambda chips: [[chips[r + 16 * z] for z in range(4)] for r in range(16)]),
        ("trn2-nl64", lambda chips: [[chips[0], chips[32]], [chips[1], chips[33]], [chips[16], chips[48]]]),
        ("trn2-nl16", lambda chips: [chips[0:4], chips[4:8]]),
    ],
)
def test_translated_groups_reuse_exactly_what_routing_each_would_give(sku, pick, monkeypatch):
    from trnsim.model.concurrent import prepare
    from trnsim.model.concurrent.translates import translates

    topo = topology(sku)
    groups = pick(topo.chips)
    fast = evaluate_concurrent(topo, "allreduce", SIZES, groups)
    assert any(image is not None for image in translates(topo, groups))
    monkeypatch.setattr(prepare, "translates", lambda topology, groups: [None] * len(groups))
    slow = evaluate_concurrent(topo, "allreduce", SIZES, groups)
    for a, b in zip(fast.rows, slow.rows, strict=True):
        assert (a.algorithm, a.slowest) == (b.algorithm, b.slowest)
        assert a.group_times_us == pytest.approx(b.group_times_us, rel=1e-9)
        assert a.alone_time_us == pytest.approx(b.alone_time_us, rel=1e-9)
    for name in fast.link_loads:
        # a group's own ring search may orient its ring the other way than its original's, moved:
        # an equivalent schedule, so the loads agree as a multiset
        np.testing.assert_allclose(
            np.sort(fast.link_loads[name]), np.sort(slow.link_loads[name]), rtol=1e-9, atol=1e-15
        )


def test_four_stride_groups_on_one_z_ring_each_pay_for_all_four(tmp_path):
    # a 2x2x16 torus: groups {z = k, k+4, k+8, k+12} of one z ring. Each group's ring step sends
    # every member to the next, 4 links on, in one direction round the ring (4 < 16/2): each directed
    # z link carries one flow of every group, so the bandwidth term is 4x the time alone
    text = (ROOT / "examples" / "torus-16x16x16.yaml").read_text()
    text = text.replace("name: x, size: 16", "name: x, size: 2").replace(
        "name: y, size: 16", "name: y, size: 2"
    )
    path = tmp_path / "torus-2x2x16.yaml"
    path.write_text(text.replace("name: torus-16x16x16", "name: torus-2x2x16"))
    topo = load_topology(None, path)
    column = sorted(
        (c for c in topo.chips if topo.nodes[c]["coord"][:2] == (0, 0)), key=lambda c: topo.nodes[c]["coord"]
    )
    assert len(column) == 16
    groups = [[column[z] for z in range(k, 16, 4)] for k in range(4)]
    small, large = (evaluate_concurrent(topo, "allgather", [s], groups, algo="ring").rows[0] for s in SIZES)
    slope_together = large.time_us - small.time_us
    slope_alone = large.alone_time_us - small.alone_time_us
    assert slope_together / slope_alone == pytest.approx(4.0, rel=1e-9)
    # and the latency is shared by nobody: at the small size the extra time is 3 bandwidth terms alone
    bandwidth_alone = SIZES[0] * slope_alone / (SIZES[1] - SIZES[0])
    assert small.time_us - small.alone_time_us == pytest.approx(3 * bandwidth_alone, rel=1e-6)


def test_explain_lists_every_group(cli):
    args = ("collective", "allreduce", "--sku", "nl64", "--groups", "0,32;16,48;1,33", "--algo", "ring")
    result = cli(*args, "--sizes", "1M,1G", "--explain", "--format", "csv")
    assert result.code == 0, result.err
    per_group = result.out.split("# each group")[1].strip().splitlines()[2:]
    assert len(per_group) == 3 * 2
    # the two groups on one z ring share it and set the run's time; the third has its ring to itself
    at_1g = [line.split(",") for line in per_group if ",1073741824," in line]
    ratios = [float(fields[-1]) for fields in at_1g]
    assert ratios[:2] == [1.0, 1.0] and ratios[2] == pytest.approx(0.5, rel=1e-3)


def test_group_specs_that_cannot_run_in_lockstep_are_refused_by_name(cli):
    for spec, message in (
        ("blocks:3", "blocks of 3"),
        ("stride:7", "7 strided groups"),
        ("0-3;4-6", "3 and 4"),
    ):
        result = cli("collective", "allreduce", "--sku", "nl64", "--groups", spec, "--sizes", "1M")
        assert result.code == 2 and message in result.err and spec in result.err


def test_a_sweep_skips_the_systems_a_group_spec_does_not_fit(cli):
    result = cli(
        "sweep",
        "--sku",
        "nl16",
        "--sku",
        "nl72x2",
        "--op",
        "allreduce",
        "--groups",
        "rack:*",
        "--sizes",
        "1M",
    )
    assert result.code == 0, result.err
    assert "skipped: trn2-nl16" in result.err and "trn3-nl72x2-gen1" in result.out


def test_concurrent_runs_check_their_options_as_single_groups_do():
    topo = topology("trn2-nl64")
    rings = select_groups(topo, "stride:16")
    with pytest.raises(UsageError, match="^alpha_us must be >= 0"):
        evaluate_concurrent(topo, "allreduce", SIZES, rings, alpha_us=-1.0)
    with pytest.raises(UsageError, match="^max_chunks: "):
        evaluate_concurrent(topo, "allreduce", SIZES, rings, max_chunks=0)
    with pytest.raises(UsageError, match="give larger sizes"):
        evaluate_concurrent(topo, "allreduce", [1], rings)


def _unlike_racks(topo) -> list[list[str]]:
    """NL72x2's two racks, the second from its second chip on: no automorphism carries the first
    onto it member by member, so both are routed."""
    first, second = select_groups(topo, "rack:*")
    return [first, second[1:] + second[:1]]


def test_routing_work_scales_with_the_groups_routed(monkeypatch):
    """Concurrent groups had no work limit: 32 groups of 1,024 ranks ran for minutes."""
    topo = topology("trn3-nl72x2-gen1")
    racks = _unlike_racks(topo)
    one_group = len(racks[0]) * (len(topo.nodes) + 2 * len(topo.links))  # a BFS from every member
    monkeypatch.setenv("TRNSIM_MAX_ROUTING", str(one_group))
    evaluate(topo, "allreduce", [1 << 20], racks[0], algo="ring")  # one group fits
    with pytest.raises(UsageError, match=r"2 groups of 72 chips at once .*TRNSIM_MAX_ROUTING"):
        evaluate_concurrent(topo, "allreduce", [1 << 20], racks, algo="ring")
    monkeypatch.setenv("TRNSIM_MAX_ROUTING", str(2 * one_group))
    evaluate_concurrent(topo, "allreduce", [1 << 20], racks, algo="ring")


def test_translates_on_a_torus_cost_no_routing_work(monkeypatch):
    topo = topology("trn2-nl64")
    rings = select_groups(topo, "stride:16")  # the 16 z-rings, translates of the first
    monkeypatch.setenv("TRNSIM_MAX_ROUTING", str(len(rings[0]) * (len(topo.nodes) + 2 * len(topo.links))))
    assert len(evaluate_concurrent(topo, "allreduce", [1 << 20], rings).groups) == 16


def test_copies_on_a_switched_fabric_cost_no_routing_work(monkeypatch):
    topo = topology("trn3-nl72x2-gen1")
    racks = select_groups(topo, "rack:*")  # the other rack is the first one's copy (the racks swapped)
    monkeypatch.setenv("TRNSIM_MAX_ROUTING", str(len(racks[0]) * (len(topo.nodes) + 2 * len(topo.links))))
    assert len(evaluate_concurrent(topo, "allreduce", [1 << 20], racks, algo="ring").groups) == 2
    monkeypatch.setenv("TRNSIM_MAX_ROUTING", "1")
    with pytest.raises(
        UsageError,
        match=r"2 groups of 72 chips at once \(1 routed; the other 1 is a copy of it moved by the fabric's symmetry\)",
    ):
        evaluate_concurrent(topo, "allreduce", [1 << 20], racks, algo="ring")


def test_shared_link_work_is_refused_before_any_routing(monkeypatch):
    topo = topology("trn3-nl72x2-gen1")
    racks = _unlike_racks(topo)

    def no_routing(*args, **kwargs):
        raise AssertionError("routed before the work was checked")

    monkeypatch.setattr(Router, "route_all", no_routing)
    # ring's one step keeps each routed group's loads and their sum on every directed link
    needed = 1 * 2 * len(topo.links) * (len(racks) + 2)
    monkeypatch.setenv("TRNSIM_MAX_SHARED_WORK", str(needed - 1))
    with pytest.raises(UsageError, match=f"{needed:,} units of shared-link work.*TRNSIM_MAX_SHARED_WORK"):
        evaluate_concurrent(topo, "allreduce", [1 << 20], racks, algo="ring")


@pytest.mark.parametrize(
    ("sku", "op", "pick", "sizes"),
    [
        ("trn3-nl72x2-gen1", "alltoall", lambda chips: [chips[0::2], chips[1::2]], [1 << 10, 1 << 20]),
        ("trn3-nl72x2-gen1", "alltoall", lambda chips: [chips[0::2], chips[1::2]], [1 << 34]),
        (
            "trn3-nl32x2-gen1",
            "allreduce",
            lambda chips: [chips[i : i + 16] for i in range(0, len(chips), 16)],
            SIZES,
        ),
        (
            "trn2-nl64",
            "alltoall",
            lambda chips: [chips[i : i + 16] for i in range(0, len(chips), 16)],
            [1 << 10],
        ),
    ],
)
def test_an_algorithm_slower_on_its_alphas_alone_than_the_best_is_not_routed(
    sku, op, pick, sizes, monkeypatch
):
    """An algorithm whose steps' alphas alone take longer than the fastest one found, at every size,
    is not routed; the rows are those of routing every algorithm."""
    from trnsim.model.concurrent import run

    topo = topology(sku)
    groups = pick(list(topo.chips))
    fast = evaluate_concurrent(topo, op, sizes, groups)
    monkeypatch.setattr(run, "_floor_us", lambda schedules, costing: 0.0)
    slow = evaluate_concurrent(topo, op, sizes, groups)
    assert fast.rows == slow.rows and fast.skipped == slow.skipped
    assert all(fast.by_algorithm[name] == slow.by_algorithm[name] for name in fast.by_algorithm)
    left_out = set(slow.by_algorithm) - set(fast.by_algorithm)
    assert ("pairwise" in left_out) == (op == "alltoall" and sizes[-1] < 1 << 30)
