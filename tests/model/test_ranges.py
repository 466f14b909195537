"""Ranged runs: the corners of a file's assumed ranges, priced independently, bracket the nominal run."""

import math

import pytest

from tests.conftest import topology
from trnsim.errors import ConfigError, UsageError
from trnsim.model.ranges import MAX_RANGED, busbw_ranges, corner_edits, ranged_collective
from trnsim.spec.catalog import catalog_dir, load_spec, spec_value


@pytest.mark.parametrize("path", sorted(catalog_dir().glob("*.yaml")), ids=lambda p: p.stem)
def test_every_catalog_value_lies_inside_the_range_it_states(path):
    spec = load_spec(None, path).spec
    for key, (low, high) in spec.ranges.items():
        assert low <= spec_value(spec, key) <= high, (path.name, key)


def test_corners_are_every_combination_and_skip_what_the_user_set():
    corners = corner_edits({"a.x": (1.0, 2.0), "b.y": (5.0, 6.0), "c.z": (0.5, 0.75)}, ())
    assert len(corners) == 8 and len(set(corners)) == 8
    assert corner_edits({"a.x": (1.0, 2.0), "b.y": (5.0, 6.0)}, ("b.y=5.5",)) == [("a.x=1",), ("a.x=2",)]
    too_many = {f"k{i}.v": (0.0, 1.0) for i in range(MAX_RANGED + 1)}
    with pytest.raises(UsageError, match="at most"):
        corner_edits(too_many, ())


def test_the_range_of_a_bandwidth_bound_run_scales_with_the_efficiency_range():
    # at 1 GiB a trn2-nl16 all-reduce is bandwidth-bound: its busbw scales with the link efficiency,
    # so the corners' busbw divided by each corner's efficiency is (nearly) one number
    topo = topology("trn2-nl16")
    from trnsim.model.backend import Selection

    size = 1 << 30
    spans = ranged_collective(topo, Selection(), "allreduce", [size], "auto", "float", "ideal")
    nominal = Selection().backend(topo).evaluate("allreduce", [size], "auto", "float").rows[0].busbw_gbps
    low, high = spans[0]
    assert low < nominal < high
    lo_eff, hi_eff = topo.spec.ranges["efficiency.default"]
    # latency moves a 1 GiB run by well under 1%: the ratio of the ends is the efficiencies' ratio
    assert math.isclose(high / low, hi_eff / lo_eff, rel_tol=0.01)


def test_a_file_without_ranges_prices_no_corners_and_a_set_key_is_not_ranged():
    h100 = topology("hgx-h100")
    assert busbw_ranges(h100, lambda system: pytest.fail("priced a corner")) is None
    trn = topology("trn2-nl16")
    seen = []

    def price(system):
        seen.append(system.spec.efficiency.default)
        return [1.0]

    from trnsim.topology import load_topology

    edited = load_topology("trn2-nl16", None, ["efficiency.default=0.5"])
    busbw_ranges(edited, price)
    others = len(trn.spec.ranges) - 1  # the latency and the call cost: their corners only
    assert set(seen) == {0.5} and len(seen) == 2**others
    assert trn.spec.ranges


def test_a_range_must_name_a_number_in_the_file(tmp_path):
    import yaml

    from trnsim.spec.catalog import find_sku, read_document

    document = read_document(find_sku("trn2-nl16"))
    for ranges, message in [
        ({"chip.name": [0, 1]}, "expected the path of a number"),
        ({"efficiency.default": [0.9, 0.8]}, "low <= high"),
        ({"no.such": [0, 1]}, "expected the path of a number"),
    ]:
        path = tmp_path / "f.yaml"
        path.write_text(yaml.safe_dump({**document, "ranges": ranges}))
        with pytest.raises(ConfigError, match=message):
            load_spec(None, path)
