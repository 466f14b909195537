"""Engine invariants over the whole catalog, and the issue's published-behaviour checks."""

import math

import numpy as np
import pytest
from conftest import CATALOG, topology
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model import systems
from trnsim.collectives.algorithms import Context, Pipeline
from trnsim.collectives.ops import BASIC, OPS
from trnsim.model.engine import evaluate
from trnsim.model.plan import make_plan
from trnsim.model.router import Router
from trnsim.topology.groups import select_group

SIZES = [8, 1024, 65536, 1 << 20, 1 << 24, 1 << 30]


def _check_rows(result, op):
    # nccl-tests' definitions (PERFORMANCE.md), written out: algbw = S / t, busbw = algbw x factor
    factor = systems.busbw_factor(op, result.ranks)
    previous = 0.0
    for row in result.rows:
        assert row.busbw_gbps <= row.bound_busbw_gbps * (1 + 1e-9), row
        assert 0 < row.efficiency <= 1 + 1e-9
        assert row.time_us >= previous - 1e-9  # time never falls as size grows
        previous = row.time_us
        assert math.isclose(row.algbw_gbps, row.bytes / (row.time_us * 1e-6) / 1e9, rel_tol=1e-12)
        assert math.isclose(row.busbw_gbps, row.bytes / (row.time_us * 1e-6) / 1e9 * factor, rel_tol=1e-12)
        assert math.isclose(row.efficiency, row.busbw_gbps / row.bound_busbw_gbps, rel_tol=1e-9)
        assert row.bound_busbw_gbps <= row.peak_busbw_gbps * (1 + 1e-9) or row.bound_limited_by == "latency"


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
@pytest.mark.parametrize("op", list(BASIC))
def test_every_sku_and_op_runs_with_auto(path, op):
    topo = topology(path.stem)
    result = evaluate(topo, op, SIZES, topo.chips, algo="auto")
    kept = [row.requested_bytes for row in result.rows]
    assert sorted(kept + result.dropped) == SIZES  # every size is a row or named as left out
    assert all(size < min(kept) for size in result.dropped)  # only sizes below one aligned unit
    _check_rows(result, op)


@pytest.mark.parametrize("op", list(BASIC))
@pytest.mark.parametrize(
    "ranks, dtype, element", [(2, "float", 4), (16, "bf16", 2), (144, "double", 8), (7, "int8", 1)]
)
def test_sizes_are_aligned_as_nccl_tests_does(op, ranks, dtype, element):
    """Brute force over every size up to 4 units: the aligned size is the largest that nccl-tests
    runs (whole elements; per-rank blocks of whole 16-byte lines where the op splits by rank)."""
    unit = element if op == "allreduce" else ranks * max(16, element)
    for size in range(1, 4 * unit + 3):
        nbytes, count = OPS[op].align(size, ranks, element)
        runnable = [n for n in range(0, size + 1, unit)]
        assert nbytes == max(runnable)
        assert count == (nbytes // element if op == "allreduce" else nbytes // element // ranks)


def test_sizes_below_one_unit_are_left_out_and_named():
    topo = topology("trn3-nl72x2-gen1")
    result = evaluate(topo, "allgather", [8, 2303, 2304, 3000], topo.chips)
    assert result.dropped == [8, 2303]
    assert [(r.requested_bytes, r.bytes, r.count) for r in result.rows] == [(2304, 2304, 4), (3000, 2304, 4)]
    assert "left out 8, 2303 B" in result.alignment_note() and "3000 -> 2304" in result.alignment_note()


@pytest.mark.parametrize("sku", ["trn2-nl16", "trn3-nl32x2-gen1", "trn3-ultraserver-gen1"])
@pytest.mark.parametrize("op", list(BASIC))
def test_every_applicable_algorithm_respects_the_bound(sku, op):
    topo = topology(sku)
    result = evaluate(topo, op, SIZES, topo.chips, algo="all")
    for rows in result.by_algorithm.values():
        for row in rows:
            assert row.busbw_gbps <= row.bound_busbw_gbps * (1 + 1e-9)
    # auto picks the fastest of them at every size
    for i, row in enumerate(result.rows):
        assert row.time_us == min(rows[i].time_us for rows in result.by_algorithm.values())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sku=st.sampled_from(
        ["trn2-nl16", "trn2-nl64", "trn3-nl32x2-gen1", "trn3-nl72x2-gen1", "trn3-ultraserver-gen2"]
    ),
    op=st.sampled_from(list(BASIC)),
    data=st.data(),
)
def test_random_groups_never_beat_their_bound(sku, op, data):
    topo = topology(sku)
    ranks = data.draw(st.lists(st.integers(0, topo.n_ranks - 1), min_size=2, max_size=12, unique=True))
    group = [topo.chips[r] for r in sorted(ranks)]
    _check_rows(evaluate(topo, op, SIZES, group, algo="auto"), op)


