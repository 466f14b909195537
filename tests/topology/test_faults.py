"""Failed components: what is removed, spare lanes first, partitions refused, and the CLI."""

import json

import pytest

from trnsim.errors import UsageError
from trnsim.topology import load_topology
from trnsim.topology.metrics import chip_bandwidth_gbps


def failed(sku: str, *faults: str):
    return load_topology(sku, overrides=[f"fail={fault}" for fault in faults])


def class_bw(topology, chip: str, cls: str) -> float:
    return sum(data["bw_gbps"] for data in topology.incident[chip] if data["cls"] == cls)


def test_a_failed_chip_leaves_with_its_links_and_later_ranks_do_not_shift():
    healthy = load_topology("trn2-nl64")
    topo = failed("trn2-nl64", "chip:5", "chip:6")  # both on the healthy numbering
    gone = {healthy.chips[5], healthy.chips[6]}
    assert topo.n_chips == 62 and not gone & set(topo.chips)
    assert not any(gone & set(ends) for ends in topo.links)
    assert topo.chips == [chip for chip in healthy.chips if chip not in gone]
    assert len(topo.links) == len(healthy.links) - (6 + 6 - (1 if healthy.link(*gone) else 0))


def test_spare_backplane_lanes_absorb_sixteen_failed_lanes_and_not_seventeen():
    healthy = load_topology("trn3-nl72x2-gen1")
    chip = healthy.chips[5]
    before = class_bw(healthy, chip, "backplane")
    assert class_bw(failed("trn3-nl72x2-gen1", "lanes:5:16"), chip, "backplane") == pytest.approx(before)
    assert class_bw(failed("trn3-nl72x2-gen1", "lanes:5:17"), chip, "backplane") == pytest.approx(
        before * 63 / 64
    )
    # in two faults the lanes add up; other chips are untouched
    two = failed("trn3-nl72x2-gen1", "lanes:5:10", "lanes:5:10")
    assert class_bw(two, chip, "backplane") == pytest.approx(before * 60 / 64)
    assert class_bw(two, healthy.chips[6], "backplane") == pytest.approx(
        class_bw(healthy, healthy.chips[6], "backplane")
    )


def test_a_failed_switch_or_switch_tray_costs_its_port_and_the_spares_cover_it():
    healthy = load_topology("trn3-nl72x2-gen1")
    bandwidth = chip_bandwidth_gbps(healthy)
    for fault, switches in (("switch:r0.A.sw3", 1), ("switch-tray:3:0", 4), ("switch-tray:3", 8)):
        topo = failed("trn3-nl72x2-gen1", fault)
        assert len(topo.switches) == len(healthy.switches) - switches
        after = chip_bandwidth_gbps(topo)
        assert all(after[chip] == pytest.approx(bandwidth[chip]) for chip in topo.chips)
    # a whole plane of one rack is beyond the spares: its chips lose their backplane
    plane = failed("trn3-nl72x2-gen1", "plane:A:0")
    chip = "r0.n0.A"
    assert class_bw(plane, chip, "backplane") == 0 and class_bw(plane, "r1.n0.A", "backplane") > 0


def test_cables_and_links_by_class_and_by_ends():
    topo = failed("trn3-nl72x2-gen1", "cable:0")
    assert topo.link("r0.n0.A", "r1.n0.A") is None
    healthy = load_topology("trn3-nl72x2-gen1")
    xrack = [ends for ends, data in healthy.links.items() if data["cls"] == "xrack"]
    assert failed("trn3-nl72x2-gen1", "link:xrack:3").link(*xrack[3]) is None
    assert (
        failed("trn2-nl64", "link:0,1").link(healthy_chip("trn2-nl64", 0), healthy_chip("trn2-nl64", 1))
        is None
    )


def healthy_chip(sku: str, rank: int) -> str:
    return load_topology(sku).chips[rank]


def test_a_torus_routes_around_a_failed_link():
    # a 4x4 torus without the link 0-1: only that pair has no other shortest path, and it now
    # goes round three links (the rest of its ring, or a detour through the other axis)
    from trnsim.routing.hops import hop_stats

    healthy, topo = hop_stats(load_topology("trn2-nl16")), hop_stats(failed("trn2-nl16", "link:0,1"))
    assert topo.pairs == healthy.pairs
    assert topo.avg_links * topo.pairs == pytest.approx(healthy.avg_links * healthy.pairs + 2)
    assert topo.histogram_links[1] == healthy.histogram_links[1] - 1
    assert topo.histogram_links[3] == healthy.histogram_links[3] + 1
    assert topo.diameter_links == healthy.diameter_links


def test_failures_that_split_the_chips_are_refused_naming_the_parts():
    healthy = load_topology("trn2-nl16")
    chip = healthy.chips[0]
    neighbours = [u if v == chip else v for u, v in healthy.links if chip in (u, v)]
    with pytest.raises(UsageError, match=r"split the chips into 2 parts: 15 chips .*; 1 chips \(" + chip):
        failed("trn2-nl16", *(f"link:{chip},{other}" for other in neighbours))


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("bogus:1", "expected KIND:WHAT"),
        ("chip:999", "not a chip"),
        ("link:0,5", "no link joins"),
        ("link:warp:0", "link:CLASS:K"),
        ("lanes:0:999", "name the class"),
        ("lanes:0:999:x", "wires"),
        ("lanes:0:x", "lanes:CHIP:N"),
        ("switch:r9.A.sw0", "not a switch"),
        ("plane:A", "no switch planes"),
        ("cable:0", "no cross-rack cable"),
    ],
)
def test_bad_faults_name_what_is_wrong(fault, message):
    with pytest.raises(UsageError, match=message):
        failed("trn2-nl16", fault)


