"""Parts layers: each figure from the highest layer that gives it; a part must be whole."""

import pytest

from trnsim.errors import ConfigError
from trnsim.spec.parts import Parts
from trnsim.spec.schema import PartSpec

BASE = Parts((("base", {"a": PartSpec(price_usd=1, power_w=2, source="assumption: a")}),))


def test_a_layer_on_top_wins_field_by_field():
    parts = BASE.over("top", {"a": PartSpec(price_usd=5)})
    part = parts.get("a")
    assert (part.price_usd, part.power_w, part.per) == (5, 2, "each")
    # each figure is attributed to its layer, the highest first; a figure without a source names its setter
    assert part.source == "price_usd: set by top; power_w: assumption: a"
    assert part.origin == "top, base"
    sourced = BASE.over("top", {"a": PartSpec(power_w=9, source="assumption: b")}).get("a")
    assert sourced.source == "power_w: assumption: b; price_usd: assumption: a"


def test_a_layer_under_sits_above_the_default_only():
    parts = BASE.over("user", {"a": PartSpec(price_usd=5)}).under(
        "file", {"a": PartSpec(price_usd=9, power_w=7)}
    )
    assert [origin for origin, _ in parts.layers] == ["base", "file", "user"]
    part = parts.get("a")
    assert (part.price_usd, part.power_w) == (5, 7)


def test_a_new_part_needs_every_figure():
    parts = BASE.over("mine", {"b": PartSpec(price_usd=5, source="assumption: b")})
    with pytest.raises(ConfigError, match=r"^mine: parts\.b\.power_w: missing"):
        parts.get("b")


def test_an_unknown_part_names_what_it_is_for_and_the_close_ones():
    with pytest.raises(ConfigError) as refused:
        BASE.get("aa", role="chip of x")
    assert "no part 'aa' (chip of x)" in str(refused.value) and "did you mean a" in str(refused.value)


def test_an_empty_layer_adds_nothing():
    assert BASE.over("x", {}) is BASE and BASE.under("x", {}) is BASE
