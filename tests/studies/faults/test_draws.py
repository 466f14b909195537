"""Several parts failed at once, drawn by failure rate (trnsim.studies.faults.draws)."""

from studies.faults.common import DEFAULT_RATES, GIB, loader
from trnsim.studies.faults import random_failures
from trnsim.topology import load_topology


def test_random_failures_are_reproducible_and_drawn_by_rate():
    topology = load_topology("trn3-nl32x2-gen1")
    load = loader("trn3-nl32x2-gen1")
    one = random_failures(load, topology, ["allreduce"], [GIB], 2, 4, 7, DEFAULT_RATES)
    two = random_failures(load, topology, ["allreduce"], [GIB], 2, 4, 7, DEFAULT_RATES)
    assert [o.note for o in one] == [o.note for o in two]
    assert all(len(o.note.split("; ")) == 2 for o in one)
    # chips fail a thousand times as often as copper links: they dominate the draws
    assert sum(o.note.count("chip:") for o in one) >= 6
