"""A group run alone borrows the links of chips outside it: read from the routed plan, said in the
header, and borne out by running every group at once."""

import json
from itertools import combinations

import networkx as nx
import pytest
from conftest import topology

from trnsim.model.borrowed import borrowed_by
from trnsim.model.engine import evaluate

GIB = 1 << 30
SPREAD = "0,9,18,27,36,45,54,63"  # one tensor-parallel group of 8 spread over NL72x2's first rack


def on_shortest_paths(topo, group: list[str]) -> set[str]:
    """Chips outside ``group`` on some shortest path between two members (networkx, brute force)."""
    inside = set(group)
    return {
        node
        for a, b in combinations(group, 2)
        for path in nx.all_shortest_paths(topo.graph, a, b)
        for node in path[1:-1]
        if topo.nodes[node]["kind"] == "chip" and node not in inside
    }


def test_two_chips_across_a_torus_ring_relay_through_both_chips_between_them():
    # trn2-nl16 is a 4x4 torus: chips 0 and 2 of a ring of 4 meet through chip 1 or chip 3 (ECMP
    # takes both); chips 0 and 1 are neighbours and borrow nothing. The ring routes on shortest paths
    # only (``auto`` may pick ``forest``, which borrows chips off them on purpose)
    topo = topology("trn2-nl16")
    far = [topo.chips[0], topo.chips[2]]
    borrowed = borrowed_by(topo, evaluate(topo, "allgather", [GIB], far, algo="ring"))
    assert set(borrowed.chips) == on_shortest_paths(topo, far) == {topo.chips[1], topo.chips[3]}
    assert borrowed.links == 2 * 2 * 2  # two relays, in and out, both directions
    near = [topo.chips[0], topo.chips[1]]
    assert borrowed_by(topo, evaluate(topo, "allgather", [GIB], near, algo="ring")) is None
    assert borrowed_by(topo, evaluate(topo, "allgather", [GIB], topo.chips)) is None


def test_switches_are_not_chips_outside_the_group():
    topo = topology("gb200-nvl72")  # GPUs do not relay: every path is GPU, switch, GPU
    assert borrowed_by(topo, evaluate(topo, "allreduce", [GIB], topo.chips[:8])) is None


def test_a_spread_group_borrows_and_pays_for_it_when_every_group_runs(cli):
    topo = topology("trn3-nl72x2-gen1")
    members = [topo.chips[int(r)] for r in SPREAD.split(",")]
    # the fabric's schedule (several groups at once are the ideal's: alone must be too)
    args = (
        "collective",
        "allgather",
        "--sku",
        "nl72x2",
        "--algo",
        "ring",
        "--sizes",
        "1G",
        "--runtime",
        "ideal",
    )
    alone = json.loads(cli(*args, "--group", SPREAD, "--format", "json").out)
    borrowed = alone["borrowed"]
    assert borrowed["chips"] == len(borrowed["chip_names"]) > 0
    assert set(borrowed["chip_names"]) <= on_shortest_paths(topo, members)
    for fmt in ("table", "markdown"):
        out = cli(*args, "--group", SPREAD, "--format", fmt).out
        header = " ".join(out[: out.index("┏" if fmt == "table" else "|")].split())  # wrapped at 80 columns
        assert f"relays through {borrowed['chips']} chips outside the group" in header
        assert "--groups" in header
    # all 18 such groups at once (9 per rack): each runs slower than it did alone
    every = ";".join(
        ",".join(str(72 * rack + i + 9 * k) for k in range(8)) for rack in (0, 1) for i in range(9)
    )
    together = json.loads(cli(*args, "--groups", every, "--format", "json").out)["rows"][0]
    assert together["alone_time_us"] == pytest.approx(alone["rows"][0]["time_us"], rel=1e-12)
    assert together["time_us"] > 1.5 * together["alone_time_us"]


def test_a_group_of_whole_trays_borrows_nothing_and_loses_nothing_to_the_others(cli):
    args = (
        "collective",
        "allgather",
        "--sku",
        "nl72x2",
        "--algo",
        "ring",
        "--sizes",
        "1G",
        "--runtime",
        "ideal",
    )
    args += ("--format",)
    alone = json.loads(cli(*args, "json", "--group", "0-7").out)
    assert alone["borrowed"] is None
    assert "outside the group" not in cli(*args, "table", "--group", "0-7").out.splitlines()[0]
    together = json.loads(cli(*args, "json", "--groups", "blocks:8").out)["rows"][0]
    assert together["time_us"] == pytest.approx(alone["rows"][0]["time_us"], rel=1e-12)


def test_compare_names_the_variants_that_borrow(cli):
    result = cli(
        "compare", "allgather", "--sku", "nl72x2", "--sku", "trn3-nl72x2-gen3", "--group", SPREAD,
        "--algo", "ring", "--sizes", "1G", "--format", "json",
    )  # fmt: skip
    assert result.code == 0, result.err
    borrowed = json.loads(result.out)["borrowed"]
    # Gen3's one UALink plane reaches every chip of the rack: no member needs a relay
    assert borrowed["trn3-nl72x2-gen3"] is None and borrowed["trn3-nl72x2-gen1"]["chips"] > 0