def test_ring_over_one_row_of_the_4x4_torus_reaches_the_link():
    topo = topology("trn2-nl16", raw=True)
    row = evaluate(topo, "allreduce", [1 << 30], select_group(topo, "0-3"), algo="ring").rows[0]
    assert abs(row.busbw_gbps - 128) / 128 < 0.01


def test_best_large_allreduce_on_nl16_uses_every_link_of_every_chip():
    topo = topology("trn2-nl16", raw=True)
    row = evaluate(topo, "allreduce", [1 << 30], topo.chips, algo="auto").rows[0]
    assert row.busbw_gbps > 0.95 * 512 and row.algorithm == "multidim"
    router = Router(topo, topo.chips)
    plan = make_plan(topo, router, Context(topo, topo.chips), "allreduce", row.algorithm, 0.0)
    loads = sum(item.edge_seconds_per_byte(plan.bw_bps) for item in plan.items)
    assert np.all(loads > 0)  # both directions of all 32 links carry data
    # and evenly: every directed link carries the same bytes
    assert np.allclose(loads, loads[0])


def test_alltoall_on_nl64_turns_bandwidth_bound_between_16k_and_1m():
    topo = topology("trn2-nl64")
    sizes = [1024, 16 << 10, 1 << 20, 2 << 20, 4 << 20, 1 << 30, 2 << 30]
    rows = evaluate(topo, "alltoall", sizes, topo.chips).rows
    small, k16, m1, m2, m4, g1, g2 = rows
    assert k16.time_us < 1.1 * small.time_us  # latency-bound: 16 KiB costs about what 8 B does
    assert k16.bound_limited_by == "latency"
    assert m4.time_us / m2.time_us > 1.7  # from ~1 MiB, time grows with size
    assert math.isclose(g2.time_us / g1.time_us, 2, rel_tol=0.01)
    assert g1.bound_limited_by.startswith("cut")  # oversubscribed: the torus bisection limits it


def test_trn3_rack_alltoall_keeps_far_more_of_its_links_than_the_torus():
    nl64 = topology("trn2-nl64")
    torus = evaluate(nl64, "alltoall", [1 << 30], nl64.chips).rows[0]
    for sku in ("trn3-nl72x2-gen1", "trn3-nl32x2-gen1", "trn3-nl72x2-gen3"):
        topo = topology(sku)
        rack = evaluate(topo, "alltoall", [1 << 30], select_group(topo, "rack:0")).rows[0]
        assert rack.busbw_gbps / rack.peak_busbw_gbps > 2 * torus.busbw_gbps / torus.peak_busbw_gbps
        assert rack.efficiency > 0.75


def test_hierarchical_beats_flat_on_the_paired_racks():
    topo = topology("trn3-nl72x2-gen1")
    result = evaluate(topo, "allreduce", [1 << 30], topo.chips, algo="all")
    # the balanced schedule keeps every link class busy; hierarchical leaves the tray and rack links idle
    assert result.rows[0].algorithm == "multidim"
    assert result.rows[0].busbw_gbps > 0.95 * result.rows[0].bound_busbw_gbps
    assert (
        result.by_algorithm["multidim"][0].busbw_gbps > 2 * result.by_algorithm["hierarchical"][0].busbw_gbps
    )
    assert result.by_algorithm["hierarchical"][0].busbw_gbps > 1.5 * result.by_algorithm["mesh"][0].busbw_gbps


def test_alpha_override_changes_latency_only():
    topo = topology("trn2-nl16")
    fast = evaluate(topo, "allreduce", [8, 1 << 30], topo.chips, algo="ring", alpha_us=0.0).rows
    slow = evaluate(topo, "allreduce", [8, 1 << 30], topo.chips, algo="ring", alpha_us=10.0).rows
    assert math.isclose(slow[0].time_us - fast[0].time_us, 30 * 10.0)  # 2(p-1) = 30 steps
    assert math.isclose(slow[1].time_us - fast[1].time_us, 30 * 10.0)


