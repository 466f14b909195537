"""Building a spec (trnsim.topology.builders): links at their effective rate, chips split into ranks."""

import pytest
from conftest import CATALOG

from trnsim.spec.catalog import load_spec
from trnsim.topology import load_topology
from trnsim.topology.builders import build
from trnsim.topology.graph import RANK_CLASS


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
def test_every_link_runs_at_its_lanes_rate_times_its_class_efficiency(path):
    spec = load_spec(topology=path).spec
    for link in build(spec).links.values():
        assert link["raw_bw_gbps"] == pytest.approx(link["active_lanes"] * spec.chip.lane_gbps, rel=1e-12)
        assert link["efficiency"] == spec.efficiency.of(link["cls"])
        assert link["bw_gbps"] == pytest.approx(link["raw_bw_gbps"] * link["efficiency"], rel=1e-12)


def test_a_chip_of_four_ranks_becomes_the_device_its_consecutive_ranks_pass_through():
    edits = ["chip.ranks=4", "chip.rank_gbps=100", "efficiency.classes={core: 0.5}"]
    plain, ranks = load_topology("trn2-nl16"), load_topology("trn2-nl16", overrides=edits)
    assert ranks.n_ranks == 4 * plain.n_ranks and ranks.n_chips == plain.n_chips
    for k, chip in enumerate(plain.chips):
        assert ranks.nodes[chip]["kind"] == "switch" and ranks.nodes[chip]["role"] == "chip"
        mine = ranks.chips[4 * k : 4 * k + 4]  # a chip's ranks are consecutive
        assert [ranks.nodes[rank]["chip"] for rank in mine] == [chip] * 4
        for rank in mine:
            link = ranks.link(rank, chip)
            assert link["cls"] == RANK_CLASS and link["bw_gbps"] == pytest.approx(100 * 0.5)
    fabric = {ends: data["bw_gbps"] for ends, data in ranks.links.items() if data["cls"] != RANK_CLASS}
    assert fabric == {ends: data["bw_gbps"] for ends, data in plain.links.items()}
