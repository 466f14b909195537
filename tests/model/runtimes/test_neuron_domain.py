"""The Neuron group as the runtime sees it, read from the catalog's graphs
(trnsim.model.runtimes.neuron_domain), and the runtime layer's neuron rows."""

import math

import pytest

from trnsim.errors import NotApplicableError
from trnsim.model.backend import OneGroup
from trnsim.model.runtime import apply_runtime
from trnsim.model.runtimes import neuron
from trnsim.model.runtimes import neuron_constants as c
from trnsim.model.runtimes.neuron_domain import neuron_system_of
from trnsim.topology import load_topology


def _link(topology, a: str, b: str) -> dict:
    return topology.links.get((a, b)) or topology.links[(b, a)]


def test_sixteen_ranks_at_four_per_chip_are_a_ring_of_four_chips():
    # nccom-test's 16 ranks at LNC=2 on trn2: 4 chips, the first row of the 4x4 torus (last axis fastest)
    topology = load_topology("trn2", overrides=["chip.ranks=4"])
    system = neuron_system_of(topology, topology.chips[:16])
    assert (system.chips_per_node, system.ranks_per_chip, system.torus_dims) == (4, 4, (4,))
    # each chip has two links inside the ring, at the file's effective rate
    per_link = _link(topology, "x0.y0", "x0.y1")["bw_gbps"]
    assert system.chip_link_gbps == pytest.approx(2 * per_link)
    assert system.link_gbps_per_rank == pytest.approx(2 * per_link / 4)
    facts = topology.spec.runtime.neuron
    assert (system.hbm_gbps_per_chip, system.call_overhead_us) == (facts.hbm_gbps, facts.call_us)


def test_whole_torus_and_trn1():
    trn2 = load_topology("trn2")
    whole = neuron_system_of(trn2, trn2.chips)
    assert (whole.chips_per_node, whole.ranks_per_chip, whole.torus_dims) == (16, 1, (4, 4))
    assert whole.chip_link_gbps == pytest.approx(4 * _link(trn2, "x0.y0", "x0.y1")["bw_gbps"])
    trn1 = load_topology("trn1")  # two NeuronCore-v2 per chip: 32 ranks
    system = neuron_system_of(trn1, trn1.chips)
    assert (system.n_ranks, system.ranks_per_chip, system.torus_dims) == (32, 2, (4, 4))


def test_a_switched_file_is_one_hop_at_the_chips_switch_links():
    topology = load_topology("trn3-nl32x2-gen1", overrides=["chip.ranks=4"])
    system = neuron_system_of(topology, topology.chips)
    assert system.torus_dims is None and system.ranks_per_chip == 4
    chip = topology.nodes[topology.chips[0]]["chip"]
    # the chip's links to switches and to other chips of the group (every chip is in it)
    expected = sum(
        data["bw_gbps"] for (u, v), data in topology.links.items() if chip in (u, v) and data["cls"] != "core"
    )
    assert system.chip_link_gbps <= expected + 1e-9
    assert system.chip_link_gbps > 0


def test_call_cost_unset_is_the_models_assumption():
    # ranges={}: the file's range for runtime.neuron.call_us names the value taken away
    topology = load_topology("trn2", overrides=["runtime.neuron.call_us=null", "ranges={}"])
    assert neuron_system_of(topology, topology.chips).call_overhead_us == c.CALL_OVERHEAD_US


@pytest.mark.parametrize(
    ("overrides", "members", "words"),
    [
        (["chip.ranks=4"], range(6), "2 to 4 ranks"),  # a chip and a half
        (["chip.ranks=8"], range(16), "more than its 4 logical NeuronCores"),
        ([], [0, 1, 2], "a line, not a ring"),
        ([], [0, 2], "not neighbours"),
        ([], [0], "at least 2"),
        # without its facts the file cannot default to neuron, nor give call_us a range
        (["runtime.neuron=null", "runtime.default=ideal", "ranges={}"], range(4), "no runtime.neuron"),
    ],
)
def test_what_the_model_does_not_cover_is_refused_in_one_line(overrides, members, words):
    topology = load_topology("trn2", overrides=overrides)
    with pytest.raises(NotApplicableError) as caught:
        neuron_system_of(topology, [topology.chips[i] for i in members])
    text = str(caught.value)
    assert "\n" not in text and words in text and text.startswith("runtime neuron on trn2-nl16")


def test_lnc_1_allows_eight_ranks_per_chip():
    topology = load_topology("trn2", overrides=["chip.ranks=8", "runtime.neuron.lnc=1"])
    assert neuron_system_of(topology, topology.chips[:16]).ranks_per_chip == 8


def test_rows_are_the_neuron_models_pick_with_the_ideal_beside():
    topology = load_topology("trn2", overrides=["chip.ranks=4"])
    group = topology.chips[:16]
    sizes = [4, 128 << 10, 2 << 20, 32 << 20, 512 << 20]
    ideal = OneGroup(topology, group).evaluate("allreduce", sizes)
    result = apply_runtime(topology, ideal, "neuron")
    system = neuron_system_of(topology, group)
    # nccom-test's 16-rank --show-algorithm example (N8): mesh, mesh, rdh, kangaring, kangaring
    assert [row.algorithm for row in result.rows] == ["mesh", "mesh", "rdh", "kangaring", "kangaring"]
    for row, base in zip(result.rows, ideal.rows, strict=True):
        pick = neuron.predict(system, "allreduce", row.bytes).pick
        assert math.isclose(row.time_us, pick.time_us) and row.algorithm == pick.algorithm
        assert math.isclose(row.busbw_gbps, row.bytes / (1000 * row.time_us) * 2 * 15 / 16)
        assert (row.ideal_busbw_gbps, row.ideal_algorithm) == (base.busbw_gbps, base.algorithm)
    # the smallest size costs the call and Mesh's two hops (one between chips, one on the chip)
    assert result.rows[0].time_us == pytest.approx(
        system.call_overhead_us + 4 * system.hop_latency_us, abs=0.01
    )
