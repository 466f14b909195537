"""Hop statistics follow the file's routing: without relay, paths pass through switches only."""

import pytest

from trnsim.errors import UsageError
from trnsim.routing.hops import hop_histogram, hop_stats, link_distances, shortest_path
from trnsim.topology.load import load_topology


def test_without_relay_a_single_switch_rack_keeps_one_hop_and_the_rack_pair_is_refused():
    topo = load_topology("trn3-nl72x2-gen3", overrides=["routing.relay=false"])
    rack = [chip for chip in topo.chips if topo.nodes[chip]["rack"] == 0]
    # inside a rack every pair meets at a UALink switch: one device between them, relay or not
    assert hop_stats(topo, rack).diameter_hops == 1
    path, count = shortest_path(topo, rack[0], rack[5])
    assert len(path) == 3 and topo.nodes[path[1]]["kind"] == "switch" and count > 1
    # across racks only chips (over the cross-rack cables) connect: refused, naming a pair
    with pytest.raises(UsageError, match="cannot reach .* without relay"):
        link_distances(topo)
    with pytest.raises(UsageError, match="without relay"):
        hop_stats(topo)
    assert shortest_path(topo, topo.chips[0], topo.chips[-1]) == ([], 0)


def test_relay_is_what_tori_need():
    relay = load_topology("trn2-nl16")
    assert hop_stats(relay).diameter_links == 4
    with pytest.raises(UsageError, match="without relay"):
        hop_stats(load_topology("trn2-nl16", overrides=["routing.relay=false"]))


def test_topo_path_shows_the_policys_own_path(cli):
    # NL64's first axis is z: dimension order corrects z first, then x, then y
    result = cli("topo", "path", "nl64", "0", "63", "--routing", "single", "--format", "json")
    import json

    steps = json.loads(result.out)["steps"]
    assert [step["cls"] for step in steps] == ["z", "x", "y"]
    refused = cli("topo", "path", "nl72x2", "0", "78", "--routing", "single,no-relay")
    assert refused.code == 2 and "without relay" in refused.err


@pytest.mark.parametrize(
    ("sku", "edits", "group"),
    [
        ("trn2-nl64", ["torus.axes.x.wrap=false"], None),  # a torus cut open: the BFS, not the closed form
        ("trn3-nl72x2-gen3", ["routing.relay=false"], "rack:0"),  # through switches only
        ("trn3-nl72x2-gen1", [], [*range(100, 141), *range(8)]),  # relaying chips; out of order
    ],
)
def test_the_compiled_histogram_equals_the_numpy_walk(monkeypatch, sku, edits, group):
    """The bit-parallel BFS (reordered sources, ordered pairs halved) counts what the chunked walk
    counts: every unordered pair of the listed chips once."""
    from trnsim.routing import kernels
    from trnsim.topology.groups import select_group

    topo = load_topology(sku, overrides=edits)
    if isinstance(group, list):
        chips = [topo.chips[i] for i in group]
    else:
        chips = select_group(topo, group, None) if group else list(topo.chips)
    monkeypatch.setattr(kernels, "COMPILED_FROM", 1 << 60)
    walked = hop_histogram(topo, chips)
    monkeypatch.setattr(kernels, "COMPILED_FROM", 0)
    assert hop_histogram(topo, chips) == walked
    assert walked.pairs == len(chips) * (len(chips) - 1) // 2


def test_the_compiled_histogram_refuses_the_same_pair_and_counts_repeats(monkeypatch):
    """A pair that cannot meet is named as the walk names it; a chip listed twice is a pair at
    distance 0, as before."""
    from trnsim.routing import kernels

    topo = load_topology("trn3-nl72x2-gen3", overrides=["routing.relay=false"])
    monkeypatch.setattr(kernels, "COMPILED_FROM", 1 << 60)
    with pytest.raises(UsageError) as walked:
        hop_histogram(topo, topo.chips)
    chips = topo.chips[:5] + topo.chips[:2]
    repeated = hop_histogram(topo, chips)
    monkeypatch.setattr(kernels, "COMPILED_FROM", 0)
    with pytest.raises(UsageError) as compiled:
        hop_histogram(topo, topo.chips)
    assert str(compiled.value) == str(walked.value)
    assert hop_histogram(topo, chips) == repeated and repeated.histogram_links[0] == 2
