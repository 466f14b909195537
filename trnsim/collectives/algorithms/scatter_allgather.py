"""Scatter then all-gather (van de Geijn's broadcast), and its mirror, reduce-scatter then gather.

Broadcast: the root sends block ``j`` (``S/p``) straight to rank ``j``, then a ring all-gather along
the ring order (:attr:`~trnsim.collectives.schedule.Context.ring_order`) cut open at the root hands
every block on, ``p - 1`` steps of ``S/p`` per link (the root already holds every block: nothing
goes into it). Reduce is its mirror image: a ring reduce-scatter, then each rank's reduced block to
the root. Each rank sends and receives about ``2 S`` in all rather than the chain's ``S``, but in
``p`` steps rather than ``p - 1`` pipeline stages: on a fully connected graph ``p alpha + S/B``.
"""

from trnsim.collectives.algorithms.registry import ROOTED, algorithm, program_of
from trnsim.collectives.program import Builder, Chunk, Program, reduce_of
from trnsim.collectives.schedule import Context, Step


def _open_ring(ctx: Context) -> list[int]:
    """The ring order rotated to start at the root."""
    order = ctx.ring_order
    at = order.index(ctx.root)
    return order[at:] + order[:at]


def _broadcast(ctx: Context) -> list[Step]:
    p, root, order = ctx.p, ctx.root, _open_ring(ctx)
    scatter = Step.of([(root, j) for j in range(p)], 1 / p, 1, "scatter")
    gather = Step.of([(order[i], order[i + 1]) for i in range(p - 1)], 1 / p, p - 1, "all-gather")
    return [scatter, gather]


@algorithm(
    "scatter-allgather",
    ROOTED,
    "van de Geijn: broadcast = scatter from the root, then a ring all-gather; reduce = ring "
    "reduce-scatter, then gather to the root",
    aliases=("vandegeijn",),
)
def schedule(ctx: Context, op: str) -> list[Step]:
    scatter, gather = _broadcast(ctx)
    if op == "broadcast":
        return [scatter, gather]
    return [gather.reversed("reduce-scatter"), scatter.reversed("gather")]  # the mirror image


@program_of("scatter-allgather")
def program(ctx: Context, op: str) -> Program:
    """Round 0: the root copies block ``j`` to rank ``j``. Round ``1 + s``: the rank ``i`` places
    after the root along the ring copies block ``order[i - s]`` to the next, but not into the root.
    A reduce is the mirror image (:func:`~trnsim.collectives.program.reduce_of`)."""
    p, root, order = ctx.p, ctx.root, _open_ring(ctx)
    b = Builder("broadcast", p, "scatter-allgather", root=root)
    for j in range(p):
        b.send(0, root, j, [Chunk(j)])
    for s in range(p - 1):
        for i in range(p - 1):
            b.send(1 + s, order[i], order[i + 1], [Chunk(order[(i - s) % p])])
    return b.build() if op == "broadcast" else reduce_of(b.build())
