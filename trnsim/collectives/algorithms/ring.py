"""One ring through every rank: ``p - 1`` steps of ``S/p`` per link (twice for all-reduce).

The ring follows a Hamiltonian cycle of direct links where the group has one, else rank order.
"""

from trnsim.collectives.algorithms.registry import REDUCTIONS, algorithm, program_of
from trnsim.collectives.program import Builder, Program, ring_collective
from trnsim.collectives.schedule import Context, Step


def ring_phases(op: str, p: int) -> int:
    """Steps a ring takes: ``p - 1`` to reduce-scatter or all-gather, both for all-reduce."""
    return 2 * (p - 1) if op == "allreduce" else p - 1


@algorithm("ring", REDUCTIONS, "one ring through every rank (over direct links where they form one)")
def schedule(ctx: Context, op: str) -> list[Step]:
    order = ctx.ring_order
    pairs = [(order[i], order[(i + 1) % ctx.p]) for i in range(ctx.p)]
    return [Step.of(pairs, 1 / ctx.p, ring_phases(op, ctx.p), "ring")]


@program_of("ring")
def program(ctx: Context, op: str) -> Program:
    """Step ``s`` of the reduce-scatter: the rank at ring position ``i`` reduces block ``order[i - s - 1]``
    into position ``i + 1``; the all-gather then copies block ``order[i - s]`` on."""
    b = Builder(op, ctx.p, "ring")
    ring_collective(b, ctx.ring_order)
    return b.build()
