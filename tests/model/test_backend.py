"""Every backend answers ``evaluate(op, sizes)`` with rows that extend one Row, in nccl-tests'
conventions: the same questions get the same answers whichever model gives them."""

import pytest
from collectives.synthetic import ring_topology

from trnsim.collectives.ops import get_op
from trnsim.errors import UsageError
from trnsim.model.backend import Cluster, Costing, ManyGroups, OneGroup, backend_for
from trnsim.model.engine import evaluate
from trnsim.model.rows import Evaluation, Row
from trnsim.topology.scaleout import fabric_choice, plan_fabric

SIZES = [1 << 12, 1 << 20, 1 << 26]


def _backends():
    ring = ring_topology(8, step_ns=500.0)
    chips = list(ring.chips)
    plan = plan_fabric(fabric_choice(ring.spec, 8, None, nic_gbit_per_chip=800.0), 8, domains=2)
    return ring, {
        "one group": OneGroup(ring, chips[:4]),
        "two groups": ManyGroups(ring, [chips[:4], chips[4:]]),
        "cluster": Cluster(ring, plan),
    }


@pytest.mark.parametrize("name", ["one group", "two groups", "cluster"])
@pytest.mark.parametrize("op", ["allreduce", "allgather", "reducescatter", "alltoall"])
def test_every_backend_gives_rows_in_nccl_tests_conventions(name, op):
    _, backends = _backends()
    result = backends[name].evaluate(op, SIZES)
    assert isinstance(result, Evaluation) and result.op == op and len(result.rows) == len(SIZES)
    factor = get_op(op).busbw_factor(result.ranks)
    for row, size in zip(result.rows, SIZES, strict=True):
        assert isinstance(row, Row) and row.requested_bytes == size and row.type == "float"
        # algbw is the bytes over the time; busbw is algbw times nccl-tests' factor for the ranks
        assert row.algbw_gbps == pytest.approx(row.bytes / (row.time_us * 1e3), rel=1e-12)
        assert row.busbw_gbps == pytest.approx(row.algbw_gbps * factor, rel=1e-12)
        # a bound is a bound: no backend beats it, and efficiency is the share of it reached
        assert 0 < row.efficiency <= 1 + 1e-9
        assert row.busbw_gbps <= row.bound_busbw_gbps * (1 + 1e-9)
        assert row.algorithm


def test_one_group_is_the_engine_and_groups_on_their_own_links_take_their_time_alone():
    ring, backends = _backends()
    one = backends["one group"].evaluate("allgather", SIZES, algo="ring")
    engine = evaluate(ring, "allgather", SIZES, list(ring.chips)[:4], algo="ring")
    assert [r.as_dict() for r in one.rows] == [r.as_dict() for r in engine.rows]
    # each half of the ring routes its ring inside itself (3 hops back beat 5 through the other
    # half), so the two groups share no link and each takes exactly its time alone
    both = backends["two groups"].evaluate("allgather", SIZES, algo="ring")
    for row, alone in zip(both.rows, engine.rows, strict=True):
        assert row.slowdown == 1.0 and row.time_us == pytest.approx(alone.time_us, rel=1e-12)


def test_each_groups_busbw_is_its_bytes_over_its_own_time():
    ring, backends = _backends()
    result = backends["two groups"].evaluate("allreduce", SIZES)
    factor = get_op("allreduce").busbw_factor(4)
    for row in result.rows:
        assert len(row.group_busbw_gbps) == len(row.group_times_us) == 2
        for time_us, busbw in zip(row.group_times_us, row.group_busbw_gbps, strict=True):
            assert busbw == pytest.approx(row.bytes / (time_us * 1e3) * factor, rel=1e-12)
        # the run lasts as long as its slowest group: its busbw is the slowest group's
        assert row.busbw_gbps == pytest.approx(min(row.group_busbw_gbps), rel=1e-12)


@pytest.mark.parametrize("alpha_us", [None, 0.0, 0.3, 7.25])
@pytest.mark.parametrize("kind", [OneGroup, ManyGroups])
def test_the_alpha_a_run_reports_is_the_one_it_was_costed_with(alpha_us, kind):
    """Default: the file's latency.step_ns in microseconds; given: exactly the number given. A
    ring all-gather on two chips is one step, so its time moves by exactly the alpha."""
    ring = ring_topology(2, step_ns=1250.0)
    members = list(ring.chips) if kind is OneGroup else [list(ring.chips)]
    result = kind(ring, members, Costing(alpha_us=alpha_us)).evaluate("allgather", [1 << 20], algo="ring")
    free = kind(ring, members, Costing(alpha_us=0.0)).evaluate("allgather", [1 << 20], algo="ring")
    expected = 1.25 if alpha_us is None else alpha_us
    assert result.alpha_us == expected
    assert result.rows[0].time_us == pytest.approx(free.rows[0].time_us + expected, rel=1e-12)


def test_backend_for_decides_between_one_group_and_several():
    ring = ring_topology(8)
    assert isinstance(backend_for(ring, group="0-3"), OneGroup)
    assert backend_for(ring, group="0-3").group == list(ring.chips)[:4]
    assert isinstance(backend_for(ring), OneGroup) and backend_for(ring).group == list(ring.chips)
    many = backend_for(ring, groups="0-3;4-7")
    assert isinstance(many, ManyGroups) and many.groups == [list(ring.chips)[:4], list(ring.chips)[4:]]
    with pytest.raises(UsageError, match="not both"):
        backend_for(ring, group="0-3", groups="0-3;4-7")


