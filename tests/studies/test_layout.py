"""Parallel layouts: the rank mapping, and the mapping question of docs/sources.md#trn3-claims on NL72x2 answered by the engine."""

import json

import pytest
from conftest import topology

from trnsim.errors import UsageError
from trnsim.studies.layout import compare_layouts, evaluate_layout, layout_groups


def test_the_innermost_dimension_takes_consecutive_ranks():
    members = [str(r) for r in range(12)]
    groups = layout_groups(members, {"tp": 2, "ep": 3, "dp": 2}, ("tp", "ep", "dp"))
    assert groups["tp"][:2] == [["0", "1"], ["2", "3"]]
    assert groups["ep"][:2] == [["0", "2", "4"], ["1", "3", "5"]]
    assert groups["dp"][0] == ["0", "6"]
    for name, degree in (("tp", 2), ("ep", 3), ("dp", 2)):
        flat = sorted(int(m) for g in groups[name] for m in g)
        assert flat == list(range(12)) and all(len(g) == degree for g in groups[name])
    with pytest.raises(UsageError, match="multiply to 6"):
        layout_groups(members, {"tp": 2, "ep": 3}, ("tp", "ep"))


def test_a_layout_is_the_sum_of_its_dimensions_each_run_concurrently():
    topo = topology("trn3-nl72x2-gen1")
    result = evaluate_layout(
        topo, topo.chips, {"ep": 72, "tp": 2}, ("ep", "tp"), {"ep": 1 << 26, "tp": 1 << 24}
    )
    assert [d.name for d in result.dimensions] == ["ep", "tp"]
    assert result.time_us == pytest.approx(sum(d.row.time_us for d in result.dimensions))
    ep = result.dimensions[0]
    # ep innermost: each rack's 72 chips are one expert group, and the two racks share no link
    assert len(ep.groups) == 2 and {topo.nodes[c]["rack"] for c in ep.groups[0]} == {0}
    assert ep.row.slowdown == pytest.approx(1.0)


def test_compare_mappings_ranks_every_order_fastest_first():
    topo = topology("trn2-nl64")
    results = compare_layouts(topo, topo.chips, {"tp": 4, "dp": 16}, {"tp": 1 << 24, "dp": 1 << 28})
    assert len(results) == 2
    assert results[0].time_us <= results[1].time_us


def test_layout_on_the_command_line(cli):
    result = cli(
        "layout",
        "--sku",
        "nl72x2",
        "--ep",
        "72",
        "--tp",
        "2",
        "--size",
        "ep=64M,tp=16M",
        "--compare-mappings",
    )
    assert result.code == 0, result.err
    assert "ep,tp" in result.out and "tp,ep" in result.out
    assert cli("layout", "--sku", "nl72x2", "--ep", "72", "--tp", "3", "--size", "ep=1M,tp=1M").code == 2
    assert cli("layout", "--sku", "nl72x2", "--ep", "72", "--tp", "2").code == 2  # sizes missing
    assert (
        cli(
            "layout", "--sku", "nl72x2", "--ep", "72", "--tp", "2", "--order", "ep", "--size", "ep=1M,tp=1M"
        ).code
        == 2
    )


def test_a_model_shape_gives_each_dimension_its_size_and_calls():
    from trnsim.studies.layout import ModelShape

    shape = ModelShape(hidden=4096, tokens=8192, topk=2, experts=64, params=7e9, layers=32, micro_batches=4)
    degrees = {"tp": 4, "cp": 2, "ep": 8, "dp": 2, "pp": 2}
    sizes = shape.sizes(degrees, 2)
    assert sizes["tp"] == 8192 // 2 * 4096 * 2  # a context shard's activations
    assert sizes["pp"] == 8192 // (2 * 4) * 4096 * 2  # a rank's sequence shard of one micro-batch
    assert sizes["cp"] == 2 * 8192 * 4096 * 2 // 4  # keys and values of the whole sequence, heads over tp
    assert sizes["ep"] == 8192 // (2 * 4) * 2 * 4096 * 2  # each rank's tokens to two experts
    assert sizes["dp"] == int(7e9 * 2 / (4 * 2))  # gradients of the rank's share of the weights
    calls = shape.calls(degrees)
    # pp: each of the 4 micro-batches forward and backward
    assert calls == {"tp": 4 * 4 * 16, "cp": 2 * 4 * 16, "ep": 4 * 4 * 16, "dp": 1.0, "pp": 2 * 4}
    with pytest.raises(UsageError, match="must divide"):
        shape.check({"ep": 5})
    with pytest.raises(UsageError, match="must divide"):
        shape.check({"pp": 3})


