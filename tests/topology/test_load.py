"""Loading a system: a parts section no bill could price is refused before any work; a fault sweep
builds the healthy system once and fails its parts from it."""

import pytest

from trnsim.errors import TrnsimError
from trnsim.spec.catalog import find_sku
from trnsim.topology import load_topology
from trnsim.topology.load import load_healthy, with_failures


def _file(tmp_path, parts: str):
    path = tmp_path / "system.yaml"
    path.write_text(find_sku("nl16").read_text() + parts)
    return path


def test_a_new_part_without_every_figure_is_refused_naming_the_file_and_key(tmp_path):
    path = _file(tmp_path, "parts:\n  my-cable: {price_usd: 3, source: 'assumption: mine'}\n")
    with pytest.raises(TrnsimError) as refused:
        load_topology(topology=path)
    message = str(refused.value)
    assert message.startswith(f"{path}: parts.my-cable.power_w: missing") and "\n" not in message


def test_a_whole_new_part_and_a_partial_known_one_load(tmp_path):
    path = _file(
        tmp_path,
        "parts:\n  my-cable: {price_usd: 3, power_w: 0, source: 'assumption: mine'}\n  aec: {price_usd: 9}\n",
    )
    assert set(load_topology(topology=path).spec.parts) == {"my-cable", "aec"}


def test_a_misspelt_part_edit_is_refused_with_the_close_names():
    with pytest.raises(TrnsimError, match=r"parts\.trainum3\.power_w: missing.*did you mean trainium3"):
        load_topology("nl16", overrides=["parts.trainum3.price_usd=5"])


def _same_system(a, b):
    return (a.chips, a.nodes, a.links, a.overrides, a.faults) == (
        b.chips,
        b.nodes,
        b.links,
        b.overrides,
        b.faults,
    )


@pytest.mark.parametrize(
    ("sku", "edits", "faults"),
    [
        ("nl16", [], ["chip:3"]),
        ("nl72x2", ["latency.switch_ns=50"], ["switch:r0.A.sw3", "lanes:0:20"]),
        ("nl64", [], ["link:0,1"]),
    ],
)
def test_failing_a_shared_healthy_system_gives_what_a_fresh_load_gives(sku, edits, faults):
    built = load_healthy(sku, None, edits)
    before = (dict(built.nodes), {ends: dict(data) for ends, data in built.links.items()}, built.overrides)
    overrides = [*edits, *(f"fail={text}" for text in faults)]
    for text in faults:  # each alone, then all together, all from the one healthy system
        assert _same_system(with_failures(built, [text]), load_topology(sku, None, [*edits, f"fail={text}"]))
    together = with_failures(built, faults)
    assert _same_system(together, load_topology(sku, None, overrides))
    assert together.healthy is built  # one rank per chip: what the healthy system computed is shared
    assert (built.nodes, built.links, built.overrides) == before  # never changed by a failure


def test_the_edits_are_named_in_the_order_given():
    built = load_healthy("nl16", None, ["latency.step_ns=1000"])
    given = ("fail=chip:2", "latency.step_ns=1000")
    assert with_failures(built, ["chip:2"], overrides=given).overrides == given
    assert load_topology("nl16", None, list(given)).overrides == given
