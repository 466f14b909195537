"""bill_of_materials: every line priced from the right layer, edits change exactly what they name,
and a part that cannot be priced is refused in one line."""

import pytest

from trnsim.errors import ConfigError, TrnsimError
from trnsim.spec.parts_catalog import load_parts
from trnsim.studies.cost import bill_of_materials, system_parts
from trnsim.topology import load_topology

DONE = ["trn3-nl32x2-gen1", "trn3-nl32x2-gen2", "trn3-nl32x2-gen3", "trn3-nl72x2-gen1", "trn3-nl72x2-gen2",
        "trn3-nl72x2-gen3", "trn2-nl64", "gb200-nvl72"]  # fmt: skip


def _lines(bill):
    return {(line.kind, line.part, line.medium, line.length, line.detail): line for line in bill.lines}


@pytest.mark.parametrize("sku", DONE)
def test_every_line_is_priced_from_the_catalog(sku):
    topology = load_topology(sku)
    parts = system_parts(topology)
    bill = bill_of_materials(topology)
    assert bill.capex_usd > 0 and bill.power_w > 0
    for line in bill.lines:
        part = parts.get(line.part)
        assert (line.price_usd, line.power_w, line.per, line.source) == (
            part.price_usd,
            part.power_w,
            part.per,
            part.source,
        )
        unit = {"each": line.count, "lane": None, "gbit": None}[line.per]
        if unit is not None:
            assert line.quantity == unit
        assert line.capex_usd == pytest.approx(line.quantity * line.price_usd)
    assert bill.capex_usd == pytest.approx(sum(line.capex_usd for line in bill.lines))
    chips = [line for line in bill.lines if not line.network]
    assert [line.kind for line in chips] == ["chip"]
    assert bill.network_capex_usd == pytest.approx(bill.capex_usd - chips[0].capex_usd)
    assert 0 < bill.network_capex_share < 1 and 0 < bill.network_power_share < 1


def test_an_edit_changes_exactly_the_lines_it_names():
    base = bill_of_materials(load_topology("trn3-nl72x2-gen1"))
    edited = bill_of_materials(load_topology("trn3-nl72x2-gen1", overrides=["parts.aec.price_usd=100"]))
    before, after = _lines(base), _lines(edited)
    assert before.keys() == after.keys()
    changed = [key for key in before if before[key] != after[key]]
    assert [after[key].part for key in changed] == ["aec"]
    (key,) = changed
    lanes = 18 * 4 * 16  # the AEC cross-rack links' lanes
    assert after[key].capex_usd - before[key].capex_usd == pytest.approx((100 - 50) * lanes)
    assert edited.capex_usd - base.capex_usd == pytest.approx((100 - 50) * lanes)
    assert edited.power_w == base.power_w


def test_layers_stack_default_file_section_user_file_and_edits(tmp_path):
    user = tmp_path / "parts.yaml"
    user.write_text("parts:\n  trainium3: {price_usd: 2, power_w: 3}\n  aec: {price_usd: 7}\n")
    topology = tmp_path / "nl72x2.yaml"
    text = load_topology("trn3-nl72x2-gen1").path.read_text()
    topology.write_text(text + "parts:\n  trainium3: {price_usd: 1}\n  scorpio-p-32: {price_usd: 5}\n")
    loaded = load_topology(topology=topology, overrides=["parts.trainium3.power_w=4"])
    lines = {line.part: line for line in bill_of_materials(loaded, load_parts(user)).lines}
    assert lines["trainium3"].price_usd == 2  # the user's file over the topology's section
    assert lines["trainium3"].power_w == 4  # the edit over everything
    assert lines["scorpio-p-32"].price_usd == 5  # the topology's section over the default
    assert lines["aec"].price_usd == 7 and lines["aec"].power_w == load_parts().get("aec").power_w
    assert lines["trainium3"].origin.startswith(
        f"{topology} with the edits parts.trainium3.power_w=4, {user}"
    )
    assert lines["scorpio-p-32"].origin.startswith(str(topology))


