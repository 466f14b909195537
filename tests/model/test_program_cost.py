"""Costing a program: every algorithm's program costs what its schedule costs, and the program's own
rules (repeats, all pairs, in-network steps, mixed rounds, relays) are costed as the schedule rules
(a schedule that names its paths, multipath, with its flows routed by the rule: a program holds no routes)."""

from dataclasses import replace
from functools import cache

import numpy as np
import pytest
from collectives.graphs import ALL_CASES, contexts
from collectives.synthetic import complete_topology, ring_topology

from trnsim.collectives.algorithms import REGISTRY, Context, NotApplicable
from trnsim.collectives.program import NETWORK, Chunk, Program, Transfer
from trnsim.collectives.schedule import Pipeline, Step
from trnsim.errors import UsageError
from trnsim.model.cost import MAX_CHUNKS, MIN_CHUNK_BYTES
from trnsim.model.engine import _plan_program, evaluate
from trnsim.model.plan import make_plan, plan_schedule
from trnsim.model.program_cost import schedule_of
from trnsim.model.router import Router
from trnsim.topology.load import load_topology

SIZES = (1 << 10, 1 << 20, 1 << 30)
CATALOG = ("trn2-nl16", "trn2-nl64", "trn3-nl32x2-gen1", "trn3-nl72x2-gen1")
CHUNKING = (MAX_CHUNKS, MIN_CHUNK_BYTES)


def _assert_same_cost(topology, ctx: Context, algo: str, op: str):
    router = Router(topology, ctx.group)
    alpha = topology.spec.latency.step_ns
    schedule_plan = make_plan(topology, router, ctx, op, algo, alpha)
    if any(step.paths is not None for step in schedule_plan.schedule if isinstance(step, Step)):
        # a program holds no routes: costed, its flows take the routing rule's paths, not the ones
        # the schedule names (multipath); the same flows routed by the rule must cost the same
        plain = [replace(step, paths=None) for step in schedule_plan.schedule]
        schedule_plan = plan_schedule(topology, router, algo, plain, alpha)
    program = REGISTRY[algo].program(ctx, op)
    # a program's relays are positions p..; the chips they stand for are the schedule's (forest)
    steps = [s for e in schedule_plan.schedule for s in (e.steps if isinstance(e, Pipeline) else [e])]
    relays = next((list(s.relays) for s in steps if s.relays), [])
    assert len(relays) == program.relays
    program_router = Router(topology, ctx.group + relays) if relays else router
    program_plan = _plan_program(topology, [program_router], program, alpha, CHUNKING)
    for size in SIZES:
        want, got = schedule_plan.time_us(size), program_plan.time_us(size)
        assert got == pytest.approx(want, rel=1e-9), f"{algo} {op} at {size} B: {got} us, schedule {want} us"
        assert program_plan.chunks(size) == schedule_plan.chunks(size)
    assert program_plan.bottleneck == schedule_plan.bottleneck


@pytest.mark.parametrize(("graph", "algo", "op", "skew"), ALL_CASES)
def test_costing_an_algorithms_program_equals_costing_its_schedule_on_the_test_graphs(graph, algo, op, skew):
    plain, skewed = contexts(graph)
    ctx = skewed if skew else plain
    _assert_same_cost(ctx.topology, ctx, algo, op)


@cache
def _catalog(sku):
    topology = load_topology(sku)
    return topology, Context(topology.planner, list(topology.chips))


def _catalog_cases():
    for sku in CATALOG:
        for algo in REGISTRY.values():
            for op in sorted(algo.ops):
                # broadcast and reduce on a torus and on the largest fabric (the suite's time budget)
                if op not in ("broadcast", "reduce") or sku in ("trn2-nl16", "trn3-nl72x2-gen1"):
                    yield sku, algo.name, op


@pytest.mark.parametrize(("sku", "algo", "op"), list(_catalog_cases()))
def test_costing_an_algorithms_program_equals_costing_its_schedule_on_the_catalog(sku, algo, op):
    topology, ctx = _catalog(sku)
    try:
        REGISTRY[algo].schedule(ctx, op)
    except NotApplicable:
        pytest.skip(f"{algo} does not apply to {op} on {sku}")
    _assert_same_cost(topology, ctx, algo, op)


