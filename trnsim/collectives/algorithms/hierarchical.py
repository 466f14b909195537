"""Hierarchical: inside each rack (or node) first, then across between same-position chips."""

from dataclasses import replace

import numpy as np

from trnsim.collectives.algorithms.registry import ALL, algorithm, program_of
from trnsim.collectives.program import Builder, Chunk, Program, dual, relay
from trnsim.collectives.schedule import Context, NotApplicable, Step


def levels(ctx: Context) -> tuple[list[list[int]], str]:
    """The group's members split by rack (or node): ``r`` groups of ``m`` positions, and the level."""
    topology = ctx.topology
    if topology.spec.kind != "switched":
        raise NotApplicable("needs a switched fabric (racks of nodes)")
    for key in ("rack", "node_global"):
        groups: dict[int, list[int]] = {}
        for i in range(ctx.p):
            if key == "rack":
                label = ctx.attr(i, "rack")
            else:
                label = topology.rank_of[ctx.group[i]] // len(topology.spec.switched.slots)
            groups.setdefault(label, []).append(i)
        if len(groups) > 1:
            members = list(groups.values())
            if len({len(m) for m in members}) != 1 or len(members[0]) < 2:
                raise NotApplicable(
                    f"needs the same number (>= 2) of group members in every {key.split('_')[0]}"
                )
            return members, key.split("_")[0]
    raise NotApplicable("the group sits inside one node: nothing to do hierarchically")


@algorithm("hierarchical", ALL, "inside each rack (or node) first, then across between same-position chips")
def schedule(ctx: Context, op: str) -> list[Step]:
    members, level = levels(ctx)
    r, m = len(members), len(members[0])
    p = ctx.p
    grid = np.asarray(members, dtype=np.int64)  # r groups x m positions
    a, b = np.nonzero(~np.eye(m, dtype=bool))
    inner = (grid[:, a].ravel(), grid[:, b].ravel())  # every ordered pair inside each group
    x, y = np.nonzero(~np.eye(r, dtype=bool))
    outer = (grid[x].ravel(), grid[y].ravel())  # same position, every ordered pair of groups
    if op == "allreduce":
        # reduce-scatter then all-gather move the same flows: one step object each, routed once
        inside = Step.of(inner, 1 / m, 1, f"inside {level}")
        across = Step.of(outer, 1 / (m * r), 1, f"across {level}s")
        return [inside, across, across, inside]
    if op == "allgather":
        return [
            Step.of(outer, 1 / p, 1, f"AG across {level}s"),
            Step.of(inner, r / p, 1, f"AG inside {level}"),
        ]
    if op == "reducescatter":
        return [
            Step.of(inner, r / p, 1, f"RS inside {level}"),
            Step.of(outer, 1 / p, 1, f"RS across {level}s"),
        ]
    return [Step.of(outer, m / p, 1, f"across {level}s"), Step.of(inner, r / p, 1, f"inside {level}")]


@program_of("hierarchical")
def program(ctx: Context, op: str) -> Program:
    """All-gather: each member copies its block to its counterparts in the other groups, then the
    ``r`` blocks it holds to the others of its group. Reduce-scatter is its mirror image (inside,
    then across) and all-reduce the two in turn. All-to-all: each block crosses to its destination's
    group at the sender's position, then moves inside that group to its destination."""
    members, _ = levels(ctx)
    p, r, m = ctx.p, len(members), len(members[0])
    b = Builder(op, p, "hierarchical")
    if op == "alltoall":
        group = {x: g for g, row in enumerate(members) for x in row}
        slot = {x: j for row in members for j, x in enumerate(row)}
        where = {Chunk(s * p + t): s for s in range(p) for t in range(p)}
        relay(b, 0, where, {c: members[group[c.block % p]][slot[s]] for c, s in where.items()})
        relay(b, 1, where, {c: c.block % p for c in where})
        return b.build()
    gather = Builder("allgather", p)
    for row in members:
        for j, x in enumerate(row):
            column = [Chunk(members[h][j]) for h in range(r)]
            for h in range(r):
                gather.send(0, x, members[h][j], [Chunk(x)])
            for k in range(m):
                gather.send(1, x, row[k], column)
    if op in ("reducescatter", "allreduce"):
        b.transfers += dual(gather.transfers, 2)
    if op in ("allgather", "allreduce"):
        offset = 2 if op == "allreduce" else 0
        b.transfers += [replace(t, round=t.round + offset) for t in gather.transfers]
    return b.build()