def test_fail_on_the_command_line(cli):
    one = cli("collective", "allreduce", "--sku", "nl72x2", "--sizes", "1G", "--format", "json")
    spare = cli(
        *("collective", "allreduce", "--sku", "nl72x2", "--sizes", "1G", "--format", "json"),
        "--fail",
        "lanes:5:16",
    )
    beyond = cli(
        *("collective", "allreduce", "--sku", "nl72x2", "--sizes", "1G", "--format", "json"),
        "--fail",
        "lanes:5:17",
    )
    busbw = [json.loads(r.out)["rows"][0]["busbw_gbps"] for r in (one, spare, beyond)]
    assert busbw[1] == pytest.approx(busbw[0], rel=1e-12) and busbw[2] < busbw[0]
    compare = cli(
        "compare",
        "allreduce",
        "--sku",
        "nl64",
        "--sku",
        "nl64:fail=link:0,1",
        "--sizes",
        "1G",
        "--format",
        "json",
    )
    assert compare.code == 0, compare.err
    labels = [v["label"] for v in json.loads(compare.out)["variants"]]
    assert labels == ["trn2-nl64", "trn2-nl64 [fail=link:0,1]"]
    assert cli("topo", "show", "nl64", "--fail", "chip:0").code == 0
    bad = cli("collective", "allreduce", "--sku", "nl64", "--fail", "chip:64")
    assert bad.code == 2 and "--fail 'chip:64'" in bad.err


def test_faults_compose_with_groups_sweep_routing_and_baselines(cli, tmp_path):
    # all 36 trays at once, after a switch tray failed: the spares keep every tray whole
    args = (
        "collective",
        "allreduce",
        "--sku",
        "nl72x2",
        "--groups",
        "tray:*",
        "--sizes",
        "1G",
        "--format",
        "json",
    )
    healthy = json.loads(cli(*args).out)["rows"][0]["time_us"]
    tray = cli(*args, "--fail", "switch-tray:0")
    assert tray.code == 0, tray.err
    assert json.loads(tray.out)["rows"][0]["time_us"] == pytest.approx(healthy, rel=1e-12)
    # a failed chip leaves a tray of three: groups of unequal size are refused by name
    three = cli(*args, "--fail", "chip:0")
    assert three.code == 2 and "3 and 4" in three.err
    swept = cli(
        "sweep",
        "--sku",
        "nl64",
        "--sku",
        "nl64:fail=link:0,1",
        "--op",
        "allreduce",
        "--sizes",
        "1G",
        "--format",
        "json",
    )
    assert swept.code == 0, swept.err
    rows = {row["variant"]: row["busbw_gbps"] for row in json.loads(swept.out)["rows"]}
    assert rows["trn2-nl64 [fail=link:0,1]"] < rows["trn2-nl64"]
    single = cli(
        "collective",
        "alltoall",
        "--sku",
        "nl32x2",
        "--fail",
        "cable:0",
        "--routing",
        "single",
        "--sizes",
        "1G",
    )
    assert single.code == 0, single.err
    saved = tmp_path / "b.json"
    variants = ("--sku", "nl64", "--sku", "nl64:fail=link:0,1", "--sizes", "1G")
    assert cli("compare", "allreduce", *variants, "--save-baseline", str(saved)).code == 0
    assert cli("compare", "allreduce", *variants, "--baseline", str(saved)).code == 0
    # the same failure elsewhere is a different variant: its rows do not match the baseline's
    moved = cli(
        "compare", "allreduce", "--sku", "nl64:fail=link:2,3", "--sizes", "1G", "--baseline", str(saved)
    )
    assert moved.code == 2 and "no row of this run matches" in moved.err


@pytest.mark.parametrize(
    ("sku", "faults", "message"),
    [
        ("trn2-nl16", ["chip:0", "chip:0"], "--fail 'chip:0' is given twice"),
        ("trn2-nl16", ["chip:0", "chip:x0.y0"], "--fail 'chip:x0.y0' fails what 'chip:0' does"),
        ("trn2-nl16", ["link:x:3", "link:x:3"], "--fail 'link:x:3' is given twice"),
        # trn1's ranks 0 and 1 are one chip's: failing both fails that chip twice
        ("trn1-nl16", ["chip:0", "chip:1"], "--fail 'chip:1' fails what 'chip:0' does (chip:x0.y0"),
        ("trn1-nl16", ["chip:0", "chip:0"], "--fail 'chip:0' is given twice"),
    ],
)
def test_the_same_failure_twice_is_refused(sku, faults, message):
    with pytest.raises(UsageError) as refused:
        failed(sku, *faults)
    # the library names its parameter (fail); a caller shows it as it takes it (the CLI: --fail)
    assert message.removeprefix("--") in str(refused.value)
    assert message in refused.value.render(lambda parameter: f"--{parameter}")
    failed(sku, faults[0])  # once is fine


def test_failed_lanes_given_twice_add_up_on_a_chip_of_several_ranks_too():
    one = failed("trn1-nl16", "lanes:0:2:x")
    two = failed("trn1-nl16", "lanes:0:1:x", "lanes:1:1:x")  # ranks 0 and 1: one chip, x0.y0
    assert class_bw(two, "x0.y0", "x") == pytest.approx(class_bw(one, "x0.y0", "x"))
    assert class_bw(two, "x0.y0", "x") < class_bw(failed("trn1-nl16", "lanes:0:1:x"), "x0.y0", "x")
