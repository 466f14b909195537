"""Direct: every rank sends its share straight to every other rank at once (Neuron's Mesh)."""

import numpy as np

from trnsim.collectives.algorithms.registry import ALL, algorithm
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
