"""One ring through every rank: ``p - 1`` steps of ``S/p`` per link (twice for all-reduce).

The ring follows a Hamiltonian cycle of direct links where the group has one, else rank order. With
blocks of unequal sizes (``allgatherv``, ``reducescatterv``) each step's flows carry the blocks they
forward, so the steps differ: one step each, as long as its largest block.
"""

from trnsim.collectives.algorithms.registry import REDUCTIONS, algorithm, program_of, refuse_blocks
from trnsim.collectives.program import Builder, Program, ring_collective
from trnsim.collectives.schedule import Context, Step


def ring_phases(op: str, p: int) -> int:
    """Steps a ring takes: ``p - 1`` to reduce-scatter or all-gather, both for all-reduce."""
    return 2 * (p - 1) if op == "allreduce" else p - 1


def _unequal(ctx: Context, op: str) -> list[Step]:
    """Step ``s``: position ``i`` forwards block ``order[i - s]`` (all-gather) or ``order[i - s - 1]``
    (reduce-scatter), at that block's size (what :func:`~trnsim.collectives.program.ring_collective`
    moves)."""
    order, p = ctx.ring_order, ctx.p
    shift = 0 if op == "allgather" else 1
    pairs = [(order[i], order[(i + 1) % p]) for i in range(p)]
    return [
        Step.of(pairs, [ctx.blocks[order[(i - s - shift) % p]] for i in range(p)], 1, f"ring step {s + 1}")
        for s in range(p - 1)
    ]


@algorithm(
    "ring",
    REDUCTIONS,
    "one ring through every rank (over direct links where they form one)",
    takes_blocks=True,
)
def schedule(ctx: Context, op: str) -> list[Step]:
    if ctx.blocks is not None:
        refuse_blocks(op)
        return _unequal(ctx, op)
    order = ctx.ring_order
    pairs = [(order[i], order[(i + 1) % ctx.p]) for i in range(ctx.p)]
    return [Step.of(pairs, 1 / ctx.p, ring_phases(op, ctx.p), "ring")]


@program_of("ring")
def program(ctx: Context, op: str) -> Program:
    """Step ``s`` of the reduce-scatter: the rank at ring position ``i`` reduces block ``order[i - s - 1]``
    into position ``i + 1``; the all-gather then copies block ``order[i - s]`` on. Unequal blocks
    move the same way, each at its own size."""
    if ctx.blocks is not None:
        refuse_blocks(op)
    b = Builder(op, ctx.p, "ring", block_sizes=ctx.blocks)
    ring_collective(b, ctx.ring_order)
    return b.build()
