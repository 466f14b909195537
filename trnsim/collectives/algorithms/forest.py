"""Broadcast trees packed over the whole fabric, relaying through chips outside the group (ForestColl).

A group that is not the whole system can borrow every other chip's links: its exact bound
(:mod:`trnsim.model.optimum`) does. ``forest`` packs, for each member, broadcast trees that span the
group and pass through any chip (:func:`trnsim.collectives.forest.pack`); each tree carries an equal
part of its root's block, pipelined in chunks down its levels.

* all-gather: every tree copies its part from the root down, level by level (stage ``d`` of the
  pipeline moves every tree's arcs into depth ``d``);
* reduce-scatter: the all-gather reversed: every tree reduces its part from the leaves up into the
  root, which ends with the sum (the dual of the all-gather, as :func:`~trnsim.collectives.program.dual`);
* all-reduce: both in one pipeline, reduce up then copy down (as the double binary ``tree``).

Relays (the design)
-------------------
Flows join group positions; a relay chip is a position past the group's: a step's ``relays`` names
chips ``p, p+1, ...`` (:class:`~trnsim.collectives.schedule.Step`), and the router routes such a step
as if the group held them too (:meth:`trnsim.model.router.Router.route_all`), so every tree arc is an
ordinary flow between two chips (joined by a direct link or through switches only) that ECMP spreads
exactly as the packing planned. The program does the same: ranks ``p..`` are the relays
(``Program.relays``), which start empty and have no required end state
(:mod:`trnsim.collectives.check`); a relay forwards a copy, or sums its subtree's contributions
before passing them up. Everything else (costing, agreement, the checker's rules) is unchanged.
"""

from dataclasses import replace

import numpy as np

from trnsim.collectives.algorithms.registry import REDUCTIONS, algorithm, program_of
from trnsim.collectives.forest import Tree, pack
from trnsim.collectives.program import Builder, Chunk, Program, dual
from trnsim.collectives.schedule import Context, NotApplicable, Pipeline, Step
from trnsim.topology.arrays import graph_arrays


def _layout(ctx: Context) -> tuple[list[Tree], dict[int, int], tuple[str, ...], int]:
    """The trees, each chip's position (members first, then the relays), the relays, the depth."""
    if ctx.p < 2:
        raise NotApplicable("needs at least two ranks")
    if ctx.p == ctx.topology.n_ranks:
        # nothing outside the group to relay through; the whole system's own algorithms (multidim,
        # torus, nvls) already meet its bound, and packing trees for every rank costs seconds
        raise NotApplicable("relays through chips outside the group: the group is the whole system")
    trees = pack(ctx.topology, ctx.group)
    arrays = graph_arrays(ctx.topology)
    position = {arrays.index[chip]: i for i, chip in enumerate(ctx.group)}
    used = sorted({node for tree in trees for arc in tree.arcs for node in arc[:2]} - set(position))
    position.update((node, ctx.p + i) for i, node in enumerate(used))
    depth = max(d for tree in trees for *_, d in tree.arcs)
    return trees, position, tuple(arrays.nodes[node] for node in used), depth


def parts(trees: list[Tree], p: int) -> tuple[tuple[float, ...], list[range]]:
    """The parts every block is cut into, and the parts each tree carries: each root's trees lie end
    to end on its block in order, and the parts are the pieces between all roots' boundaries."""
    ends = [np.cumsum([0.0] + [tree.weight for tree in trees if tree.root == r]) for r in range(p)]
    for end in ends:
        end[-1] = 1.0
    cuts = np.unique(np.round(np.concatenate(ends), 12))
    out, seen = [], [0] * p
    for tree in trees:
        i = seen[tree.root]
        seen[tree.root] += 1
        lo, hi = (int(np.searchsorted(cuts, round(x, 12))) for x in ends[tree.root][i : i + 2])
        out.append(range(lo, hi))
    return tuple(float(x) for x in np.diff(cuts)), out


def _stages(ctx: Context, trees, position, relays, depth) -> list[Step]:
    """Per depth ``d``, the all-gather's flows into that depth (every tree's part, merged by pair)."""
    stages = []
    for d in range(1, depth + 1):
        load: dict[tuple[int, int], float] = {}
        for tree in trees:
            for a, b, level in tree.arcs:
                if level == d:
                    pair = (position[a], position[b])
                    load[pair] = load.get(pair, 0.0) + tree.weight / ctx.p  # of a block of S/p
        src = np.fromiter((a for a, _ in load), dtype=np.int64, count=len(load))
        dst = np.fromiter((b for _, b in load), dtype=np.int64, count=len(load))
        weight = np.fromiter(load.values(), dtype=float, count=len(load))
        stages.append(Step(src, dst, weight, label=f"forest level {d}", relays=relays))
    return stages


@algorithm(
    "forest",
    REDUCTIONS,
    "relays a sub-group's data through chips outside it: per member, broadcast trees packed over every "
    "chip, weighted by an LP (ForestColl-style), pipelined in chunks; up to 1,024 chips and 128 ranks, "
    "not the whole system",
    aliases=("relay", "forestcoll"),
    named_only=True,
)
def schedule(ctx: Context, op: str) -> list[Pipeline]:
    trees, position, relays, depth = _layout(ctx)
    down = _stages(ctx, trees, position, relays, depth)
    up = [step.reversed(step.label.replace("forest", "forest reduce")) for step in reversed(down)]
    stages = {"allgather": down, "reducescatter": up, "allreduce": up + down}[op]
    return [Pipeline((tuple((step,) for step in stages),), f"forest of {len(trees)} trees")]


@program_of("forest")
def program(ctx: Context, op: str) -> Program:
    """Each tree of root ``r`` carries its parts of block ``r`` (:func:`parts`): copied down its levels (all-gather),
    reduced up them into ``r`` (reduce-scatter), or both (all-reduce)."""
    trees, position, relays, depth = _layout(ctx)
    shares, carried = parts(trees, ctx.p)
    b = Builder(op, ctx.p, "forest", parts=shares, pipelined=True, relays=len(relays))
    gather = Builder("allgather", ctx.p)
    for i, (tree, mine) in enumerate(zip(trees, carried, strict=True)):
        for a, c, level in tree.arcs:
            gather.send(level - 1, position[a], position[c], [Chunk(tree.root, k) for k in mine], False, i)
    if op in ("reducescatter", "allreduce"):
        b.transfers += dual(gather.transfers, depth)
    if op in ("allgather", "allreduce"):
        start = depth if op == "allreduce" else 0
        b.transfers += [replace(t, round=t.round + start) for t in gather.transfers]
    return b.build()
