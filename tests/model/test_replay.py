"""Replaying an exported schedule (trnsim-schedule/2) gives the time trnsim reported, to 1e-9."""

import json
from functools import cache

import pytest

from trnsim.collectives.check import check
from trnsim.collectives.formats import read
from trnsim.errors import UsageError
from trnsim.model.engine import evaluate
from trnsim.model.replay import replay_time_us
from trnsim.outputs.schedule_export import schedule_document
from trnsim.topology.load import load_topology

SIZES = [1 << 20, 1 << 30]


@cache
def _evaluated(sku: str, op: str):
    topology = load_topology(sku)
    return topology, evaluate(topology, op, SIZES, list(topology.chips))


def _document(sku: str, op: str, row) -> dict:
    topology, result = _evaluated(sku, op)
    plan = result.plans[row.algorithm]
    # through JSON text, as a replay elsewhere would read it
    return json.loads(json.dumps(schedule_document(topology, result.group, op, plan, [row.bytes])))


# the switched systems list tens of thousands of paths in Python: a few seconds each, so slow-marked
SYSTEMS = ["nl16", "nl64", *(pytest.param(s, marks=pytest.mark.slow) for s in ("nl32x2", "nl72x2"))]


@pytest.mark.parametrize("sku", SYSTEMS)
@pytest.mark.parametrize("op", ["allreduce", "allgather", "reducescatter", "alltoall"])
def test_replay_reproduces_the_reported_time(sku, op):
    _, result = _evaluated(sku, op)
    for row in result.rows:
        document = _document(sku, op, row)
        assert replay_time_us(document, [row.bytes]) == [pytest.approx(row.time_us, rel=1e-9)]


@pytest.mark.parametrize(("sku", "listed"), [("nl16", True), ("nl64", False), ("nl72x2", False)])
def test_alltoall_routes_are_complete_paths_or_the_rule(sku, listed):
    _, result = _evaluated(sku, "alltoall")
    document = _document(sku, "alltoall", result.rows[-1])
    routes = [pattern["routes"] for pattern in document["patterns"]]
    if listed:
        # every path of every flow, shares summing to one flow's bytes
        for pattern in document["patterns"]:
            for paths in pattern["routes"]["paths"]:
                assert sum(share for _, share in paths) == pytest.approx(1.0)
    else:
        assert all(route == {"rule": "ecmp", "link_classes": "any", "relay": True} for route in routes)


def test_splitting_evenly_over_a_few_listed_paths_is_slower_than_reported():
    """Version 1 split evenly over the paths it listed: two per pair here, against the complete routes on nl16's mesh."""
    _, result = _evaluated("nl16", "alltoall")
    row = result.rows[-1]
    document = _document("nl16", "alltoall", row)
    truncated = json.loads(json.dumps(document))
    for pattern in truncated["patterns"]:
        routes = pattern["routes"]["paths"]
        pattern["routes"]["paths"] = [[[path, 1 / min(len(ps), 2)] for path, _ in ps[:2]] for ps in routes]
    complete, cut = replay_time_us(document, [row.bytes])[0], replay_time_us(truncated, [row.bytes])[0]
    assert complete == pytest.approx(row.time_us, rel=1e-9) and cut > complete * 1.01


def test_a_multipath_schedule_lists_its_own_paths_and_replays_to_its_time():
    # the flow program's paths are no routing rule's: the document lists them, and the replay
    # costs them (the longest path's latency, the split's loads) to the reported time
    topology = load_topology("nl16")
    result = evaluate(topology, "sendrecv", SIZES, list(topology.chips), algo="multipath")
    plan = result.plans["multipath"]
    for row in result.rows:
        document = json.loads(
            json.dumps(schedule_document(topology, result.group, "sendrecv", plan, [row.bytes]))
        )
        (pattern,) = document["patterns"]
        assert any(len(paths) > 1 for paths in pattern["routes"]["paths"])
        assert replay_time_us(document, [row.bytes]) == [pytest.approx(row.time_us, rel=1e-9)]


def test_the_document_reads_back_as_its_program():
    _, result = _evaluated("nl16", "allgather")
    document = _document("nl16", "allgather", result.rows[-1])
    imported = read(json.dumps(document).encode(), "s.json")  # sniffed
    assert imported.format == "trnsim-schedule/2" and imported.program.algorithm == document["algorithm"]
    assert check(imported.program).ok and imported.ranks == document["ranks"]


def test_version_1_and_other_json_are_refused_in_one_line():
    with pytest.raises(UsageError, match="trnsim-schedule/1 has no program.*export the schedule again"):
        read(b'{"format": "trnsim-schedule/1"}', "old.json")
    with pytest.raises(UsageError, match="expected format trnsim-schedule/2"):
        replay_time_us({"format": "trnsim-schedule/1"}, [1.0], "old.json")
    with pytest.raises(UsageError, match="program: expected trnsim's program fields"):
        read(
            b'{"format": "trnsim-schedule/2", "program": {"op": "allreduce"}}', "x.json", "trnsim-schedule/2"
        )
