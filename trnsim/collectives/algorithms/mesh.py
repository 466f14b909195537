"""Direct: every rank sends its share straight to every other rank at once (Neuron's Mesh).

A broadcast takes two such rounds: the root sends block ``j`` to rank ``j``, then every rank sends
its block to every other rank but the root; a reduce is the mirror image (every rank but the root
reduce-scatters, then each rank sends its reduced block to the root). An all-gather or
reduce-scatter of unequal blocks (``allgatherv``) sends each block at its own size.
"""

import numpy as np

from trnsim.collectives.algorithms.registry import ALL, ROOTED, algorithm, program_of, refuse_blocks
from trnsim.collectives.program import Builder, Chunk, Program, reduce_of
from trnsim.collectives.schedule import Context, NotApplicable, Step, mirrored


def _all_pairs(p: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of two positions, as flows; refused past :data:`trnsim.limits.DEMAND_CELLS`
    (1,073,709,056 flows on the 32x32x32 torus would take 16 GB)."""
    from trnsim import limits

    if p * p > limits.DEMAND_CELLS.value:
        raise NotApplicable(
            f"its {p * (p - 1):,} flows of every pair pass the limit of {limits.DEMAND_CELLS.value:,} cells of "
            f"demand (a default; raise it with the environment variable {limits.DEMAND_CELLS.env})"
        )
    return np.nonzero(~np.eye(p, dtype=bool))


def _unequal(ctx: Context, op: str) -> list[Step]:
    """All pairs at once, each flow the size of the block it carries (the sender's for an all-gather,
    the receiver's for a reduce-scatter); blocks of zero bytes are not sent."""
    blocks = np.asarray(ctx.blocks)
    src, dst = _all_pairs(ctx.p)
    weight = blocks[src] if op == "allgather" else blocks[dst]
    keep = weight > 0
    return [Step.of((src[keep], dst[keep]), weight[keep], 1, "all pairs (unequal blocks)")]


def _broadcast(ctx: Context) -> list[Step]:
    p, root = ctx.p, ctx.root
    src, dst = _all_pairs(p)
    scatter = Step.of([(root, j) for j in range(p)], 1 / p, 1, "scatter")
    into = dst != root  # the root holds every block already
    exchange = Step.of((src[into], dst[into]), 1 / p, 1, "all pairs but the root")
    return [scatter, exchange]


@algorithm(
    "mesh",
    ALL | ROOTED,
    "direct: every rank sends its share straight to every other rank at once (Neuron's Mesh); "
    "broadcast: the root scatters, then all pairs (reduce: the mirror)",
    aliases=("direct",),
    takes_traffic=True,
    takes_blocks=True,
)
def schedule(ctx: Context, op: str) -> list[Step]:
    if ctx.blocks is not None:
        refuse_blocks(op)
        return _unequal(ctx, op)
    if ctx.traffic is not None:
        src, dst = np.nonzero(~np.eye(ctx.p, dtype=bool) & (ctx.traffic > 0))
        return [Step.of((src, dst), ctx.traffic[src, dst], 1, "all pairs (skewed)")]
    if op in ROOTED:
        steps = _broadcast(ctx)
        return steps if op == "broadcast" else mirrored(steps)
    step = Step.everyone(ctx.p, 1 / ctx.p, 1, "all pairs")
    return [step, step] if op == "allreduce" else [step]


def _rooted(ctx: Context, op: str) -> Program:
    """Round 0: the root copies block ``j`` to rank ``j``; round 1: rank ``j`` copies block ``j`` to
    every other rank but the root. A reduce is the mirror image."""
    p, root = ctx.p, ctx.root
    b = Builder("broadcast", p, "mesh", root=root)
    for j in range(p):
        b.send(0, root, j, [Chunk(j)])
        for k in range(p):
            if k != root:
                b.send(1, j, k, [Chunk(j)])
    return b.build(2) if op == "broadcast" else reduce_of(b.build(2))


@program_of("mesh")
def program(ctx: Context, op: str) -> Program:
    """One round: rank ``i`` sends block ``j`` (its own, for all-gather; ``i -> j``, for all-to-all) to
    rank ``j``, reducing it in for reduce-scatter; an all-reduce then copies each reduced block back
    to every rank. A skewed all-to-all and unequal blocks skip the blocks of zero bytes, as the
    schedule does. Broadcast and reduce: :func:`_rooted`."""
    p = ctx.p
    if ctx.blocks is not None:
        refuse_blocks(op)
    if op in ROOTED:
        return _rooted(ctx, op)
    traffic = ctx.traffic
    sizes = ctx.blocks if traffic is None else tuple(float(x) for x in traffic.ravel())
    b = Builder(op, p, "mesh", block_sizes=sizes)
    for i in range(p):
        for j in range(p):
            if op == "alltoall" and (traffic is None or traffic[i, j] > 0):
                b.send(0, i, j, [Chunk(i * p + j)])
            elif op == "allgather" and (ctx.blocks is None or ctx.blocks[i] > 0):
                b.send(0, i, j, [Chunk(i)])
            elif op in ("reducescatter", "allreduce") and (ctx.blocks is None or ctx.blocks[j] > 0):
                b.send(0, i, j, [Chunk(j)], True)
                if op == "allreduce":
                    b.send(1, j, i, [Chunk(j)])
    return b.build(2 if op == "allreduce" else 1)
