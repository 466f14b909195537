"""Agreement: every algorithm's program moves, round by round, the bytes its costed schedule moves."""

import numpy as np
import pytest

from collectives.graphs import ALL_CASES, contexts
from trnsim.collectives.agreement import agreement, program_rounds, schedule_rounds
from trnsim.collectives.algorithms import REGISTRY
from trnsim.collectives.dimensions import dimensions
from trnsim.collectives.program import NETWORK
from trnsim.collectives.schedule import Pipeline, Step


def _build(name, algo, op, skew):
    plain, skewed = contexts(name)
    ctx = skewed if skew else plain
    algorithm = REGISTRY[algo]
    return algorithm.program(ctx, op), algorithm.schedule(ctx, op)


@pytest.mark.parametrize(("graph", "algo", "op", "skew"), ALL_CASES)
def test_the_program_is_the_schedule_that_is_costed(graph, algo, op, skew):
    program, schedule = _build(graph, algo, op, skew)
    found = agreement(program, schedule)
    assert found.ok, f"{algo} {op} on {graph}: {found}"


def _transposed(schedule: list[Pipeline]) -> list[Pipeline]:
    return [
        Pipeline(
            tuple(tuple(tuple(s.reversed() for s in stage) for stage in chain) for chain in pipe.chains),
            pipe.label,
        )
        for pipe in schedule
    ]


def _has_open_line(graph: str) -> bool:
    return any("chain" in dim.modes.values() for dim in dimensions(contexts(graph)[0]))


@pytest.mark.parametrize("op", ["reducescatter", "allreduce"])
def test_a_reduce_scatter_along_an_open_line_starts_at_its_ends(op):
    # Over an open line of k ranks, a reduce-scatter's first round can only move what needs k - 1
    # hops: the two ends' contributions to the blocks at the other end, one flow inward from each
    # end. multidim once ran the all-gather's hops backwards in order but not in direction, so this
    # round went outward, into the ends (what the opposite direction carries).
    ctx = contexts("torus3x4")[0]
    assert _has_open_line("torus3x4")
    chain = next(dim for dim in dimensions(ctx) if "chain" in dim.modes.values())
    cls = next(cls for cls, mode in chain.modes.items() if mode == "chain")
    nxt = chain.rings[cls]
    ends = {x for x in range(ctx.p) if x not in nxt.values()} | {x for x in range(ctx.p) if x not in nxt}
    (pipe,) = REGISTRY["multidim"].schedule(ctx, op)
    for stream in pipe.chains:
        # an all-reduce's reduce-scatter is the first half of each stream's stages
        scatter = stream[: len(stream) // 2] if op == "allreduce" else stream
        last = [stage[0] for stage in scatter if f"chain hop {chain.size - 1}/" in stage[0].label]
        assert last
        for step in last:
            assert set(step.src.tolist()) <= ends and not set(step.dst.tolist()) & ends, step.label


def test_turning_the_reduce_scatter_round_changes_no_cost():
    # every link has one bandwidth both ways: the schedule costed transposed (as it was before the
    # fix) costs the same, so no number of the catalog moved with the fix
    from trnsim.model.plan import make_plan
    from trnsim.model.router import Router

    ctx = contexts("torus3x4")[0]
    program = REGISTRY["multidim"].program(ctx, "reducescatter")
    schedule = REGISTRY["multidim"].schedule(ctx, "reducescatter")
    transposed = _transposed(schedule)
    assert agreement(program, schedule).ok and not agreement(program, transposed).ok
    topology, group = ctx.topology, ctx.group
    router, alpha = Router(topology, group), topology.spec.latency.step_ns
    plans = [
        make_plan(topology, router, ctx, "reducescatter", "multidim", alpha, schedule=s)
        for s in (schedule, transposed)
    ]
    for size in (1 << 20, 1 << 26, 1 << 30):
        assert plans[0].time_us(size) == pytest.approx(plans[1].time_us(size), rel=1e-12)


def test_a_schedule_unrolls_into_its_repeats_pipeline_stages_and_switch_shares():
    ring = Step.of([(0, 1), (1, 2), (2, 0)], 1 / 3, 2)
    switches = Step.through_switches(["s"], np.ones(3), np.full(3, 1 / 3))
    rounds = schedule_rounds([ring, switches])
    assert len(rounds) == 3 and rounds[0] == rounds[1] == {(0, 1): 1 / 3, (1, 2): 1 / 3, (2, 0): 1 / 3}
    assert rounds[2] == {**{(i, NETWORK): 1.0 for i in range(3)}, **{(NETWORK, i): 1 / 3 for i in range(3)}}


@pytest.mark.parametrize(
    ("algo", "op", "graph", "label", "factor"),
    [
        # the mutants issue 24 lists: a cross-group step weight and bruck's block count, each off
        ("hierarchical", "allreduce", "switched16", "across", 2.0),
        ("bruck", "allgather", "complete5", "distance 4", 2.0),
        ("ring", "allreduce", "ring5", "ring", 1.25),
    ],
)
def test_a_schedule_that_charges_other_bytes_than_its_program_moves_disagrees(algo, op, graph, label, factor):
    program, schedule = _build(graph, algo, op, False)
    assert agreement(program, schedule).ok
    mutated = [s.scaled(factor) if s.label.startswith(label) else s for s in schedule]
    assert mutated != schedule
    found = agreement(program, mutated)
    assert not found.ok and not found.total and "in the schedule" in found.detail


def test_a_schedule_with_the_right_total_but_other_rounds_disagrees_round_by_round():
    program, schedule = _build("complete4", "rdh", "allreduce", False)
    swapped = [schedule[1], schedule[0], *schedule[2:]]  # the halving rounds, in the other order
    found = agreement(program, swapped)
    assert found.total and not found.rounds and found.detail.startswith("round 0")
    assert len(program_rounds(program)) == len(schedule_rounds(schedule))