def test_pipelined_tree_keeps_up_with_ring_on_a_torus_row():
    # a double binary tree pipelined in chunks moves every byte once up and once down: at 1 GiB it
    # is within a few percent of ring on a 4-chip ring of links (unpipelined it was 3-17x slower)
    topo = topology("trn2-nl16")
    row = select_group(topo, "0-3")
    result = evaluate(topo, "allreduce", [1 << 30], row, algo="all")
    tree, ring = result.by_algorithm["tree"][0], result.by_algorithm["ring"][0]
    assert tree.busbw_gbps >= 0.8 * ring.busbw_gbps
    assert tree.chunks > 1


def test_the_ring_search_runs_once_per_group_and_wiring(monkeypatch):
    from trnsim.collectives import rings, schedule
    from trnsim.topology.load import load_topology as load

    calls = []
    original = rings.disjoint_hamiltonian_cycles

    def counted(graph, *args, **kwargs):
        calls.append(len(graph))
        return original(graph, *args, **kwargs)

    monkeypatch.setattr(rings, "disjoint_hamiltonian_cycles", counted)
    monkeypatch.setattr(schedule, "_RINGS", {})
    for op in ("allreduce", "allgather", "reducescatter"):
        topology = load("trn2-nl16")  # a fresh load per op, as a sweep does
        evaluate(topology, op, [1 << 20], topology.chips, algo="multiring")
    assert calls == [16]


def test_busiest_classes_names_every_class_at_the_peak_within_rounding():
    from trnsim.model.busiest import busiest_classes

    peak = 0.7
    seconds = np.array([peak * (1 - 1e-12), 0.2, peak, peak * (1 - 1e-6), 0.0])
    assert busiest_classes(seconds, ["z", "q", "x", "y", "w"]) == "x=z"  # y is 1e-6 below: not tied
    assert busiest_classes(np.zeros(3), ["x", "y", "z"]) == "-"


@pytest.mark.parametrize(
    ("sku", "op", "expected"),
    [
        ("nl64", "allreduce", ["x", "y", "z"]),
        ("nl72x2", "allreduce", ["backplane", "pcb", "xrack"]),
        ("nl64", "alltoall", ["z"]),
    ],
)
def test_the_bottleneck_names_every_class_whose_links_peak_in_the_busiest_step(sku, op, expected):
    """A balanced multidim all-reduce keeps every class of link at the same peak (README: every link
    class carries bytes in proportion to its bandwidth; nl64: x, y and z; nl72x2: pcb, backplane and
    xrack), so the bottleneck names them all, not the first in edge order, and every class is as busy
    as the others. NL64's all-to-all is limited by its slow z links alone (the bound's cut), which are
    then twice as busy as the x and y links (half the bandwidth, the same bytes: the torus is
    symmetric in its three axes)."""
    topo = topology(sku)
    result = evaluate(topo, op, [1 << 30], topo.chips, algo="auto")
    row = result.rows[0]
    assert row.bottleneck.split("=") == expected
    assert f"bottleneck {row.bottleneck}," in result.busiest_links().describe()  # the heatmap's step
    busy = row.link_utilisation
    if op == "allreduce":
        assert sorted(busy) == expected
        assert max(busy.values()) - min(busy.values()) <= 1e-3  # shares are rounded to 1e-4
    else:
        assert busy["x"] == pytest.approx(busy["y"], abs=1e-4)
        assert busy["z"] == pytest.approx(2 * busy["x"], abs=2e-4)


# --- max hops and the raw bound, derived independently --------------------------------------------


def _graph(topo):
    import networkx as nx

    return nx.Graph(list(topo.links))


