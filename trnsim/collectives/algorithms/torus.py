"""Dimension by dimension on a torus: bidirectional rings along each axis (all-to-all: axis by axis).

A reduce-scatter runs the axes fastest first (it moves the most data in its first phase); on each
axis a line's ranks reduce-scatter what they hold round a ring, half of it each way. An all-gather
runs the same steps in reverse.
"""

import numpy as np

from trnsim.collectives.algorithms.registry import ALL, algorithm
from trnsim.collectives.schedule import Context, NotApplicable, Step


def torus_lines(ctx: Context):
    """The torus's axes, their sizes, rank strides, and the axes' order (fastest first)."""
    topology = ctx.topology
    if topology.spec.kind != "torus":
        raise NotApplicable("needs a torus topology")
    if topology.spec.chip.ranks > 1:
        raise NotApplicable("runs on tori of one rank per chip")
    if ctx.p != topology.n_ranks:
        raise NotApplicable("runs over the whole torus: use --group all")
    axes = topology.spec.torus.axes
    sizes = [axis.size for axis in axes]
    if any(axis.twist for axis in axes):
        raise NotApplicable("needs plain rings along the axes (this torus is twisted)")
    if topology.n_ranks != int(np.prod(sizes)):
        raise NotApplicable("needs every chip of the torus (its rings follow the axes by rank arithmetic)")
    strides = [int(np.prod(sizes[i + 1 :])) for i in range(len(sizes))]
    # fastest axes first: a reduce-scatter moves the most data in its first phase
    order = sorted((i for i, s in enumerate(sizes) if s > 1), key=lambda i: -axes[i].lanes)
    return axes, sizes, strides, order


def _axis_ring_pairs(p: int, size: int, stride: int):
    forward, backward = [], []
    for rank in range(p):
        c = (rank // stride) % size
        forward.append((rank, rank + (((c + 1) % size) - c) * stride))
        backward.append((rank, rank + (((c - 1) % size) - c) * stride))
    return forward + backward


@algorithm(
    "torus", ALL, "dimension by dimension: bidirectional rings along each torus axis (alltoall: axis by axis)"
)
def schedule(ctx: Context, op: str) -> list[Step]:
    axes, sizes, strides, order = torus_lines(ctx)
    p = ctx.p
    if op == "alltoall":
        steps = []
        for i in order:
            pairs = []
            for rank in range(p):
                c = (rank // strides[i]) % sizes[i]
                pairs += [(rank, rank + (other - c) * strides[i]) for other in range(sizes[i]) if other != c]
            steps.append(Step.of(pairs, 1 / sizes[i], 1, f"axis {axes[i].name}"))
        return steps
    reduce_phase, data = [], 1.0
    for i in order:
        pairs = _axis_ring_pairs(p, sizes[i], strides[i])
        reduce_phase.append(Step.of(pairs, data / (2 * sizes[i]), sizes[i] - 1, f"RS axis {axes[i].name}"))
        data /= sizes[i]
    gather_phase = [
        Step(s.src, s.dst, s.weight, s.repeat, s.label.replace("RS", "AG")) for s in reversed(reduce_phase)
    ]
    return {
        "allreduce": reduce_phase + gather_phase,
        "reducescatter": reduce_phase,
        "allgather": gather_phase,
    }[op]
