"""Bandwidth-balanced multi-dimensional collectives, registered (see :mod:`trnsim.collectives.multidim`)."""

from trnsim.collectives import multidim
from trnsim.collectives.algorithms.registry import REDUCTIONS, algorithm
from trnsim.collectives.schedule import Context, Pipeline


@algorithm(
    "multidim",
    REDUCTIONS,
    "bandwidth-balanced: streams cross the group's dimensions (torus axes; slots, trays, racks) in "
    "orders an LP picks, pipelined, so every link class is busy at once (Themis-style)",
    aliases=("balanced",),
)
def schedule(ctx: Context, op: str) -> list[Pipeline]:
    return multidim.schedule(ctx, op)
