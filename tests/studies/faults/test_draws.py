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


def test_every_draw_is_one_task_and_two_workers_give_one_processs_outcomes():
    """A rack's blast radius on NL32x2 (two racks): draws that take both racks have nothing to run
    (busbw 0, as many chips lost as there are), the others run on the rack left; each draw is one
    task of the engine, whether it runs or not, and spreading them changes no outcome."""
    from trnsim.studies.engines import EngineOptions
    from trnsim.studies.faults.study import loader as study_loader
    from trnsim.studies.variants import Variant

    variant = Variant.parse("trn3-nl32x2-gen1")
    topology, load = variant.load(), study_loader(variant)  # a Loader: it pickles, for the workers
    done = []
    args = (load, topology, ["allreduce"], [GIB], 2, 8, 3, DEFAULT_RATES, "rack")
    alone = random_failures(*args, progress=done.append)
    apart = random_failures(*args, engine=EngineOptions(jobs=2))
    assert len(done) == 8 and [draw.first for draw in done] == [o.component for o in alone]
    assert [(o.note, o.lost, o.busbw_gbps) for o in apart] == [(o.note, o.lost, o.busbw_gbps) for o in alone]
    whole = [o for o in alone if len(o.lost) >= topology.n_ranks - 1]
    assert whole and all(set(o.busbw_gbps.values()) == {0.0} for o in whole)
    assert all(min(o.busbw_gbps.values()) > 0 for o in alone if o not in whole)