def test_a_cluster_is_modelled_on_float_elements_only():
    _, backends = _backends()
    with pytest.raises(UsageError, match="float"):
        backends["cluster"].evaluate("allreduce", SIZES, dtype="bfloat16")


def test_groups_at_once_through_the_backend_are_the_concurrent_model_itself():
    from trnsim.model.concurrent import evaluate_concurrent

    ring = ring_topology(8, step_ns=500.0)
    halves = [list(ring.chips)[:4], list(ring.chips)[4:]]
    costing = Costing(alpha_us=0.25, max_chunks=4)
    through = ManyGroups(ring, halves, costing).evaluate("allreduce", SIZES, algo="ring")
    direct = evaluate_concurrent(ring, "allreduce", SIZES, halves, algo="ring", alpha_us=0.25, max_chunks=4)
    assert [r.as_dict() for r in through.rows] == [r.as_dict() for r in direct.rows]
    assert through.alpha_us == direct.alpha_us == 0.25


@pytest.mark.parametrize("op", ["allgather", "reducescatter", "alltoall", "allreduce"])
def test_a_cluster_of_one_domain_is_the_engine_on_that_domain(op):
    """Nothing crosses domains when there is one: with the phases in sequence, an all-gather,
    reduce-scatter or all-to-all is the engine's on the domain, and an all-reduce the engine's
    reduce-scatter then all-gather (the composition's phases); pipelining them can only help."""
    from trnsim.model.backend import Fabric, Selection
    from trnsim.model.rows import busbw_gbps
    from trnsim.topology.load import load_topology

    domain = load_topology("trn2-nl16")
    sizes = [1 << 20, 1 << 26]
    sequential = Selection(fabric=Fabric(domains=1, overlap=False)).backend(domain)
    assert isinstance(sequential, Cluster) and sequential.plan.domains == 1
    cluster = sequential.evaluate(op, sizes)
    phases = ["reducescatter", "allgather"] if op == "allreduce" else [op]
    engine = [evaluate(domain, phase, sizes, list(domain.chips)) for phase in phases]
    for i, row in enumerate(cluster.rows):
        expected = sum(result.rows[i].time_us for result in engine)
        assert row.requested_bytes == sizes[i] == engine[0].rows[i].requested_bytes
        assert row.time_us == pytest.approx(expected, rel=1e-12)
        assert row.busbw_gbps == pytest.approx(busbw_gbps(op, domain.n_ranks, row.bytes, expected), rel=1e-12)
        if len(phases) == 1:  # the very rows of the engine, in every column both have
            alone = engine[0].rows[i]
            assert (row.bytes, row.count, row.type) == (alone.bytes, alone.count, alone.type)
            assert row.algbw_gbps == pytest.approx(alone.algbw_gbps, rel=1e-12)
            assert row.busbw_gbps == pytest.approx(alone.busbw_gbps, rel=1e-12)
    piped = Selection(fabric=Fabric(domains=1)).backend(domain).evaluate(op, sizes)
    for fast, slow in zip(piped.rows, cluster.rows, strict=True):
        assert fast.time_us <= slow.time_us * (1 + 1e-12)


def test_a_selection_decides_one_group_several_or_a_cluster_and_refuses_mixing_them():
    from trnsim.model.backend import Fabric, Selection

    ring = ring_topology(8)
    edits = (("nic_gbit_per_chip", 800.0),)
    assert isinstance(Selection().backend(ring), OneGroup)
    assert isinstance(Selection(groups="0-3;4-7").backend(ring), ManyGroups)
    cluster = Selection(fabric=Fabric(domains=3, edits=edits)).backend(ring)
    assert isinstance(cluster, Cluster) and cluster.plan.domains == 3
    for mixed in (
        Selection(group="0-3", fabric=Fabric(2, edits)),
        Selection(groups="0-3;4-7", fabric=Fabric(2, edits)),
        Selection(costing=Costing(alpha_us=1.0), fabric=Fabric(2, edits)),
    ):
        with pytest.raises(UsageError, match="cluster"):
            mixed.backend(ring)
    with pytest.raises(UsageError) as both:
        Selection(group="0-3", groups="0-3;4-7").backend(ring)
    assert both.value.render({"group": "--group", "groups": "--groups", "ranks": "--ranks"}.get) == (
        "give --groups, or --group/--ranks for one group, not both"
    )


def test_a_fabrics_hop_latency_is_given_in_microseconds():
    from trnsim.model.backend import Fabric

    ring = ring_topology(8)
    plan = Fabric(4, (("nic_gbit_per_chip", 800.0), ("hop_us", 2.5))).plan(ring)
    assert plan.choice.hop_ns == 2500.0
    default = Fabric(4, (("nic_gbit_per_chip", 800.0), ("hop_us", None))).plan(ring)
    assert default.choice.hop_ns == Fabric(4, (("nic_gbit_per_chip", 800.0),)).plan(ring).choice.hop_ns
