import re

import pytest
from conftest import topology

from trnsim.errors import ParameterError, UsageError
from trnsim.topology.groups import select_group


def _ranks(sku, spec=None, ranks=None):
    topo = topology(sku)
    return [topo.rank_of[c] for c in select_group(topo, spec, ranks)]


def test_group_specs():
    assert len(_ranks("nl72x2")) == 144
    assert _ranks("nl72x2", "rack:1") == list(range(72, 144))
    assert _ranks("nl72x2", "plane:A") == list(range(0, 144, 4))
    assert _ranks("nl72x2", "server:3") == [12, 13, 14, 15]
    assert _ranks("nl64", "server:2") == list(range(32, 48))
    assert _ranks("nl32x2", "0-31") == list(range(32))
    assert _ranks("nl32x2", "0,2,5-7") == [0, 2, 5, 6, 7]
    assert _ranks("nl32x2", "r0.n0.A,r1.n0.A") == [0, 32]
    assert _ranks("nl16", ranks=4) == [0, 1, 2, 3]
    assert _ranks("trn3-ultraserver-gen1", "server:1") == list(range(16, 32))
    # on the Trn2 tori, a tray is the two chips joined by a PCB trace
    topo = topology("nl64")
    for tray in (0, 5, 31):
        a, b = (topo.chips[r] for r in _ranks("nl64", f"tray:{tray}"))
        assert topo.link(a, b)["medium"] == "pcb"
    assert len(_ranks("nl16", "slot:1")) == 8


@pytest.mark.parametrize(
    ("sku", "spec", "message"),
    [
        ("nl16", "0-200", "rank 16 is not a chip"),
        ("nl16", "0,0", "twice"),
        ("nl16", "3", "at least 2"),
        ("nl16", "rack:0", "has no racks"),
        ("nl72x2", "plane:Z", "no switch plane 'Z'"),
        ("nl72x2", "rack:7", "names no chips"),
        ("nl72x2", "color:red", "unknown group kind 'color'"),
        ("nl16", "5-2", "runs backwards"),
        ("nl16", "server:x", "expected a number"),
        ("nl72x2", "slot:Z", "names no chips"),
        ("trn2-nl256-concept", "tray:999", "names no chips"),
    ],
)
def test_bad_groups_are_refused(sku, spec, message):
    with pytest.raises(UsageError, match=message):
        select_group(topology(sku), spec)


def test_node_groups_follow_location_when_chips_host_several_ranks():
    from trnsim.topology.load import load_topology

    topo = load_topology("trn3-nl72x2-gen1", overrides=["chip.ranks=2", "chip.rank_gbps=1000"])
    for spec in ("tray:1", "node:1", "server:1"):
        group = select_group(topo, spec)
        # every rank of the four chips of tray 1 of rack 0: eight ranks, all on that tray
        assert len(group) == 8 and {topo.nodes[r]["node"] for r in group} == {1}, spec
        assert {topo.nodes[r]["rack"] for r in group} == {0}
    assert (
        len(select_group(topo, "tray:18")) == 8 and topo.nodes[select_group(topo, "tray:18")[0]]["rack"] == 1
    )
    with pytest.raises(UsageError, match="has 288 ranks \\(2 on each chip\\)"):
        select_group(topo, None, 300)


@pytest.mark.parametrize(
    ("sku", "spec", "count", "size"),
    [
        ("trn3-nl72x2-gen1", "tray:*", 36, 4),
        ("trn3-nl72x2-gen1", "rack:*", 2, 72),
        ("trn3-nl72x2-gen1", "plane:*", 4, 36),
        ("trn3-nl72x2-gen1", "stride:72", 72, 2),
        ("trn3-nl72x2-gen1", "blocks:8", 18, 8),
        ("trn2-nl64", "server:*", 4, 16),
        ("trn2-nl64", "stride:16", 16, 4),
        ("trn2-nl16", "tray:*", 8, 2),
        ("trn2-nl16", "0-3;4-7", 2, 4),
    ],
)
def test_many_groups_cover_what_their_spec_says(sku, spec, count, size):
    from trnsim.topology.groups import select_groups

    topo = topology(sku)
    groups = select_groups(topo, spec)
    assert len(groups) == count and {len(g) for g in groups} == {size}
    members = [chip for group in groups for chip in group]
    assert len(members) == len(set(members))


@pytest.mark.parametrize("spec", ["rack:*", "stride:0", "blocks:x", "0-3;2-5", "0;1-3", "nope"])
def test_bad_many_group_specs_are_refused(spec):
    from trnsim.topology.groups import select_groups

    with pytest.raises(ParameterError, match=f"^groups {re.escape(repr(spec))}: ") as refused:
        select_groups(topology("trn2-nl16"), spec)
    assert refused.value.parameters == ("groups",)


def test_a_chip_name_in_a_group_is_all_its_ranks():
    """trn1's chips host two ranks each (x0.y0.c0, x0.y0.c1); naming the chip takes both, as the
    nodes' own chip attribute says."""
    topo = topology("trn1-nl16")
    for chips in (["x0.y0"], ["x0.y0", "x1.y2"], ["x3.y3"]):
        expected = [
            r for chip in chips for r, name in enumerate(topo.chips) if topo.nodes[name]["chip"] == chip
        ]
        assert len(expected) == 2 * len(chips)
        assert _ranks("trn1-nl16", ",".join(chips)) == expected
    assert _ranks("trn1-nl16", "x0.y0,2-3") == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("sku", "edits", "spec", "words"),
    [
        # the survivors of a failure are renumbered: the message says why 15 is out of range
        (
            "nl16",
            ["fail=chip:0"],
            "0-15",
            ["group '0-15': rank 15", "failed parts (chip:0)", "ranks are 0..14"],
        ),
        ("nl16", [], "-3", ["group '-3': -3 is negative", "ranks 0..15"]),
        ("nl16", [], "0,x9.y9", ["group '0,x9.y9': 'x9.y9' is not a chip"]),
        ("nl72x2", [], "rack:2", ["group 'rack:2' names no chips", "its racks are 0..1"]),
        ("nl72x2", [], "slot:Z", ["names no chips", "its slots are A, B, C, D"]),
    ],
)
def test_a_group_that_names_nothing_says_which_parameter_and_what_is_valid(sku, edits, spec, words):
    from trnsim.topology import load_topology

    topo = load_topology(sku, overrides=edits)
    with pytest.raises(UsageError) as caught:
        select_group(topo, spec)
    for word in words:
        assert word in str(caught.value)
    # the library names its parameter; a caller shows it as it takes it (the command line: --group)
    assert str(caught.value).startswith("group ")
    assert caught.value.render({"group": "--group"}.get).startswith("--group ")
