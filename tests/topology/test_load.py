"""Loading a system: a fault sweep builds the healthy system once and fails its parts from it."""

import pytest

from trnsim.topology.load import load_healthy, load_topology, with_failures


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