def test_the_layout_time_weights_each_dimension_by_its_calls():
    topo = topology("trn3-nl72x2-gen1")
    sizes = {"ep": 1 << 26, "tp": 1 << 24}
    once = evaluate_layout(topo, topo.chips, {"ep": 72, "tp": 2}, ("ep", "tp"), sizes)
    weighted = evaluate_layout(topo, topo.chips, {"ep": 72, "tp": 2}, ("ep", "tp"), sizes, calls={"ep": 3})
    ep, tp = (d.row.time_us for d in once.dimensions)
    assert weighted.time_us == pytest.approx(3 * ep + tp)


def test_hot_experts_slow_the_expert_all_to_all(cli):
    import json

    args = ("layout", "--sku", "nl72x2", "--ep", "72", "--tp", "2", "--order", "ep,tp", "--format", "json")
    shape = ("--hidden", "4096", "--tokens", "4096", "--topk", "2", "--experts", "144", "--layers", "8")
    even = cli(*args, *shape)
    assert even.code == 0, even.err
    hot = cli(*args, *shape, "--skew", "3:2")
    assert hot.code == 0, hot.err
    documents = [json.loads(r.out) for r in (even, hot)]
    ep = [next(d for d in doc["layouts"][0]["dimensions"] if d["dimension"] == "ep") for doc in documents]
    asked = 4096 // 2 * 2 * 4096 * 4  # tokens over tp, to two experts, of the model's width in float
    assert documents[0]["sizes"]["ep"] == asked and ep[0]["calls"] == 32
    assert asked - 72 * 16 < ep[0]["bytes"] <= asked  # as nccl-tests runs it: whole 16-byte blocks per rank
    assert ep[1]["time_us"] > 1.5 * ep[0]["time_us"]
    for bad in (
        ("--hidden", "4096"),  # tokens missing
        ("--params", "7B"),  # no shape
        (*shape, "--experts", "100"),  # 72 does not divide 100
        (*shape, "--params", "lots"),
        (*shape, "--skew", "100"),  # beyond 72 ranks
    ):
        result = cli(*args, *bad)
        assert result.code == 2 and "Traceback" not in result.err, bad


def test_compare_mappings_checks_the_work_of_every_run_together(monkeypatch):
    """Each order's runs fit the limit alone; all of them together must fit it too, before any runs."""
    from trnsim.model.concurrent import prepare_concurrent
    from trnsim.model.router import Router
    from trnsim.studies.layout import OPS

    topo = topology("trn3-nl72x2-gen1")
    degrees, sizes = {"ep": 72, "tp": 2}, {"ep": 1 << 26, "tp": 1 << 24}
    works, layouts = [], []
    for order in (("ep", "tp"), ("tp", "ep")):
        groups = layout_groups(topo.chips, degrees, order)
        mine = [prepare_concurrent(topo, OPS[name], [sizes[name]], groups[name]).work[1] for name in order]
        works += mine
        layouts.append(sum(mine))
    monkeypatch.setenv("TRNSIM_MAX_SHARED_WORK", str(max(layouts)))
    for order in (("ep", "tp"), ("tp", "ep")):
        evaluate_layout(topo, topo.chips, degrees, order, sizes)  # each layout fits alone
    monkeypatch.setattr(Router, "route_all", lambda *args: pytest.fail("routed before the check"))
    with pytest.raises(UsageError, match=f"2 layouts \\(4 distinct runs\\) need {sum(works):,} units"):
        compare_layouts(topo, topo.chips, degrees, sizes)


def test_compare_mappings_runs_each_distinct_dimension_once_with_the_same_results():
    topo = topology("trn2-nl64")
    degrees, sizes = {"tp": 4, "ep": 4, "dp": 4}, {"tp": 1 << 24, "ep": 1 << 22, "dp": 1 << 26}
    compared = {r.order: r for r in compare_layouts(topo, topo.chips, degrees, sizes)}
    assert len(compared) == 6
    for order, result in compared.items():
        alone = evaluate_layout(topo, topo.chips, degrees, order, sizes)
        assert [d.row.time_us for d in result.dimensions] == [d.row.time_us for d in alone.dimensions]


