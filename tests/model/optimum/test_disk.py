"""The exact bounds kept on disk (trnsim.model.optimum.disk): what a later run reads is what the first
computed, keyed by the built system, the group, the op and its shape."""

import pytest

from trnsim.collectives.arguments import Arguments
from trnsim.collectives.ops import get_op
from trnsim.model.optimum import demand, gather, solve
from trnsim.topology import load_topology

CASES = [
    ("nl16", "allreduce"),
    ("nl16", "alltoall"),
    ("nl64", "allgather"),
    ("nl64", "reducescatter"),
    ("nl72x2", "allreduce"),
    ("trn3-nl32x2-gen1", "alltoall"),
]


def _fresh(sku: str, overrides=()):
    return load_topology(sku, overrides=list(overrides))  # its own in-memory cache, empty


def _refuse(monkeypatch):
    """Make every computation of a bound fail: what is returned then was read from disk."""

    def refuse(*args, **kwargs):
        raise AssertionError("computed, not read")

    for module, name in (
        (solve, "_optimum"),
        (gather, "_gather_optimum"),
        (gather, "_rooted_optimum"),
        (demand, "_demand_optimum"),
    ):
        monkeypatch.setattr(module, name, refuse)


@pytest.mark.parametrize(("sku", "op"), CASES)
def test_a_bound_read_back_is_the_one_computed(sku, op, monkeypatch):
    monkeypatch.setenv("TRNSIM_CACHE", "off")
    reference = solve.optimum(_fresh(sku), _fresh(sku).chips, op)
    monkeypatch.delenv("TRNSIM_CACHE")
    topo = _fresh(sku)
    assert solve.optimum(topo, topo.chips, op) == reference  # computed and kept
    _refuse(monkeypatch)
    again = _fresh(sku)
    found = solve.optimum(again, again.chips, op)
    assert found == reference and type(found.seconds_per_byte) is float


def test_rooted_and_demand_bounds_are_read_back_alike(monkeypatch):
    topo = _fresh("nl64")
    group = topo.chips[:16]
    rooted = gather.rooted_optimum(topo, group, 3, False)
    moved = Arguments(pairs=((0, 5), (7, 2))).traffic(get_op("sendrecv"), len(group))
    flow = demand.demand_optimum(topo, group, moved, "sendrecv")
    monkeypatch.setenv("TRNSIM_CACHE", "off")
    fresh = _fresh("nl64")
    assert gather.rooted_optimum(fresh, group, 3, False) == rooted
    assert demand.demand_optimum(fresh, group, moved, "sendrecv") == flow
    monkeypatch.delenv("TRNSIM_CACHE")
    _refuse(monkeypatch)
    again = _fresh("nl64")
    assert gather.rooted_optimum(again, group, 3, False) == rooted
    assert demand.demand_optimum(again, group, moved, "sendrecv") == flow
    other = moved.copy()
    other[0, 5] *= 2  # another matrix: another key
    with pytest.raises(AssertionError, match="computed"):
        demand.demand_optimum(_fresh("nl64"), group, other, "sendrecv")


def test_another_system_is_another_key(monkeypatch):
    base = _fresh("nl16")
    solve.optimum(base, base.chips, "allreduce")
    _refuse(monkeypatch)
    assert _fresh("nl16").digest == base.digest  # built alike, read back
    for changed in (
        _fresh("nl16", ["efficiency.default=0.5"]),  # a what-if
        _fresh("nl16", ["fail=link:x:0"]),  # a failure
        base.at_raw_rates(),  # the same devices at raw rates
    ):
        assert changed.digest != base.digest
        with pytest.raises(AssertionError, match="computed"):
            solve.optimum(changed, changed.chips, "allreduce")


def test_a_group_is_part_of_the_key(monkeypatch):
    topo = _fresh("nl64")
    solve.optimum(topo, topo.chips[:16], "allgather")
    _refuse(monkeypatch)
    assert solve.optimum(_fresh("nl64"), topo.chips[:16], "allgather")
    with pytest.raises(AssertionError, match="computed"):
        solve.optimum(_fresh("nl64"), topo.chips[16:32], "allgather")


def test_the_digest_is_the_same_in_every_process():
    import subprocess
    import sys

    probe = "from trnsim.topology import load_topology; print(load_topology('nl72x2').digest)"
    found = {
        subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(found) == 1 and len(found.pop()) > 10
