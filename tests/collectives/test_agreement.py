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


# A finding: over an open line (a torus axis without its wrap, "chain" mode), multidim's schedule
# reduce-scatters by running the all-gather's hop patterns in reverse order but in the same
# direction; unlike a mesh's or a ring's, a chain hop's pattern is not its own reverse, so every
# directed link is charged what its opposite carries (and no reduce-scatter can run those flows: the
# far end's contribution to an end's block needs the far link in round 0). Every link has one
# bandwidth both ways and each round is transposed whole, so the costed time is unchanged; an
# exporter must take the program's flows, not the schedule's.
def _mirrored(graph: str, algo: str, op: str) -> bool:
    """multidim's reduce-scatter (alone or in an all-reduce) over a group with an open line."""
    if algo != "multidim" or op == "allgather":
        return False
    return any("chain" in dim.modes.values() for dim in dimensions(contexts(graph)[0]))


def _transposed(rounds):
    return [{(b, a): w for (a, b), w in loads.items()} for loads in rounds]


@pytest.mark.parametrize(("graph", "algo", "op", "skew"), ALL_CASES)
def test_the_program_is_the_schedule_that_is_costed(graph, algo, op, skew):
    program, schedule = _build(graph, algo, op, skew)
    found = agreement(program, schedule)
    if _mirrored(graph, algo, op):
        # the finding above: the reduce-scatter's rounds are the schedule's, transposed
        mine, theirs = program_rounds(program), schedule_rounds(schedule)
        assert len(mine) == len(theirs) and not found.ok
        for number, (m, t, r) in enumerate(zip(mine, theirs, _transposed(theirs), strict=True)):
            assert _close(m, t) or _close(m, r), number
        assert any(not _close(m, t) for m, t in zip(mine, theirs, strict=True))
        return
    assert found.ok, f"{algo} {op} on {graph}: {found}"


def _close(a, b) -> bool:
    return set(a) == set(b) and all(np.isclose(a[k], b[k], rtol=1e-12) for k in a)


def test_the_mirrored_reduce_scatter_costs_what_its_program_would():
    # the finding's impact: costing the schedule's flows transposed (the program's) changes nothing
    from trnsim.model.engine import make_plan
    from trnsim.model.router import Router

    ctx = contexts("torus3x4")[0]
    schedule = REGISTRY["multidim"].schedule(ctx, "reducescatter")
    program = REGISTRY["multidim"].program(ctx, "reducescatter")
    transposed = [
        Pipeline(
            tuple(
                tuple(
                    tuple(Step(s.dst, s.src, s.weight, s.repeat, s.label, links=s.links) for s in stage)
                    for stage in chain
                )
                for chain in pipe.chains
            ),
            pipe.label,
        )
        for pipe in schedule
    ]
    assert not agreement(program, schedule).ok and agreement(program, transposed).ok
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