@pytest.mark.parametrize(
    "system", ["ring7", "ring8", "complete5", "star", "nl16", "nl16-row"], ids=lambda s: s
)
def test_max_hops_is_the_devices_passed_through_on_the_longest_flow(system, tmp_path):
    """``max hops`` counts the devices a flow passes through (README: links - 1). Mesh sends from
    every member to every other, so its longest flow spans the group's diameter (networkx); ring
    sends to a neighbour over a direct link where the group is a ring of links."""
    import networkx as nx

    from trnsim.topology.synthetic import graph_topology

    if system.startswith("ring"):
        topo = systems.load(systems.ring(int(system[4:])), tmp_path)
    elif system == "complete5":
        topo = systems.load(systems.complete(5), tmp_path)
    elif system == "star":  # every chip on two switches: chip, switch, chip
        topo = graph_topology(4, 2, {(f"c{i}", f"s{k}"): 100.0 for i in range(4) for k in range(2)})
    else:
        topo = topology("trn2-nl16")
    group = select_group(topo, "0-3") if system == "nl16-row" else list(topo.chips)
    graph = _graph(topo)
    diameter = max(nx.shortest_path_length(graph, u, v) for u in group for v in group)
    mesh = evaluate(topo, "allgather", [1 << 20], group, algo="mesh").rows[0]
    assert mesh.max_hops == diameter - 1
    if system.startswith(("ring", "nl16-row")) or system == "complete5":
        assert evaluate(topo, "allgather", [1 << 20], group, algo="ring").rows[0].max_hops == 0


def _brute_gather_gbps(topo, bandwidth) -> float:
    """The all-gather bound's busbw by brute force over every set of chips X (ForestColl's cut, Zhao
    et al. 2024): the blocks of the members in X leave it, ``|X| S/p`` over the links leaving X, so
    ``time >= max_X |X| / B(X)`` of ``S/p``; busbw = (p-1)/p S / time. ``bandwidth`` maps each link to
    its rate (every device here is a chip of the group)."""
    import itertools

    chips = list(topo.chips)
    p = len(chips)
    worst = 0.0
    for k in range(1, p):
        for inside in itertools.combinations(chips, k):
            side = set(inside)
            leaving = sum(bw for (u, v), bw in bandwidth.items() if (u in side) != (v in side))
            worst = max(worst, k / leaving)
    return (p - 1) / p * p / worst


@pytest.mark.parametrize("p", [3, 4, 6])
def test_the_raw_bound_is_the_bound_with_every_link_at_its_raw_rate(p, tmp_path):
    """JSON's ``raw_bound_busbw_gbps`` is the bound at the links' raw rates (efficiency 1). On K_p
    with 100 GB/s links at 80%: a chip's p - 1 raw links bind every op, so the raw bound busbw is
    (p-1) x 100 GB/s for all of them (injection, Patarasuk and Yuan 2009), the effective one 80% of
    that. Two racks with the cross-rack links at 50%: the raw bound is the brute-force cut over the
    raw rates, the effective one over the effective rates."""
    size = 1 << 30
    uniform = systems.load(systems.complete(p), tmp_path, ["efficiency.default=0.8"])
    for op in BASIC:
        row = evaluate(uniform, op, [size], uniform.chips, algo="mesh").rows[0]
        assert row.raw_bound_busbw_gbps == pytest.approx((p - 1) * 100.0, rel=1e-9, abs=0), op
        assert row.bound_busbw_gbps == pytest.approx(0.8 * (p - 1) * 100.0, rel=1e-9, abs=0), op
    racks = systems.load(systems.two_racks(p, 100, 30), tmp_path, ["efficiency.classes={xrack: 0.5}"])
    raw = {ends: 30.0 if data["cls"] == "xrack" else 100.0 for ends, data in racks.links.items()}
    effective = {ends: bw / 2 if bw == 30.0 else bw for ends, bw in raw.items()}
    row = evaluate(racks, "allgather", [size], racks.chips, algo="ring").rows[0]
    assert row.raw_bound_busbw_gbps == pytest.approx(_brute_gather_gbps(racks, raw), rel=1e-9, abs=0)
    assert row.bound_busbw_gbps == pytest.approx(_brute_gather_gbps(racks, effective), rel=1e-9, abs=0)
    assert row.bound_busbw_gbps < row.raw_bound_busbw_gbps


# --- properties: a system made worse never runs faster, nor lowers the bound ----------------------

