"""Programs: chunks and their sizes, the dual of an all-gather, and a program for every algorithm and op
on every kind of graph it runs on."""

import numpy as np
import pytest

from collectives.graphs import GRAPHS, KIND, cases, contexts
from trnsim.collectives.algorithms import REGISTRY
from trnsim.collectives.program import Builder, Chunk, Transfer, dual
from trnsim.collectives.schedule import NotApplicable


def test_every_algorithm_and_op_is_checked_on_every_kind_of_graph_it_runs_on():
    covered = {(algo, op) for name in GRAPHS for algo, op, _ in cases(name)}
    assert covered == {(a.name, op) for a in REGISTRY.values() for op in a.ops}
    by_kind = {}
    for name in GRAPHS:
        for algo, op, skew in cases(name):
            by_kind.setdefault((algo, op, skew), set()).add(KIND[name])
    # the algorithms that run anywhere are checked on all four kinds of graph
    for algo in ("ring", "mesh", "tree", "bruck", "multidim"):
        for op in REGISTRY[algo].ops:
            assert by_kind[algo, op, False] == {"complete", "ring", "torus", "switched"}, (algo, op)
    assert by_kind["mesh", "alltoall", True] == by_kind["pairwise", "alltoall", True]
    assert by_kind["torus", "alltoall", False] == {"ring", "torus"}  # a ring is a one-axis torus
    assert by_kind["nvls", "allreduce", False] == by_kind["hierarchical", "alltoall", False] == {"switched"}


@pytest.mark.parametrize("graph", list(GRAPHS))
def test_a_program_is_refused_where_its_schedule_is(graph):
    plain, skewed = contexts(graph)
    runs = set(cases(graph))
    for algo in REGISTRY.values():
        for op in algo.ops:
            for ctx in (plain, skewed) if op == "alltoall" else (plain,):
                if (algo.name, op, ctx.traffic is not None) not in runs:
                    with pytest.raises(NotApplicable):
                        algo.program(ctx, op)


def test_a_transfer_carries_the_sizes_of_its_chunks():
    # parts of unequal shares, and a skewed all-to-all's blocks of their matrix's sizes
    b = Builder("allreduce", 4, parts=(0.25, 0.75))
    b.send(0, 0, 1, [Chunk(2, 1), Chunk(3, 0)], True)
    b.send(0, 2, 2, [Chunk(1)])  # a self-send crosses no link: dropped
    b.send(0, 2, 3, [])  # nothing: dropped
    program = b.build()
    assert len(program.transfers) == 1 and program.rounds == 1
    assert program.fraction(program.transfers[0]) == pytest.approx(0.75 / 4 + 0.25 / 4)
    traffic = np.arange(9, dtype=float).reshape(3, 3) / 36
    skewed = Builder("alltoall", 3, block_sizes=tuple(traffic.ravel()))
    skewed.send(0, 1, 2, [Chunk(1 * 3 + 2)])
    assert skewed.build().fraction(skewed.transfers[0]) == traffic[1, 2]
    assert skewed.build().describe(Chunk(5)) == "block 1->2"


def test_the_dual_of_an_all_gather_reverses_it_and_reduces():
    gather = [Transfer(0, 0, 1, (Chunk(0),)), Transfer(1, 1, 2, (Chunk(0),))]
    assert dual(gather, 2, start=3) == [
        Transfer(4, 1, 0, (Chunk(0),), True),
        Transfer(3, 2, 1, (Chunk(0),), True),
    ]