def test_sizes_derived_from_a_model_shape_keep_the_size_cap(cli):
    """--hidden/--tokens/--topk derived 3.55 PiB and sizes above 2**64, and ran with exit 0."""
    from trnsim.units import MAX_SIZE

    shape = ("layout", "--sku", "nl16", "--tp", "16", "--tokens", str(1 << 24))  # float: 4 bytes
    at_cap = cli(*shape, "--hidden", str(MAX_SIZE // 4 // (1 << 24)), "--format", "json")
    assert at_cap.code == 0, at_cap.err
    assert json.loads(at_cap.out)["sizes"]["tp"] == MAX_SIZE
    over = cli(*shape, "--hidden", str(MAX_SIZE // 4 // (1 << 24) + 1))
    assert over.code == 2 and over.err.strip().splitlines() == [
        f"error: the tp message size derived from the model shape (--tokens / --cp x --hidden x --dtype) is "
        f"{4 * (1 << 24) * (MAX_SIZE // 4 // (1 << 24) + 1):,} bytes, more than {MAX_SIZE:,} (1 PiB): give a "
        "smaller shape or --size tp=BYTES"
    ]
    huge = cli("layout", "--sku", "nl72x2", "--ep", "72", "--tp", "2", "--hidden", str(1 << 40), "--tokens",
               str(1 << 40), "--topk", "8", "--size", "tp=1M")  # fmt: skip
    assert huge.code == 2 and "the ep message size" in huge.err and "--topk" in huge.err


def test_pipeline_stages_send_to_the_next_stage_all_boundaries_at_once():
    """Ring of 8 chips, links of B = 100 GB/s each way, no latency, tp=2 x pp=4, S bytes per send.

    Stages of consecutive chips (pp innermost): each pp group is 4 neighbours on the ring and each
    send has its own link, S/B. Stages interleaved (tp innermost): the groups are the even and the odd
    chips, every send goes two hops; the short way each link forward carries two of them, 2S/B.
    Multipath (under auto) may also send some bytes the long way round, so these are the upper ends:
    the time lies between a group alone's and the shortest paths' closed form.
    """
    from trnsim.studies.layout import stage_pairs
    from trnsim.topology.synthetic import ring_topology

    ring, size, bw = ring_topology(8, step_ns=0.0), 1 << 20, 100e9
    assert stage_pairs(4) == ((0, 1), (1, 2), (2, 3))
    for order, shared in ((("pp", "tp"), 1), (("tp", "pp"), 2)):
        result = evaluate_layout(ring, ring.chips, {"tp": 2, "pp": 4}, order, {"tp": size, "pp": size})
        pp = next(d for d in result.dimensions if d.name == "pp")
        assert pp.op == "sendrecv" and len(pp.groups) == 2
        one_link = size / bw * 1e6  # a send over its own link, shortest paths: each group alone
        assert pp.row.alone_time_us <= one_link * (1 + 1e-9)  # multipath may also use the long way
        assert pp.row.alone_time_us * (1 - 1e-9) <= pp.row.time_us <= shared * one_link * (1 + 1e-9)
        assert pp.row.busbw_gbps == pytest.approx(
            size / (pp.row.time_us * 1e3)
        )  # a send's bytes over its time
        assert result.time_us == pytest.approx(sum(d.row.time_us for d in result.dimensions))


def test_a_pipeline_degree_of_one_changes_nothing():
    topo = topology("trn2-nl64")
    degrees, sizes = {"tp": 4, "dp": 16}, {"tp": 1 << 24, "dp": 1 << 26}
    plain = compare_layouts(topo, topo.chips, degrees, sizes)
    with_pp = compare_layouts(topo, topo.chips, {**degrees, "pp": 1}, {**sizes, "pp": 1 << 20})
    assert [r.order for r in with_pp] == [r.order for r in plain]
    for a, b in zip(plain, with_pp, strict=True):
        assert [(d.name, d.groups, d.row.time_us) for d in a.dimensions] == [
            (d.name, d.groups, d.row.time_us) for d in b.dimensions
        ]