DEGRADE_SIZES = [1 << 16, 1 << 22, 1 << 30]
# name -> (a document of tests/model/systems.py or a catalog SKU, its link classes, each class's
# --set key for its lanes per link and that key's healthy value)
SMALL = {
    "ring5": (systems.ring(5), {"x": ("torus.axes.x.lanes", 100)}),
    "complete4": (systems.complete(4), {"pcb": ("switched.node_local.lanes_per_link", 100)}),
    "racks2x3": (
        systems.two_racks(3),
        {"pcb": ("switched.node_local.lanes_per_link", 100), "xrack": ("switched.cross_rack.lanes", 30)},
    ),
    "nl16": ("trn2-nl16", {"x": ("torus.axes.x.lanes", 32), "y": ("torus.axes.y.lanes", 32)}),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("systems")


def _small(name: str, folder, edits=()):
    base = SMALL[name][0]
    if isinstance(base, str):
        from trnsim.topology.load import load_topology

        return load_topology(base, overrides=list(edits))
    return systems.load(base, folder, edits)


_HEALTHY: dict = {}


def _healthy(name: str, op: str, folder):
    if (name, op) not in _HEALTHY:
        topo = _small(name, folder)
        _HEALTHY[name, op] = evaluate(topo, op, DEGRADE_SIZES, topo.chips, algo="all")
    return _HEALTHY[name, op]


@st.composite
def _slower(draw, name: str):
    """``--set`` and ``--fail`` edits that slow some links of ``name`` and keep every link and chip:
    a lower efficiency (all links or one class), fewer lanes per link of a class, or failed lanes."""
    classes = SMALL[name][1]
    cls = draw(st.sampled_from(sorted(classes)))
    share = draw(st.floats(0.05, 0.95))
    kind = draw(st.sampled_from(["efficiency", "class efficiency", "lanes", "failed lanes"]))
    healthy = 0.88 if name == "nl16" else 1.0  # the file's efficiency (nl16: its assumed 88%)
    if kind == "efficiency":
        return [f"efficiency.default={healthy * share:.6f}"]
    if kind == "class efficiency":
        return [f"efficiency.classes={{{cls}: {healthy * share:.6f}}}"]
    key, lanes = classes[cls]
    if kind == "lanes":
        return [f"{key}={max(1, int(lanes * share))}"]
    rank = draw(st.integers(0, 3))
    wired = lanes * (
        2 if name in ("ring5", "nl16") else 1 if cls == "xrack" else 3 if name == "complete4" else 2
    )
    return [f"fail=lanes:{rank}:{max(1, int(wired * share))}:{cls}"]


def _never_faster(healthy, worse):
    """Every algorithm that runs on both takes at least as long on ``worse``, and the bound too."""
    for algo, rows in healthy.by_algorithm.items():
        for before, after in zip(rows, worse.by_algorithm.get(algo, []), strict=False):
            assert after.time_us >= before.time_us * (1 - 1e-9), (
                algo,
                before.bytes,
                before.time_us,
                after.time_us,
            )
    for before, after in zip(healthy.rows, worse.rows, strict=True):
        assert worse.bound.time_us(after.bytes) >= healthy.bound.time_us(before.bytes) * (1 - 1e-9)
        assert after.time_us >= before.time_us * (1 - 1e-9)  # the best of them too


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(SMALL)), op=st.sampled_from(list(BASIC)), data=st.data())
def test_slower_links_never_make_an_algorithm_faster_nor_lower_the_bound(name, op, data, folder):
    edits = data.draw(_slower(name), label="edits")
    worse = _small(name, folder, edits)
    _never_faster(_healthy(name, op, folder), evaluate(worse, op, DEGRADE_SIZES, worse.chips, algo="all"))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(SMALL)), op=st.sampled_from(list(BASIC)), data=st.data())
def test_a_failed_link_never_lowers_the_bound(name, op, data, folder):
    """A failed link that leaves the group connected: the group is the same, the bound (the best any
    routing could do) can only rise."""
    import networkx as nx

    topo = _small(name, folder)
    graph = _graph(topo)
    bridges = {frozenset(edge) for edge in nx.bridges(graph)}
    candidates = sorted(ends for ends in topo.links if frozenset(ends) not in bridges)
    u, v = data.draw(st.sampled_from(candidates), label="link")
    worse = _small(name, folder, [f"fail=link:{u},{v}"])
    healthy = _healthy(name, op, folder)
    result = evaluate(worse, op, DEGRADE_SIZES, worse.chips, algo="auto")
    for before, after in zip(healthy.rows, result.rows, strict=True):
        assert result.bound.time_us(after.bytes) >= healthy.bound.time_us(before.bytes) * (1 - 1e-9)


