"""Bandwidth-balanced multi-dimensional collectives, registered (see :mod:`trnsim.collectives.multidim`).

The program: stream ``s`` carries parts ``2s`` and ``2s + 1`` of every block (the two halves of its
share), and all streams run at once, each on its own chain of stages, one round per stage.
"""

from dataclasses import replace

import numpy as np

from trnsim.collectives import multidim
from trnsim.collectives.algorithms.registry import REDUCTIONS, algorithm, program_of
from trnsim.collectives.dimensions import Dimension
from trnsim.collectives.program import Builder, Chunk, Program, dual
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


def _lines(dims: list[Dimension], number: int) -> list[list[int]]:
    """The positions that differ only in dimension ``number``, one list per line."""
    coords = np.stack([d.coord for d in dims], axis=1)
    lines: dict[tuple, list[int]] = {}
    for i, key in enumerate(map(tuple, np.delete(coords, number, axis=1))):
        lines.setdefault(key, []).append(i)
    return list(lines.values())


def _chains(nxt: dict[int, int], p: int) -> list[list[int]]:
    """Each open line of a chain dimension, from its first position (as the schedule walks them)."""
    prev = {b: a for a, b in nxt.items()}
    out = []
    for start in (x for x in range(p) if x not in prev):
        line = [start]
        while line[-1] in nxt:
            line.append(nxt[line[-1]])
        out.append(line)
    return out


def _stream_gather(b: Builder, dims, stream, s: int, p: int) -> int:
    """Stream ``s``'s all-gather from round 0, as :func:`~trnsim.collectives.multidim.stream_stages`
    stages it; returns its rounds. ``held[r]`` are the blocks rank ``r`` holds so far."""
    held = {r: [r] for r in range(p)}

    def both(blocks, halves=(0, 1)):
        return [Chunk(x, 2 * s + h) for x in blocks for h in halves]

    step = 0
    for d in stream.order:
        dim, cls = dims[d], stream.classes[d]
        mode, k = dim.modes[cls], dim.size
        if mode == "mesh":  # everything held, to every other rank of the line
            for line in _lines(dims, d):
                for u in line:
                    for v in line:
                        b.send(step, u, v, both(held[u]), channel=s)
            step += 1
        elif mode == "ring":  # hop h: what came from h - 1 ranks back goes one on, both ways round
            nxt = dim.rings[cls]
            prev = {y: x for x, y in nxt.items()}
            for hop in range(1, k // 2 + 1):
                full = hop < k // 2 or k % 2
                for r in range(p):
                    behind, ahead = r, r
                    for _ in range(hop - 1):
                        behind, ahead = prev[behind], nxt[ahead]
                    # the rank k/2 away on an even ring: half of its data comes each way
                    b.send(step, r, nxt[r], both(held[behind], (0, 1) if full else (0,)), channel=s)
                    b.send(step, r, prev[r], both(held[ahead], (0, 1) if full else (1,)), channel=s)
                step += 1
        else:  # chain: every block travels to both ends of the open line
            for hop in range(1, k):
                for line in _chains(dim.rings[cls], p):
                    for i in range(hop - 1, k - 1):
                        b.send(step, line[i], line[i + 1], both(held[line[i - hop + 1]]), channel=s)
                    for i in range(1, k - hop + 1):
                        b.send(step, line[i], line[i - 1], both(held[line[i + hop - 1]]), channel=s)
                step += 1
        for line in _lines(dims, d):
            gathered = [x for u in line for x in held[u]]
            for u in line:
                held[u] = gathered
    return step


@program_of("multidim")
def program(ctx: Context, op: str) -> Program:
    """Each stream's all-gather goes dimension by dimension in its order: over a mesh a rank copies
    all it holds to the other ranks of its line; round a ring, what it received last goes on both
    ways; along an open chain, to both ends. Its reduce-scatter is the mirror image
    (:func:`~trnsim.collectives.program.dual`), its all-reduce the two in turn."""
    chosen = multidim.plan(ctx, op)
    p = ctx.p
    parts = tuple(w / 2 for stream in chosen.streams for w in (stream.weight, stream.weight))
    b = Builder(op, p, "multidim", parts=parts, pipelined=True)
    for s, stream in enumerate(chosen.streams):
        gather = Builder("allgather", p)
        depth = _stream_gather(gather, chosen.dims, stream, s, p)
        if op in ("reducescatter", "allreduce"):
            b.transfers += dual(gather.transfers, depth)
        if op in ("allgather", "allreduce"):
            offset = depth if op == "allreduce" else 0
            b.transfers += [replace(t, round=t.round + offset) for t in gather.transfers]
    return b.build()
