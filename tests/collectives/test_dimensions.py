"""The group's dimensions: products of lines found from the link classes alone."""

import glob
import os

import numpy as np
import pytest

from collectives.synthetic import complete_topology, ring_topology
from trnsim.collectives.dimensions import dimensions
from trnsim.collectives.schedule import Context, NotApplicable
from trnsim.topology import load_topology
from trnsim.topology.groups import select_group

SKUS = sorted(os.path.basename(f)[:-5] for f in glob.glob("topologies/*.yaml"))
TWISTED = {"tpu-v4-4x4x8", "tpu-v4-4x8x8", "tpu-v5p-4x4x8"}  # no product of lines: the twist joins them


def _dims(sku: str, group: str = "all"):
    topo = load_topology(sku)
    return topo, dimensions(Context(topo, select_group(topo, group)))


@pytest.mark.parametrize("sku", [sku for sku in SKUS if sku not in TWISTED])
def test_every_catalog_system_is_a_product_of_its_lines(sku):
    topo, dims = _dims(sku)
    assert int(np.prod([d.size for d in dims])) == topo.n_ranks
    coords = np.stack([d.coord for d in dims], axis=1)
    assert len({tuple(row) for row in coords}) == topo.n_ranks  # every combination once
    for d in dims:
        assert d.coord.min() == 0 and d.coord.max() == d.size - 1
        assert d.classes and set(d.modes) == set(d.classes)


def test_torus_axes_are_rings_in_link_order():
    topo, dims = _dims("trn2-nl64")
    assert sorted((d.name, d.size, d.modes[d.name]) for d in dims) == [
        ("x", 4, "ring"),
        ("y", 4, "ring"),
        ("z", 4, "ring"),
    ]
    for d in dims:
        ring = d.rings[d.name]
        for a, b in ring.items():  # each hop of the ring is a direct link of that axis
            assert topo.link(topo.chips[a], topo.chips[b])["cls"] == d.name


def test_nl72x2_gen1_is_racks_by_trays_by_slots():
    _, dims = _dims("trn3-nl72x2-gen1")
    assert sorted((d.name, d.size, d.classes) for d in dims) == [
        ("backplane", 18, ("backplane",)),
        ("pcb", 4, ("pcb",)),
        ("xrack", 2, ("xrack",)),
    ]


def test_a_plane_serving_two_slots_splits_the_tray_into_a_shared_and_an_own_dimension():
    # Gen2: a plane reaches slots A+B (or C+D) of every tray, so A<->B may go over the tray switches
    # or the plane, while AB<->CD only over the tray switches
    _, dims = _dims("trn3-nl72x2-gen2")
    shapes = sorted((d.size, tuple(sorted(d.classes))) for d in dims)
    assert shapes == [(2, ("backplane", "pcb")), (2, ("pcb",)), (2, ("xrack",)), (18, ("backplane",))]


def test_a_rack_wide_plane_also_serves_the_tray():
    _, dims = _dims("trn3-nl72x2-gen3")
    tray = next(d for d in dims if d.size == 4)
    assert set(tray.classes) == {"pcb", "backplane"}


def test_sub_groups_keep_the_dimensions_they_span():
    _, dims = _dims("trn3-nl72x2-gen1", "rack:0")
    assert sorted(d.size for d in dims) == [4, 18]
    _, dims = _dims("trn3-nl72x2-gen1", "tray:0")
    assert [d.size for d in dims] == [4]


def test_groups_that_are_no_product_are_refused_with_a_reason():
    topo = load_topology("trn3-nl72x2-gen1")
    with pytest.raises(NotApplicable, match="blocks of different sizes"):
        dimensions(Context(topo, select_group(topo, "0-4")))  # a tray and one more chip
    topo = load_topology("trn2-nl64")
    with pytest.raises(NotApplicable):
        dimensions(Context(topo, select_group(topo, "0,5")))  # not neighbours on any axis


def test_small_synthetic_graphs():
    complete = complete_topology(5)
    (dim,) = dimensions(Context(complete, complete.chips))
    assert dim.size == 5 and set(dim.modes.values()) == {"mesh"}
    ring = ring_topology(6)
    (dim,) = dimensions(Context(ring, ring.chips))
    assert dim.size == 6 and dim.modes == {"x": "ring"}


@pytest.mark.parametrize("sku", sorted(TWISTED))
def test_a_twisted_torus_is_refused_as_a_product_of_lines(sku):
    with pytest.raises(NotApplicable):
        _dims(sku)


def _json_under_hash_seed(seed: int, *args: str) -> str:
    import subprocess
    import sys

    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    process = subprocess.run(
        [sys.executable, "-m", "trnsim", *args, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert process.returncode == 0, process.stderr
    return process.stdout


@pytest.mark.parametrize(
    "args",
    [
        # two ranks per chip: rank links join every class's lines, and a failed link leaves the x
        # and y dimensions the same size, so their order came from iterating a set of class names
        "collective allreduce --sku nl16 --set chip.ranks=2 --set chip.rank_gbps=500 "
        "--fail link:x0.y0,x1.y0 --sizes 1G",
        # the x and y links tie for the worst part: which one is named followed the hash seed
        "faults nl16:set=chip.ranks=2:set=chip.rank_gbps=500 --op allreduce",
    ],
)
def test_results_do_not_depend_on_the_hash_seed(args):
    """String hashing is randomised per process: the same run under two seeds prints the same bytes."""
    first, second = (_json_under_hash_seed(seed, *args.split()) for seed in (0, 1))
    assert first == second


def _walked(ctx):
    """The dimensions found by walking the links (the torus shortcut off)."""
    from trnsim.collectives import dimensions as module

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "torus_dimensions", lambda ctx: None)
        return module.dimensions(ctx)


TORI = [sku for sku in SKUS if load_topology(sku).spec.kind == "torus"]


@pytest.mark.parametrize(
    ("source", "sets"),
    [(sku, ()) for sku in TORI]
    + [
        ("examples/torus-16x16x16.yaml", ()),
        (
            "examples/torus-32x32x32.yaml",
            ("torus.axes.x.size=8", "torus.axes.y.size=2", "torus.axes.z.size=3"),
        ),
        (
            "examples/torus-32x32x32.yaml",
            ("torus.axes.x.size=12", "torus.axes.y.size=1", "torus.axes.z.size=10"),
        ),
        (
            "examples/torus-32x32x32.yaml",
            ("torus.axes.x.size=5", "torus.axes.y.size=5", "torus.axes.z.name=a"),
        ),
    ],
)
def test_a_whole_torus_read_off_its_axes_equals_its_walked_lines(source, sets):
    from trnsim.collectives.dimensions import torus_dimensions
    from trnsim.routing.symmetry import torus_symmetry

    topo = load_topology(None, source, overrides=list(sets)) if "/" in source else load_topology(source)
    ctx = Context(topo, topo.chips)
    read = torus_dimensions(ctx)
    if torus_symmetry(topo) is None:
        assert read is None  # twisted, unwrapped, several ranks a chip: walked
        return
    walked = _walked(ctx)
    assert [(d.name, d.size, d.classes, d.modes) for d in read] == [
        (d.name, d.size, d.classes, d.modes) for d in walked
    ]
    for a, b in zip(read, walked, strict=True):
        assert np.array_equal(a.coord, b.coord)
        assert {c: list(r.items()) for c, r in a.rings.items()} == {
            c: list(r.items()) for c, r in b.rings.items()
        }
    assert torus_dimensions(Context(topo, topo.chips[::-1])) is None  # another order: walked
