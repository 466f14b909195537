import itertools

import pytest

from trnsim.errors import ConfigError, UsageError
from trnsim.topology.load import load_topology
from trnsim.topology.scaleout import (
    FabricChoice,
    endpoints,
    expected_max_load,
    fabric_choice,
    leaves_reached,
    plan_fabric,
    radix,
    uplink_share,
)


def test_switch_math_matches_the_seed():
    # docs/sources.md#clos-math: 12.8T with 100G ports: 8,192 endpoints on 2 layers, 524,288 on 3; with 400G: 512 on 2
    assert radix(12.8, 100) == 128 and radix(12.8, 400) == 32
    assert endpoints(radix(12.8, 100), 2) == 8_192
    assert endpoints(radix(12.8, 100), 3) == 524_288
    assert endpoints(radix(12.8, 400), 2) == 512
    # 51.2T: 100G ports reach 16x the endpoints of 400G on 2 layers, 64x on 3
    for layers, ratio in ((2, 16), (3, 64)):
        assert endpoints(radix(51.2, 100), layers) == ratio * endpoints(radix(51.2, 400), layers)


def test_endpoints_are_k_squared_over_2_and_k_cubed_over_4():
    for k in (4, 8, 64, 128, 256):
        assert endpoints(k, 1) == k
        assert endpoints(k, 2) == k * k // 2
        assert endpoints(k, 3) == k**3 // 4
        assert leaves_reached(k, 1) == k and leaves_reached(k, 2) == k * k // 2


def _choice(**edits):
    base = dict(
        nic_gbit_per_chip=200, port_gbit=100, tor_tbit=12.8, fabric_tbit=12.8, tors_per_rack=2,
        chips_per_rack=32, design="tor", oversubscription=1.0, policy="spray", hop_ns=15_000, efficiency=0.9,
    )  # fmt: skip
    base.update(edits)
    return FabricChoice(**base)


def test_a_plan_counts_switches_and_links_by_layer():
    # 64 racks of 32 chips, dual ToR: each ToR 32 down and 32 up; 64 ToRs per plane fit under one
    # layer of radix 128, which needs 64 x 32 / 128 = 16 spines per plane
    plan = plan_fabric(_choice(), chips_per_domain=64, domains=32)
    assert plan.racks == 64 and plan.planes == 2 and (plan.tor_down, plan.tor_up) == (32, 32)
    assert [(layer.name, layer.switches) for layer in plan.layers] == [("ToR", 64), ("spine", 16)]
    assert plan.switches == 2 * (64 + 16)
    assert plan.chip_links == 2048 * 2 and plan.fabric_links == [64 * 32 * 2]
    assert plan.bisection_gbps == pytest.approx(2048 * 25 / 2)
    # one more rack than one layer reaches: a third layer
    big = plan_fabric(_choice(), chips_per_domain=32, domains=129)
    assert big.n_layers == 3 and big.largest(2) == 128 * 32


def test_oversubscription_thins_the_uplinks_and_the_bisection():
    plan = plan_fabric(_choice(oversubscription=2), chips_per_domain=64, domains=32)
    assert (plan.tor_down, plan.tor_up) == (32, 16)
    assert plan.bisection_gbps == pytest.approx(2048 * 25 / 2 / 2)


@pytest.mark.parametrize(
    ("edits", "words"),
    [
        (dict(nic_gbit_per_chip=800), "128"),  # 32 chips x 8 ports / 2 ToRs = 128 down: no room for up
        (dict(nic_gbit_per_chip=130), "do not split evenly"),
        (dict(chips_per_rack=48), "whole domains"),
        (dict(tor_tbit=0.1), "port"),
    ],
)
def test_impossible_fabrics_are_refused_with_the_reason(edits, words):
    with pytest.raises(UsageError, match=words):
        plan_fabric(_choice(**edits), chips_per_domain=64, domains=32)


def test_too_few_layers_are_refused():
    with pytest.raises(UsageError, match="need 3 layers"):
        plan_fabric(_choice(), chips_per_domain=32, domains=200, layers=2)


def test_expected_max_load_is_exact_where_it_can_be_counted():
    # brute force: every assignment of F flows to U uplinks is equally likely
    for flows, bins in ((2, 2), (3, 2), (3, 3), (4, 3)):
        outcomes = list(itertools.product(range(bins), repeat=flows))
        exact = sum(max(o.count(b) for b in range(bins)) for o in outcomes) / len(outcomes)
        assert expected_max_load(flows, bins, trials=200_000) == pytest.approx(exact, rel=0.01)
    assert expected_max_load(1, 8) == 1.0 and expected_max_load(5, 1) == 5.0


def test_hashing_costs_throughput_and_spraying_does_not():
    sprayed = plan_fabric(_choice(policy="spray"), chips_per_domain=64, domains=32)
    hashed = plan_fabric(_choice(policy="hash"), chips_per_domain=64, domains=32)
    assert uplink_share(sprayed, 32) == 1.0
    share = uplink_share(hashed, 32)
    assert 0.2 < share < 0.4  # 32 flows on 32 uplinks: the fullest carries about 3.5
    assert share == pytest.approx(1 / expected_max_load(32, 32))
    # oversubscribed: spraying pays the ratio, hashing more
    over = plan_fabric(_choice(policy="spray", oversubscription=2), chips_per_domain=64, domains=32)
    assert uplink_share(over, 32) == pytest.approx(0.5)


def test_catalog_files_give_working_fabrics():
    from trnsim.spec.catalog import catalog_files

    for path in catalog_files():
        sku = path.stem
        topology = load_topology(sku)
        spec = topology.spec
        chips = topology.n_ranks // spec.chip.ranks  # physical chips, counted from the ranks
        choice = fabric_choice(spec, chips, spec.switched.racks if spec.switched else None)
        plan = plan_fabric(choice, chips, 256)
        assert plan.chips == 256 * chips and plan.n_layers >= 2, sku


def test_a_file_without_scale_out_needs_the_nic_rate():
    import msgspec

    spec = msgspec.structs.replace(load_topology("nvl72").spec, scale_out=None)
    with pytest.raises(ConfigError, match="scale_out section or give nic_gbit_per_chip$") as refused:
        fabric_choice(spec, 72, 1)
    assert refused.value.names == ("nic_gbit_per_chip",)
    assert fabric_choice(spec, 72, 1, nic_gbit_per_chip=400).nic_gbit_per_chip == 400
