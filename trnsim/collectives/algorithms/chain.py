"""Pipelined chain (NCCL's ring broadcast and reduce): the data flows rank to rank, in chunks.

The chain is the ring (:attr:`~trnsim.collectives.schedule.Context.ring_order`) cut open at the root:
a broadcast starts there and passes the whole buffer on, ``p - 1`` hops; a reduce runs the same way
round the ring and ends there, each rank adding its input on the way. Pipelined, ``m`` chunks take
``p - 2 + m`` rounds of ``S/m`` each: about ``(p - 2 + m)(alpha + S/(m B))`` with links of ``B``,
``S/B`` at large sizes.
"""

from trnsim.collectives.algorithms.registry import ROOTED, algorithm, program_of
from trnsim.collectives.program import Builder, Chunk, Program
from trnsim.collectives.schedule import Context, Pipeline, Step


def chain_order(ctx: Context, op: str) -> list[int]:
    """The ring order rotated to start at the root (broadcast) or to end there (reduce)."""
    order = ctx.ring_order
    at = order.index(ctx.root) + (op == "reduce")
    return order[at:] + order[:at]


@algorithm(
    "chain",
    ROOTED,
    "pipelined chain (NCCL's ring broadcast and reduce): the ring cut open at the root, the whole "
    "buffer passed rank to rank in chunks",
)
def schedule(ctx: Context, op: str) -> list[Pipeline]:
    order = chain_order(ctx, op)
    stages = tuple(
        (Step.of([(order[k], order[k + 1])], 1.0, 1, f"chain hop {k + 1}"),) for k in range(ctx.p - 1)
    )
    return [Pipeline((stages,), "chain")]


@program_of("chain")
def program(ctx: Context, op: str) -> Program:
    """Round ``k``: the ``k``-th rank of the chain copies (broadcast) or reduces (reduce) every block
    into the next."""
    order = chain_order(ctx, op)
    b = Builder(op, ctx.p, "chain", pipelined=True, root=ctx.root)
    for k in range(ctx.p - 1):
        b.send(k, order[k], order[k + 1], [Chunk(x) for x in range(ctx.p)], op == "reduce")
    return b.build()
