"""A group's chips and torus extent, read from small graphs (trnsim.model.runtimes.group_shape)."""

import pytest

from tests.model.systems import load, ring
from trnsim.model.runtimes.group_shape import GroupShapeError, chip_bandwidth, chips_of, torus_spans
from trnsim.topology import load_topology


def test_chips_of_counts_ranks_per_chip():
    topology = load_topology("trn2", overrides=["chip.ranks=4"])
    chips, per_chip = chips_of(topology, topology.chips[:8])
    assert chips == ["x0.y0", "x0.y1"] and per_chip == 4
    with pytest.raises(GroupShapeError, match="1 to 4 ranks"):
        chips_of(topology, topology.chips[:5])


@pytest.mark.parametrize(("p", "members", "size", "wrap"), [(6, range(6), 6, True), (6, range(4), 4, False)])
def test_a_ring_whole_or_in_part(tmp_path, p, members, size, wrap):
    topology = load(ring(p, lanes=10), tmp_path)
    chips = [topology.chips[i] for i in members]
    (span,) = torus_spans(topology, chips)
    assert (span.size, span.wrap, span.raw_gbps) == (size, wrap, 10.0)
    # a chip of the whole ring has two links, an end of a line one: the slowest chip counts
    assert chip_bandwidth(topology, chips) == pytest.approx(span.bw_gbps * (2 if wrap else 1))


def test_gaps_and_non_boxes_are_refused(tmp_path):
    topology = load(ring(6), tmp_path)
    with pytest.raises(GroupShapeError, match="not neighbours"):
        torus_spans(topology, [topology.chips[0], topology.chips[2]])
    square = load_topology("v5e")
    with pytest.raises(GroupShapeError, match="not a box"):
        torus_spans(square, [square.chips[i] for i in (0, 1, 16)])