def _mirrored(gather, scatter) -> bool:
    """Whether the reduce-scatter's plain steps are the all-gather's in reverse order, with every flow
    turned round or (a ring, whose reduce-scatter may run either way round) as they are; pipelines
    (multidim, tree) only by their number of items."""

    def flows(step, turned):
        src, dst, weight = step.flows()
        pairs = zip(dst, src, weight, strict=True) if turned else zip(src, dst, weight, strict=True)
        return sorted((int(a), int(b), round(float(w), 12)) for a, b, w in pairs), step.repeat

    def unrolled(schedule, turned):
        out = []
        for entry in schedule:
            out.append(flows(entry, turned))
        return out

    if any(isinstance(e, Pipeline) for e in [*gather, *scatter]):
        return len(gather) == len(scatter)
    return unrolled(scatter, False) in (unrolled(gather, True)[::-1], unrolled(gather, False)[::-1])


MIRROR_SYSTEMS = ["ring5", "complete4", "racks2x3", "nl16", "trn3-nl32x2-gen1"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(system=st.sampled_from(MIRROR_SYSTEMS), data=st.data())
def test_reduce_scatter_takes_what_all_gather_takes_on_a_mirrored_schedule(system, data, folder):
    """A reduce-scatter that runs an all-gather's flows backwards, in reverse order, crosses every
    link the other way: each link has one bandwidth both ways, so the time is the same, at every size,
    and so is the bound (the optimum of one is the other's on the reversed graph)."""
    topo = _small(system, folder) if system in SMALL else topology(system)
    ranks = data.draw(st.lists(st.integers(0, topo.n_ranks - 1), min_size=2, max_size=8, unique=True))
    group = [topo.chips[r] for r in sorted(ranks)] if data.draw(st.booleans()) else list(topo.chips)
    gather = evaluate(topo, "allgather", DEGRADE_SIZES, group, algo="all")
    scatter = evaluate(topo, "reducescatter", DEGRADE_SIZES, group, algo="all")
    both = set(gather.by_algorithm) & set(scatter.by_algorithm)
    assert both and set(scatter.by_algorithm) <= set(gather.by_algorithm)  # all-gather adds bruck
    for algo in both:
        assert _mirrored(gather.plans[algo].schedule, scatter.plans[algo].schedule), algo
        for ag, rs in zip(gather.by_algorithm[algo], scatter.by_algorithm[algo], strict=True):
            assert rs.time_us == pytest.approx(ag.time_us, rel=1e-9, abs=0), (algo, ag.bytes)
    for ag, rs in zip(gather.rows, scatter.rows, strict=True):
        assert scatter.bound.time_us(rs.bytes) == pytest.approx(gather.bound.time_us(ag.bytes), rel=1e-9)


@pytest.mark.parametrize("op", ["allreduce", "alltoall", "allgather"])
def test_without_the_raw_bound_every_other_figure_is_the_same_and_one_bound_is_computed(op, monkeypatch):
    from trnsim.model import engine
    from trnsim.topology import load_topology

    # links of two efficiencies: the bound at raw rates is a second bound, not a scaled copy
    topo = load_topology("nl16", overrides=["efficiency.classes.x=0.5"])
    assert topo.uniform_efficiency is None
    calls = []
    bound = engine.lower_bound

    def counted(*args, **kwargs):
        calls.append(args[0])
        return bound(*args, **kwargs)

    monkeypatch.setattr(engine, "lower_bound", counted)
    both = evaluate(topo, op, [1 << 10, 1 << 30], topo.chips)
    assert len(calls) == 2
    calls.clear()
    one = evaluate(topo, op, [1 << 10, 1 << 30], topo.chips, raw_bounds=False)
    assert len(calls) == 1
    for full, lean in zip(both.rows, one.rows, strict=True):
        assert lean.raw_bound_busbw_gbps is None and full.raw_bound_busbw_gbps >= full.bound_busbw_gbps
        assert {**full.as_dict(), "raw_bound_busbw_gbps": None} == lean.as_dict()
    assert both.rows[-1].raw_bound_busbw_gbps > both.rows[-1].bound_busbw_gbps  # faster links, at 1 GiB
