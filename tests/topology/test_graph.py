"""A Topology keeps what is derived from it in one explicit cache: nothing else is written onto it,
no name outside the cache's can be, and a copy (failures, raw rates) starts with an empty cache."""

from dataclasses import fields
from functools import cached_property

import pytest

from trnsim.model.engine import evaluate
from trnsim.model.optimum import optimum
from trnsim.topology import load_topology
from trnsim.topology.arrays import graph_arrays
from trnsim.topology.faults import apply_faults
from trnsim.topology.graph import Topology, TopologyCache
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
