"""Bruck et al.: ``ceil(log2 p)`` rounds of doubling distance (all-to-all and all-gather)."""

from trnsim.collectives.algorithms.registry import algorithm, program_of
from trnsim.collectives.program import Builder, Chunk, Program, relay
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


@program_of("bruck")
def program(ctx: Context, op: str) -> Program:
    """All-to-all: block ``s -> t`` sits at offset ``j = t - s``; in round ``k`` every block whose
    offset has bit ``k`` set moves ``2^k`` ranks on, so after the last round it is at ``s + j = t``.
    All-gather: rank ``i`` holds blocks ``i, i + 1, ...``; in round ``k`` it copies the first
    ``min(2^k, p - 2^k)`` of them to rank ``i - 2^k``."""
    p = ctx.p
    b = Builder(op, p, "bruck")
    where = {Chunk(s * p + t): s for s in range(p) for t in range(p)}
    step = 0
    while (1 << step) < p:
        distance = 1 << step
        if op == "alltoall":
            target = {
                c: (r + distance) % p if ((c.block % p - c.block // p) % p) & distance else r
                for c, r in where.items()
            }
            relay(b, step, where, target)
        else:
            for i in range(p):
                b.send(
                    step,
                    i,
                    (i - distance) % p,
                    [Chunk((i + j) % p) for j in range(min(distance, p - distance))],
                )
        step += 1
    return b.build()
