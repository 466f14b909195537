"""Pairwise all-to-all: ``p - 1`` rounds; in round ``k`` rank ``i`` sends its block to rank ``i + k``."""

import numpy as np

from trnsim.collectives.algorithms.registry import algorithm, program_of
from trnsim.collectives.program import Builder, Chunk, Program
from trnsim.collectives.schedule import Context, Step


# Mesh sends the same blocks in one step: link loads add up linearly, so its busiest link carries no
# more than the sum of the rounds' busiest links, and one step's latency is at most p-1 steps' latency.
@algorithm(
    "pairwise",
    {"alltoall"},
    "p-1 rounds: in round k rank i sends its block to rank i+k",
    dominated_by="mesh",
    takes_traffic=True,
)
def schedule(ctx: Context, op: str) -> list[Step]:
    p = ctx.p
    if ctx.traffic is not None:
        rounds = [(np.arange(p), (np.arange(p) + k) % p) for k in range(1, p)]
        return [
            Step.of((s, d), ctx.traffic[s, d], 1, f"shift {k} (skewed)") for k, (s, d) in enumerate(rounds, 1)
        ]
    ranks = np.arange(p)
    return [Step.of((ranks, (ranks + k) % p), 1 / p, 1, f"shift {k}") for k in range(1, p)]


@program_of("pairwise")
def program(ctx: Context, op: str) -> Program:
    """Round ``k - 1``: rank ``i`` sends block ``i -> i + k`` (for a skewed matrix, of its size)."""
    p = ctx.p
    sizes = None if ctx.traffic is None else tuple(float(x) for x in ctx.traffic.ravel())
    b = Builder(op, p, "pairwise", block_sizes=sizes)
    for k in range(1, p):
        for i in range(p):
            b.send(k - 1, i, (i + k) % p, [Chunk(i * p + (i + k) % p)])
    return b.build(p - 1)
