"""A Topology: its names (ranks, chips, suggestions for a name that is neither), and the one
explicit cache of what is derived from it.

A Topology keeps what is derived from it in one explicit cache: nothing else is written onto it,
no name outside the cache's can be, and a copy (failures, raw rates) starts with an empty cache."""

import difflib
from dataclasses import fields
from functools import cached_property

import pytest
from conftest import topology

from trnsim.errors import UsageError
from trnsim.model.engine import evaluate
from trnsim.model.optimum import optimum
from trnsim.topology import load_topology
from trnsim.topology.arrays import graph_arrays
from trnsim.topology.faults import apply_faults
from trnsim.topology.graph import Topology, TopologyCache, closest
from trnsim.topology.metrics import chip_bandwidth_gbps, natural_cuts


def _own_attributes() -> set[str]:
    """The names a Topology may hold: its fields and its own cached properties."""
    cached = {name for name, value in vars(Topology).items() if isinstance(value, cached_property)}
    return {f.name for f in fields(Topology)} | cached


@pytest.mark.parametrize("sku", ["trn2-nl16", "trn3-nl32x2-gen2"])
def test_evaluating_writes_nothing_onto_a_topology_but_its_cache(sku):
    topo = load_topology(sku)
    evaluate(topo, "allreduce", [1 << 20], list(topo.chips))
    evaluate(topo, "alltoall", [1 << 20], list(topo.chips))
    optimum(topo, list(topo.chips), "allgather")
    chip_bandwidth_gbps(topo, raw=True)
    natural_cuts(topo)
    assert set(vars(topo)) <= _own_attributes()
    assert topo.cache.arrays is graph_arrays(topo)  # built once, then kept
    assert set(topo.cache.chip_bw_gbps) == {False, True}
    assert topo.cache.cut_bw_gbps is not None
    assert (tuple(topo.chips), "allgather") in topo.cache.optimum


def test_the_cache_takes_only_its_named_entries():
    with pytest.raises(AttributeError):
        TopologyCache().private = 1


def test_a_copy_starts_with_an_empty_cache():
    topo = load_topology("trn2-nl16")
    before = graph_arrays(topo)
    chip_bandwidth_gbps(topo)
    raw = topo.at_raw_rates()
    assert raw.cache.arrays is None and not raw.cache.chip_bw_gbps
    assert graph_arrays(raw).bw_gbps.max() > before.bw_gbps.max()  # raw rates, not the cached ones
    failed = apply_faults(topo, ["chip:0"])
    assert failed.cache.arrays is None
    assert len(graph_arrays(failed).nodes) == len(before.nodes) - 1
    assert graph_arrays(topo) is before  # the original keeps its own


# names: ranks, chips and the suggestions for a name that is neither


def _shared(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


@pytest.mark.parametrize("sku", ["trn1-nl16", "nl72x2", "nl64"])
def test_suggestions_put_the_names_sharing_the_longest_prefix_first(sku):
    """A typo in the last character of a rank's name: the first suggestion shares the longest
    prefix with it of every name difflib finds similar (difflib itself breaks ties in reverse
    alphabetical order: 'x0.y3.c0' before 'x0.y0.c0')."""
    topo = topology(sku)
    names = [*topo.chips, *(c for c in topo.ranks_by_chip if c not in topo.rank_of)]
    for name in topo.chips[:: max(1, len(topo.chips) // 12)]:
        typo = name[:-1] + ("9" if name[-1] != "9" else "8")
        similar = [n for n in names if difflib.SequenceMatcher(None, typo, n).ratio() >= 0.6]
        suggested = closest(typo, names)
        assert suggested and _shared(typo, suggested[0]) == max(_shared(typo, n) for n in similar)
        with pytest.raises(UsageError, match=f"did you mean {suggested[0]}"):
            topo.resolve_chip(typo)


def test_a_chip_hosting_several_ranks_stands_for_its_first_or_all_of_them():
    topo = topology("trn1-nl16")
    for chip, ranks in topo.ranks_by_chip.items():
        assert [topo.nodes[r]["chip"] for r in ranks] == [chip] * 2
        assert topo.resolve_chip(chip) == ranks[0] and topo.resolve_ranks(chip) == ranks
    single = topology("nl16")
    assert all(single.resolve_ranks(name) == [name] for name in single.chips)
