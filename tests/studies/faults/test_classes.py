"""Parts that look alike, by colour refinement (trnsim.studies.faults.classes)."""

import pytest

from studies.faults.common import sweep
from trnsim.studies.faults import equivalence_classes, loss_summary
from trnsim.topology import load_topology
from trnsim.topology.faults import components


@pytest.mark.parametrize("overrides", [(), ("torus.axes.x.wrap=false",)])
def test_parts_that_look_alike_give_what_failing_each_one_gives(overrides):
    # brute force: every link of a 4x4 torus (and of a torus with one axis unwrapped, where links
    # are not all alike) failed in turn gives the same worst and mean as one per equivalence class
    fast = sweep("trn2-nl16", ops=("allreduce", "alltoall"), overrides=overrides, kinds=["link x", "link y"])
    every = sweep(
        "trn2-nl16",
        ops=("allreduce", "alltoall"),
        overrides=overrides,
        kinds=["link x", "link y"],
        exhaustive=True,
    )
    for key in fast.healthy:
        for a, b in zip(loss_summary(fast, key), loss_summary(every, key), strict=True):
            assert a["worst_loss"] == pytest.approx(b["worst_loss"], abs=1e-9)
            assert a["mean_loss"] == pytest.approx(b["mean_loss"], abs=1e-9)
    assert fast.evaluated < every.evaluated


def test_equivalence_classes_count_every_part_once():
    topology = load_topology("trn3-nl72x2-gen1")
    parts = components(topology)
    classes = equivalence_classes(topology, parts)
    assert sum(len(alike) for alike in classes) == len(parts)
    assert len(classes) == len({part.kind for part in parts})  # the catalog's fabric is that symmetric
