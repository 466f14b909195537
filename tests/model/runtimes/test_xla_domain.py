"""The TPU group as XLA sees it, read from the catalog's graphs (trnsim.model.runtimes.xla_domain)."""

import pytest

from trnsim.errors import NotApplicableError
from trnsim.model.runtimes.xla import CALL_US
from trnsim.model.runtimes.xla_domain import xla_system_of
from trnsim.topology import load_topology


def test_a_row_of_v5e_is_one_wrapping_axis():
    topology = load_topology("v5e")
    facts = topology.spec.runtime.xla
    system = xla_system_of(topology, topology.chips[:16])  # the last axis runs fastest
    (axis,) = system.axes
    assert (axis.name, axis.size, axis.wrap) == ("y", 16, True)
    assert (
        axis.link_gbps == topology.spec.chip.lane_gbps
    )  # one ICI link, raw: the runtime's efficiency applies
    assert (system.efficiency, system.hop_us, system.call_us) == (
        facts.efficiency,
        facts.hop_us,
        facts.call_us,
    )


def test_the_whole_pod_and_parts_of_axes():
    topology = load_topology("v5e")
    assert [(a.name, a.size, a.wrap) for a in xla_system_of(topology, topology.chips).axes] == [
        ("x", 16, True),
        ("y", 16, True),
    ]
    line = xla_system_of(topology, topology.chips[:12]).axes
    assert [(a.size, a.wrap) for a in line] == [(12, False)]
    square = [topology.chips[i] for i in (0, 1, 16, 17)]
    assert [(a.size, a.wrap) for a in xla_system_of(topology, square).axes] == [(2, False), (2, False)]


def test_twisted_axes_count_as_rings():
    topology = load_topology("tpu-v4-4x4x8")
    axes = xla_system_of(topology, topology.chips).axes
    assert [(a.name, a.size, a.wrap) for a in axes] == [("x", 4, True), ("y", 4, True), ("z", 8, True)]


def test_call_cost_unset_is_the_models_assumption():
    # ranges={}: the file's range for runtime.xla.call_us names the value taken away
    topology = load_topology("v5e", overrides=["runtime.xla.call_us=null", "ranges={}"])
    assert xla_system_of(topology, topology.chips[:16]).call_us == CALL_US


@pytest.mark.parametrize(
    ("sku", "members", "words"),
    [
        ("v5e", [0, 2], "not neighbours"),
        ("v5e", [0, 1, 16], "not a box"),
        ("v5e", [0], "at least 2"),
        ("nl16", [0, 1], "no runtime.xla"),
    ],
)
def test_what_xla_does_not_model_is_refused_in_one_line(sku, members, words):
    topology = load_topology(sku)
    with pytest.raises(NotApplicableError) as caught:
        xla_system_of(topology, [topology.chips[i] for i in members])
    text = str(caught.value)
    assert "\n" not in text and words in text and text.startswith("runtime xla on ")


def test_a_switched_file_and_several_ranks_per_chip_are_refused():
    facts = "runtime.xla={efficiency: 0.95}"
    switched = load_topology("trn3-nl32x2-gen1", overrides=[facts])
    with pytest.raises(NotApplicableError, match="switched"):
        xla_system_of(switched, switched.chips[:4])
    cores = load_topology("v5e", overrides=["chip.ranks=2", "chip.rank_gbps=100"])
    with pytest.raises(NotApplicableError, match="2 ranks on a chip"):
        xla_system_of(cores, cores.chips[:4])
