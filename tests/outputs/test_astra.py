"""ASTRA-sim export: tori as rings, single-plane fabrics as switches, multi-plane fabrics refused."""

import math

import pytest
import yaml
from conftest import topology

from trnsim.errors import UsageError
from trnsim.outputs.astra import to_astra_sim


def _load(sku, raw=False):
    return yaml.safe_load(to_astra_sim(topology(sku, raw=raw)))


def test_torus_exports_one_ring_per_axis_in_astra_order():
    data = _load("trn2-nl64", raw=True)
    assert data["topology"] == ["Ring", "Ring", "Ring"] and data["npus_count"] == [4, 4, 4]
    # trnsim's last axis (y) is fastest, ASTRA-sim's first dimension is: z (64 GB/s) comes last
    gib = 1e9 / 2**30
    assert data["bandwidth"] == pytest.approx([128 * gib, 128 * gib, 64 * gib], rel=1e-6)
    # the model's own rates: the file's link efficiency applies, as everywhere else
    assert _load("trn2-nl64")["bandwidth"] == pytest.approx([x * 0.88 for x in data["bandwidth"]], rel=1e-6)


def test_many_rank_chips_are_refused():
    with pytest.raises(UsageError, match="host 2 ranks"):
        to_astra_sim(topology("trn1-nl16"))


@pytest.mark.parametrize("sku", ["trn3-nl32x2-gen2", "trn3-nl72x2-gen3", "trn3-ultraserver-gen2"])
def test_single_plane_fabrics_export_and_cover_every_chip(sku):
    data = _load(sku)
    assert math.prod(data["npus_count"]) == topology(sku).n_ranks
    assert data["topology"][-1] == "Ring" and data["npus_count"][-1] == 2  # the paired racks


@pytest.mark.parametrize("sku", ["trn3-nl72x2-gen1", "trn3-nl72x2-gen2", "trn3-nl32x2-gen1"])
def test_multi_plane_fabrics_are_refused_with_a_reason(sku):
    with pytest.raises(UsageError, match="cannot be expressed in ASTRA-sim: its .* switch planes"):
        to_astra_sim(topology(sku))


def test_dropped_links_are_noted():
    assert "direct pcb links between the chips of a node are left out" in to_astra_sim(
        topology("trn3-nl32x2-gen2")
    )
