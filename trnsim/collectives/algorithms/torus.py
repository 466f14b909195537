"""Dimension by dimension on a torus: bidirectional rings along each axis (all-to-all: axis by axis).

A reduce-scatter runs the axes fastest first (it moves the most data in its first phase); on each
axis a line's ranks reduce-scatter what they hold round a ring, half of it each way. An all-gather
runs the same steps in reverse.
"""

import numpy as np

from trnsim.collectives.algorithms.registry import ALL, algorithm, program_of
from trnsim.collectives.program import (
    Builder,
    Chunk,
    Program,
    relay,
    ring_all_gather,
    ring_reduce_scatter,
)
from trnsim.collectives.schedule import Context, NotApplicable, Step


def torus_lines(ctx: Context):
    """The torus's axes, their sizes, rank strides, and the axes' order (fastest first)."""
    topology = ctx.topology
    if topology.spec.kind != "torus":
        raise NotApplicable("needs a torus topology")
    if topology.spec.chip.ranks > 1:
        raise NotApplicable("runs on tori of one rank per chip")
    if ctx.p != topology.n_ranks:
        raise NotApplicable("runs over the whole torus only (a group of every chip)")
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


def _axis_ring_pairs(p: int, size: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """Each rank to its next along the axis, then each rank to its previous: ``(src, dst)``."""
    rank = np.arange(p, dtype=np.int64)
    c = (rank // stride) % size
    forward = rank + ((c + 1) % size - c) * stride
    backward = rank + ((c - 1) % size - c) * stride
    return np.r_[rank, rank], np.r_[forward, backward]


def _axis_pairs(p: int, size: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """Each rank to every other rank of its line along the axis, rank by rank: ``(src, dst)``."""
    rank = np.arange(p, dtype=np.int64)
    c = (rank // stride) % size
    other = np.broadcast_to(np.arange(size), (p, size))
    keep = other != c[:, None]
    src = np.broadcast_to(rank[:, None], (p, size))[keep]
    return src, src + (other[keep] - np.repeat(c, size - 1)) * stride


@algorithm(
    "torus", ALL, "dimension by dimension: bidirectional rings along each torus axis (alltoall: axis by axis)"
)
def schedule(ctx: Context, op: str) -> list[Step]:
    axes, sizes, strides, order = torus_lines(ctx)
    p = ctx.p
    if op == "alltoall":
        return [
            Step.of(_axis_pairs(p, sizes[i], strides[i]), 1 / sizes[i], 1, f"axis {axes[i].name}")
            for i in order
        ]
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


@program_of("torus")
def program(ctx: Context, op: str) -> Program:
    """Reduce-scatter axis by axis (fastest first), a bidirectional ring per line: part 0 of the data
    goes forward, part 1 backward. On axis ``a`` a rank ends with the blocks whose coordinates match
    its own on ``a`` and the axes before it; the all-gather runs the axes back in reverse. An
    all-to-all moves each block along one axis per round, to its destination's coordinate there.
    """
    axes, sizes, strides, order = torus_lines(ctx)
    p = ctx.p

    def coord(rank: int, axis: int) -> int:
        return (rank // strides[axis]) % sizes[axis]

    if op == "alltoall":
        b = Builder(op, p, "torus")
        where = {Chunk(s * p + t): s for s in range(p) for t in range(p)}
        for step, axis in enumerate(order):
            target = {
                c: r + (coord(c.block % p, axis) - coord(r, axis)) * strides[axis] for c, r in where.items()
            }
            relay(b, step, where, target, channel=axis)
        return b.build()
    b = Builder(op, p, "torus", parts=(0.5, 0.5))

    def phase(step: int, start: int, run) -> int:
        axis, done = order[step], order[: step + 1]
        for base in (r for r in range(p) if coord(r, axis) == 0):
            line = [base + c * strides[axis] for c in range(sizes[axis])]
            for part, ring in enumerate((line, line[::-1])):
                owned = {
                    r: [Chunk(x, part) for x in range(p) if all(coord(x, a) == coord(r, a) for a in done)]
                    for r in line
                }
                run(b, start, ring, owned, 2 * axis + part)
        return sizes[axis] - 1

    start = 0
    if op in ("reducescatter", "allreduce"):
        for step in range(len(order)):
            start += phase(step, start, ring_reduce_scatter)
    if op in ("allgather", "allreduce"):
        for step in reversed(range(len(order))):
            start += phase(step, start, ring_all_gather)
    return b.build()
