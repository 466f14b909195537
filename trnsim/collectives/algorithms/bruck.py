"""Bruck et al.: ``ceil(log2 p)`` rounds of doubling distance (all-to-all and all-gather)."""

from trnsim.collectives.algorithms.registry import algorithm
from trnsim.collectives.schedule import Context, Step


@algorithm("bruck", {"alltoall", "allgather"}, "Bruck et al.: ceil(log2 p) rounds of doubling distance")
def schedule(ctx: Context, op: str) -> list[Step]:
    p = ctx.p
    steps, k = [], 0
    while (1 << k) < p:
        distance = 1 << k
        if op == "alltoall":
            blocks = sum(1 for j in range(p) if j & distance)
            pairs = [(i, (i + distance) % p) for i in range(p)]
        else:
            blocks = min(distance, p - distance)
            pairs = [(i, (i - distance) % p) for i in range(p)]
        steps.append(Step.of(pairs, blocks / p, 1, f"distance {distance}"))
        k += 1
    return steps
