"""In-network reduction (NVLS/SHARP): reduce in the switches on the way up, multicast on the way down."""

import numpy as np

from trnsim.collectives.algorithms.registry import REDUCTIONS, algorithm, program_of
from trnsim.collectives.program import NETWORK, Builder, Chunk, Program
from trnsim.collectives.schedule import Context, NotApplicable, Pipeline, Step
from trnsim.topology.metrics import reducing_switches


@algorithm(
    "nvls",
    REDUCTIONS,
    "in-network reduction (NVLS/SHARP): reduce in the switches on the way up, multicast on the way "
    "down; an all-reduce pipelines the two",
    aliases=("sharp",),
)
def schedule(ctx: Context, op: str) -> list:
    switches = reducing_switches(ctx.topology, ctx.group)
    if not switches:
        raise NotApplicable("needs switches that reduce in the network and reach every member directly")
    p = ctx.p
    # reduce-scatter: every member sends its whole buffer up, the switches reduce each shard and
    # deliver it to its owner; all-gather: each owner sends its shard up once, the switches deliver
    # it to every member (itself included: an assumption about the multicast group)
    reduce = Step.through_switches(switches, np.ones(p), np.full(p, 1 / p), "reduce in the switches")
    gather = Step.through_switches(switches, np.full(p, 1 / p), np.ones(p), "multicast from the switches")
    if op == "reducescatter":
        return [reduce]
    if op == "allgather":
        return [gather]
    return [Pipeline((((reduce,), (gather,)),), "NVLS: reduce up, multicast down")]


@program_of("nvls")
def program(ctx: Context, op: str) -> Program:
    """Reduce-scatter: every member reduces its whole buffer into the switches, which copy block
    ``r`` down to rank ``r``. All-gather: rank ``r`` copies its block up and the switches multicast
    every block to every member (itself included). An all-reduce is the first, then the second."""
    if not reducing_switches(ctx.topology, ctx.group):
        raise NotApplicable("needs switches that reduce in the network and reach every member directly")
    p = ctx.p
    every = [Chunk(x) for x in range(p)]
    b = Builder(op, p, "nvls", pipelined=op == "allreduce")
    start = 0
    if op in ("reducescatter", "allreduce"):
        for r in range(p):
            b.send(0, r, NETWORK, every, True)
            b.send(0, NETWORK, r, [Chunk(r)])
        start = 1
    if op in ("allgather", "allreduce"):
        for r in range(p):
            b.send(start, r, NETWORK, [Chunk(r)])
            b.send(start, NETWORK, r, every)
    return b.build()
