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


def _refined_part_by_part(topology, parts):
    """The reference: every part refined itself (what the sweep did before it refined one part per
    orbit), classes in order of their first part."""
    from trnsim.studies.faults import Refiner

    refiner = Refiner(topology)
    groups: dict[bytes, list] = {}
    for part in parts:
        groups.setdefault(refiner.key(part)[0], []).append(part)
    return list(groups.values())


@pytest.mark.parametrize(
    ("sku", "overrides"),
    [
        ("trn3-nl72x2-gen1", ()),
        ("trn3-nl32x2-gen1", ()),
        ("trn3-ultraserver-gen2", ()),
        ("hgx-h100", ()),
        ("trn1-nl16", ()),  # two ranks per chip
        ("trn2-nl16", ("torus.axes.x.wrap=false",)),
        ("trn3-nl72x2-gen1", ("fail=chip:r0.n3.B",)),  # a failure breaks some of the symmetry
    ],
)
def test_one_refinement_per_orbit_gives_the_classes_of_refining_every_part(sku, overrides):
    topology = load_topology(sku, overrides=list(overrides))
    every = components(topology)
    for kind in sorted({part.kind for part in every}):
        parts = [part for part in every if part.kind == kind]
        if topology.faults and len(parts) > 500:
            continue  # the reference refines each part: the kinds of fewer parts will do
        assert equivalence_classes(topology, parts) == _refined_part_by_part(topology, parts), kind


def test_parts_of_one_orbit_are_renamed_onto_each_other_by_an_automorphism():
    from trnsim.studies.faults.classes import _first_of_orbit

    topology = load_topology("trn3-nl72x2-gen1")
    parts = components(topology)
    first = _first_of_orbit(topology, parts)
    orbits = {rep: [p for p, r in zip(parts, first, strict=True) if r == rep] for rep in set(first)}
    # the symmetric fabric: far fewer orbits than parts, each of one kind
    assert len(orbits) < len(parts) / 50
    assert all(len({part.kind for part in members}) == 1 for members in orbits.values())