def _program(op, p, transfers, **kw):
    return Program(op, p, 1 + max(t.round for t in transfers), tuple(transfers), **kw)


def test_equal_rounds_become_one_repeated_step_and_a_mixed_round_is_one_stage():
    ring = [Transfer(r, i, (i + 1) % 3, (Chunk(0),)) for r in range(2) for i in range(3)]
    schedule = schedule_of(_program("allgather", 3, ring))
    assert len(schedule) == 1 and schedule[0].repeat == 2
    mixed = [
        Transfer(0, 0, 1, (Chunk(0),)),
        Transfer(0, 1, NETWORK, (Chunk(1),)),
        Transfer(0, NETWORK, 2, (Chunk(1),)),
    ]
    schedule = schedule_of(_program("allgather", 3, mixed), ["s0"])
    (stage,) = schedule[0].chains[0]
    links, network = stage
    assert isinstance(schedule[0], Pipeline) and network.in_network == ("s0",)
    assert np.allclose(network.up, [0, 1 / 3, 0]) and np.allclose(network.down, [0, 0, 1 / 3])
    assert links.flows()[0].tolist() == [0] and links.weight.tolist() == pytest.approx([1 / 3])
    with pytest.raises(UsageError, match="no switch that reduces"):
        schedule_of(_program("allgather", 3, mixed))


def test_a_round_of_all_pairs_is_the_all_pairs_step_and_costs_the_closed_form():
    p, size = 4, 1 << 20
    square = complete_topology(p, bw_gbps=100.0)
    transfers = [Transfer(0, i, j, (Chunk(i),)) for i in range(p) for j in range(p) if i != j]
    program = _program("allgather", p, transfers, algorithm="mine")
    (step,) = schedule_of(program)
    assert step.all_pairs == p
    row = evaluate(square, "allgather", [size], square.chips, program=program).rows[0]
    # one step: alpha (1 us) + a quarter of the size over one 100 GB/s link
    assert row.algorithm == "mine"
    assert row.time_us == pytest.approx(1 + size / 4 / 100e3, rel=1e-12)


def test_a_relay_is_routed_as_the_chip_after_the_members():
    # chips 0 and 2 of a ring of four; the data goes 0 -> 1 -> 2 through chip 1, a relay
    ring = ring_topology(4, lanes=100)
    hops = [
        Transfer(0, 0, 2, (Chunk(0),)),
        Transfer(1, 2, 1, (Chunk(0),)),
        Transfer(2, 1, 0, (Chunk(1),)),
    ]
    group = [ring.chips[0], ring.chips[1]]
    program = _program("allgather", 2, hops, relays=1)
    # position 2 is the relay, chip 2 of the ring; members are chips 0 and 1
    evaluation = evaluate(ring, "allgather", [1 << 20], group, program=program, relays=[ring.chips[2]])
    size = evaluation.rows[0].bytes
    # three rounds of half the size, each on one 100 GB/s link (chip 0 to chip 2 is two hops, spread
    # over both ways round: a quarter on each of the two paths' links)
    expected = 1 + size / 2 / 4 / 100e3 * 2 + 2 * (1 + size / 2 / 100e3)
    assert evaluation.rows[0].time_us == pytest.approx(expected, rel=1e-9)


def test_a_program_for_another_op_or_group_size_is_refused():
    square = complete_topology(3)
    program = _program("allgather", 2, [Transfer(0, 0, 1, (Chunk(0),))])
    with pytest.raises(UsageError, match="allgather program on 2 ranks cannot cost allgather on 3"):
        evaluate(square, "allgather", [1 << 20], square.chips, program=program)


def test_a_step_list_is_what_the_registry_schedules_for_a_ring():
    # the ring all-gather schedule is p - 1 repeats of one step: the program's rounds merge into it
    topology, ctx = _catalog("trn2-nl16")
    program = REGISTRY["ring"].program(ctx, "allgather")
    (step,) = schedule_of(program)
    (want,) = REGISTRY["ring"].schedule(ctx, "allgather")
    assert isinstance(step, Step) and step.repeat == want.repeat == ctx.p - 1