def test_a_file_s_own_section_goes_over_the_default():
    nvl72 = bill_of_materials(load_topology("gb200-nvl72")).lines[0]
    hgx = bill_of_materials(load_topology("hgx-b200")).lines[0]
    assert (nvl72.part, hgx.part) == ("blackwell", "blackwell")
    assert (nvl72.power_w, hgx.power_w) == (1200, load_parts().get("blackwell").power_w) == (1200, 1000)
    assert nvl72.price_usd == hgx.price_usd
    assert nvl72.source.startswith(
        "power_w: docs/sources.md#part-figures: B200 runs at about 1,200 W in GB200"
    )


def test_a_part_without_a_price_is_refused_in_one_line():
    with pytest.raises(ConfigError) as refused:
        bill_of_materials(load_topology("tpu-v5p-4x4x8"))
    message = str(refused.value)
    assert "\n" not in message and "'tpu-v5p'" in message and "price_usd" in message


def test_a_misspelt_part_edit_is_refused_with_a_suggestion():
    with pytest.raises(ConfigError) as refused:
        bill_of_materials(load_topology("trn3-nl72x2-gen1", overrides=["parts.trainum3.price_usd=5"]))
    message = str(refused.value)
    assert "parts.trainum3.power_w: missing" in message and "trainium3" in message


def test_a_part_priced_per_an_unknown_unit_is_refused():
    topology = load_topology("trn3-nl72x2-gen1", overrides=["parts.trainium3.per=lane"])
    with pytest.raises(
        ConfigError, match=r"parts\.trainium3\.per: a chip is not priced per lane; expected one of each"
    ):
        bill_of_materials(topology)


def test_bad_edits_name_the_key_path():
    for edit, expected in [
        ("parts.trainium3.price_usd=-5", "parts.trainium3.price_usd: expected `float` >= 0.0"),
        (
            "parts.trainium3.per=foo",
            "parts.trainium3.per: Invalid enum value 'foo'; expected one of each, lane, gbit",
        ),
        ("parts.trainium3.cost=5", "parts.trainium3: unknown key `cost`"),
    ]:
        with pytest.raises(TrnsimError) as refused:
            load_topology("trn3-nl72x2-gen1", overrides=[edit])
        assert expected in str(refused.value), (edit, str(refused.value))


def test_nics_are_whole_parts_of_their_capacity():
    bill = bill_of_materials(load_topology("trn3-nl72x2-gen1"))
    (nic,) = [line for line in bill.lines if line.kind == "NIC"]
    assert nic.count == 144 * 200 / 400  # one 400G card per two chips
    odd = bill_of_materials(load_topology("trn3-nl72x2-gen1", overrides=["parts.nic-efa.gbit=300"]))
    (nic,) = [line for line in odd.lines if line.kind == "NIC"]
    assert nic.count == -(-144 * 200 // 300)  # rounded up


def test_domains_change_only_the_scale_out_share():
    small = bill_of_materials(load_topology("trn3-nl72x2-gen1"), domains=1)
    large = bill_of_materials(load_topology("trn3-nl72x2-gen1"), domains=256)
    assert small.fabric_totals("scale-up") == large.fabric_totals("scale-up")
    assert (
        small.fabric_totals("scale-out")[0] < large.fabric_totals("scale-out")[0]
    )  # a spine, then leaves too
    assert (small.domains, large.domains) == (1, 256)


@pytest.fixture(scope="module")
def nl32x2_parts():
    topology = load_topology("trn3-nl32x2-gen1")
    return topology, sorted({line.part for line in bill_of_materials(topology).lines})


def test_capex_is_linear_in_every_price(nl32x2_parts):
    """Any part's price moves the capex by the price times the part's quantity, and no power."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    topology, names = nl32x2_parts
    base = bill_of_materials(topology)

    @settings(max_examples=15, deadline=None)
    @given(st.sampled_from(names), st.floats(min_value=0, max_value=1e5, allow_nan=False))
    def check(name, price):
        edited = bill_of_materials(
            load_topology("trn3-nl32x2-gen1", overrides=[f"parts.{name}.price_usd={price!r}"])
        )
        quantity = sum(line.quantity for line in base.lines if line.part == name)
        old = sum(line.capex_usd for line in base.lines if line.part == name)
        assert edited.capex_usd == pytest.approx(base.capex_usd - old + price * quantity, rel=1e-9, abs=1e-6)
        assert edited.power_w == pytest.approx(base.power_w)

    check()
