"""Direct: every rank sends its share straight to every other rank at once (Neuron's Mesh)."""

import numpy as np

from trnsim.collectives.algorithms.registry import ALL, algorithm, program_of
from trnsim.collectives.program import Builder, Chunk, Program
from trnsim.collectives.schedule import Context, Step


@algorithm(
    "mesh",
    ALL,
    "direct: every rank sends its share straight to every other rank at once (Neuron's Mesh)",
    aliases=("direct",),
    takes_traffic=True,
)
def schedule(ctx: Context, op: str) -> list[Step]:
    if ctx.traffic is not None:
        src, dst = np.nonzero(~np.eye(ctx.p, dtype=bool) & (ctx.traffic > 0))
        return [Step.of((src, dst), ctx.traffic[src, dst], 1, "all pairs (skewed)")]
    step = Step.everyone(ctx.p, 1 / ctx.p, 1, "all pairs")
    return [step, step] if op == "allreduce" else [step]


@program_of("mesh")
def program(ctx: Context, op: str) -> Program:
    """One round: rank ``i`` sends block ``j`` (its own, for all-gather; ``i -> j``, for all-to-all) to
    rank ``j``, reducing it in for reduce-scatter; an all-reduce then copies each reduced block back
    to every rank. A skewed all-to-all skips the blocks of zero bytes, as the schedule does."""
    p = ctx.p
    traffic = ctx.traffic
    sizes = None if traffic is None else tuple(float(x) for x in traffic.ravel())
    b = Builder(op, p, "mesh", block_sizes=sizes)
    for i in range(p):
        for j in range(p):
            if op == "alltoall" and (traffic is None or traffic[i, j] > 0):
                b.send(0, i, j, [Chunk(i * p + j)])
            elif op == "allgather":
                b.send(0, i, j, [Chunk(i)])
            elif op in ("reducescatter", "allreduce"):
                b.send(0, i, j, [Chunk(j)], True)
                if op == "allreduce":
                    b.send(1, j, i, [Chunk(j)])
    return b.build(2 if op == "allreduce" else 1)
