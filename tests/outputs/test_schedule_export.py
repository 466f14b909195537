"""The exported schedule: a document an engineer can implement, checked against what the op needs."""

import json
from collections import defaultdict

import pytest

from trnsim.model.engine import evaluate
from trnsim.outputs.schedule_export import schedule_document
from trnsim.topology import load_topology
from trnsim.topology.groups import select_group


def _received(document: dict) -> dict[int, float]:
    """Share of the size each rank receives over the whole schedule."""
    patterns = {p["id"]: p for p in document["patterns"]}
    got = defaultdict(float)

    def add(step):
        for _, dst, share in patterns[step["pattern"]]["flows"]:
            got[dst] += share * step["scale"] * step["repeat"]

    for item in document["items"]:
        if item["kind"] == "step":
            add(item)
        else:
            for chain in item["chains"]:
                for stage in chain:
                    for step in stage:
                        add(step)
    return got


@pytest.mark.parametrize(
    ("sku", "group", "algo"),
    [
        ("trn3-nl72x2-gen2", "rack:0", "multidim"),
        ("trn2-nl64", "all", "multidim"),
        ("trn2-nl16", "all", "ring"),
        ("trn2-nl16", "all", "tree"),
    ],
)
def test_every_rank_receives_what_an_allgather_or_allreduce_needs(sku, group, algo):
    topo = load_topology(sku)
    chips = select_group(topo, group)
    p = len(chips)
    op = "allreduce" if algo == "tree" else "allgather"
    result = evaluate(topo, op, [1 << 30], chips, algo=algo)
    document = json.loads(json.dumps(schedule_document(topo, chips, op, result.plans[algo], [1 << 30])))
    received = _received(document)
    if algo == "tree":
        # a double binary tree all-reduce: each tree's p - 1 edges carry half the data up and down
        assert sum(received.values()) == pytest.approx(2 * (p - 1))
    else:  # all-gather: (p-1)/p of the size per rank
        for rank in range(p):
            assert received[rank] == pytest.approx((p - 1) / p, rel=1e-9)
    assert document["ranks"] == chips and document["chunks_by_size"][str(1 << 30)] >= 1


def test_multidim_document_names_dimensions_streams_and_paths():
    topo = load_topology("trn3-nl72x2-gen1")
    result = evaluate(topo, "allreduce", [1 << 30], topo.chips, algo="multidim")
    document = schedule_document(topo, topo.chips, "allreduce", result.plans["multidim"], [1 << 30])
    assert sorted(d["size"] for d in document["dimensions"]) == [2, 4, 18]
    assert sum(s["weight"] for s in document["streams"]) == pytest.approx(1)
    tray_mates = next(p for p in document["patterns"] if p["link_classes"] == ["pcb"])
    paths = tray_mates["routes"]["paths"][0]
    # two tray-mates go through one of the tray's 8 switches, never over the plane, 1/8 of the bytes each
    assert len(paths) == 8 and all(len(path) == 3 and share == 1 / 8 for path, share in paths)
    assert {document["graph"]["nodes"][path[1]] for path, _ in paths} <= set(topo.nodes) - set(topo.chips)
