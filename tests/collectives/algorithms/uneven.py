"""Unequal blocks (allgatherv, reducescatterv) on the test graphs: what test_ring and test_mesh share."""

import numpy as np
import pytest

from collectives.graphs import graph
from trnsim.collectives.agreement import agreement
from trnsim.collectives.algorithms import REGISTRY, Context
from trnsim.collectives.check import check
from trnsim.model.engine import _plan_program
from trnsim.model.plan import make_plan
from trnsim.model.router import Router

# one of each kind a ring or direct exchange runs on; a block of zero bytes among unequal ones
GRAPHS = ("complete5", "torus3x4")


def shares(p: int) -> tuple[float, ...]:
    """Rank i's block in proportion to i (rank 0's is empty), rank 1's tripled: the largest is not
    the last rank's."""
    counts = np.arange(p, dtype=float)
    counts[1] *= 3 * p
    return tuple(float(c) for c in counts / counts.sum())


def uneven_context(name: str) -> Context:
    topology, group = graph(name)
    return Context(topology, group, blocks=shares(len(group)))


def assert_proven_and_costed_alike(name: str, algo: str, op: str) -> None:
    """The program computes its collective, moves the schedule's bytes round by round and costs
    what the schedule costs."""
    ctx = uneven_context(name)
    program, schedule = REGISTRY[algo].program(ctx, op), REGISTRY[algo].schedule(ctx, op)
    assert program.block_sizes == ctx.blocks
    report = check(program)
    assert report.ok, report
    found = agreement(program, schedule)
    assert found.ok, found
    topology = ctx.topology
    router, alpha = Router(topology, ctx.group), topology.spec.latency.step_ns
    plan = make_plan(topology, router, ctx, op, algo, alpha)
    costed = _plan_program(topology, [router], program, alpha, (1024, 64 * 1024))
    for size in (1 << 20, 1 << 30):
        assert costed.time_us(size) == pytest.approx(plan.time_us(size), rel=1e-9)
