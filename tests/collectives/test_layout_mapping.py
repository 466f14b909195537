"""Parallel layouts: the rank mapping, and the seed's question on NL72x2 answered by the engine."""

import pytest
from conftest import topology

from trnsim.collectives.layout import compare_layouts, evaluate_layout, layout_groups
from trnsim.errors import UsageError


def test_the_innermost_dimension_takes_consecutive_ranks():
    members = [str(r) for r in range(12)]
    groups = layout_groups(members, {"tp": 2, "ep": 3, "dp": 2}, ("tp", "ep", "dp"))
    assert groups["tp"][:2] == [["0", "1"], ["2", "3"]]
    assert groups["ep"][:2] == [["0", "2", "4"], ["1", "3", "5"]]
    assert groups["dp"][0] == ["0", "6"]
    for name, degree in (("tp", 2), ("ep", 3), ("dp", 2)):
        flat = sorted(int(m) for g in groups[name] for m in g)
        assert flat == list(range(12)) and all(len(g) == degree for g in groups[name])
    with pytest.raises(UsageError, match="multiply to 6"):
        layout_groups(members, {"tp": 2, "ep": 3}, ("tp", "ep"))


def test_a_layout_is_the_sum_of_its_dimensions_each_run_concurrently():
    topo = topology("trn3-nl72x2-gen1")
    result = evaluate_layout(
        topo, topo.chips, {"ep": 72, "tp": 2}, ("ep", "tp"), {"ep": 1 << 26, "tp": 1 << 24}
    )
    assert [d.name for d in result.dimensions] == ["ep", "tp"]
    assert result.time_us == pytest.approx(sum(d.row.time_us for d in result.dimensions))
    ep = result.dimensions[0]
    # ep innermost: each rack's 72 chips are one expert group, and the two racks share no link
    assert len(ep.groups) == 2 and {topo.nodes[c]["rack"] for c in ep.groups[0]} == {0}
    assert ep.row.slowdown == pytest.approx(1.0)


def test_compare_mappings_ranks_every_order_fastest_first():
    topo = topology("trn2-nl64")
    results = compare_layouts(topo, topo.chips, {"tp": 4, "dp": 16}, {"tp": 1 << 24, "dp": 1 << 28})
    assert len(results) == 2
    assert results[0].time_us <= results[1].time_us


def test_layout_on_the_command_line(cli):
    result = cli(
        "layout",
        "--sku",
        "nl72x2",
        "--ep",
        "72",
        "--tp",
        "2",
        "--size",
        "ep=64M,tp=16M",
        "--compare-mappings",
    )
    assert result.code == 0, result.err
    assert "ep,tp" in result.out and "tp,ep" in result.out
    assert cli("layout", "--sku", "nl72x2", "--ep", "72", "--tp", "3", "--size", "ep=1M,tp=1M").code == 2
    assert cli("layout", "--sku", "nl72x2", "--ep", "72", "--tp", "2").code == 2  # sizes missing
    assert (
        cli(
            "layout", "--sku", "nl72x2", "--ep", "72", "--tp", "2", "--order", "ep", "--size", "ep=1M,tp=1M"
        ).code
        == 2
    )
