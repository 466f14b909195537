"""Scatter then all-gather (van de Geijn's broadcast), and its mirror, reduce-scatter then gather.

Broadcast: the root sends block ``j`` (``S/p``) straight to rank ``j``, then a ring all-gather along
the ring order (:attr:`~trnsim.collectives.schedule.Context.ring_order`) cut open at the root hands
every block on, ``p - 1`` steps of ``S/p`` per link (the root already holds every block: nothing
goes into it). Reduce is its mirror image: a ring reduce-scatter, then each rank's reduced block to
the root. Each rank sends and receives about ``2 S`` in all rather than the chain's ``S``, but in
``p`` steps rather than ``p - 1`` pipeline stages: on a fully connected graph ``p alpha + S/B``.
"""

from dataclasses import replace

import numpy as np

from trnsim.collectives.algorithms.registry import ROOTED, algorithm, program_of
from trnsim.collectives.program import Builder, Chunk, Program, reduce_of
from trnsim.collectives.schedule import Context, NotApplicable, Pipeline, Step, mirrored


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


# the all-gathers ``scatter-multidim`` builds on, in order of preference (the first that applies)
FAST_GATHERS = ("multidim", "torus", "multiring")


def _fast_gather(ctx: Context) -> str:
    """The first of :data:`FAST_GATHERS` whose all-gather applies to this group."""
    from trnsim.collectives.algorithms.registry import REGISTRY

    reasons = []
    for name in FAST_GATHERS:
        try:
            REGISTRY[name].schedule(ctx, "allgather")
        except NotApplicable as reason:
            reasons.append(f"{name}: {reason}")
            continue
        return name
    raise NotApplicable("no multi-dimensional all-gather applies (" + "; ".join(reasons) + ")")


def _without(step: Step, into: frozenset[int], units: dict) -> Step:
    """``step`` without its flows into the ranks ``into`` (which hold what they would bring already).

    A scaled step's unit is filtered once (``units``, by identity and ``into``) so the steps that
    share a unit still share one routing."""
    src, dst, weight = step.flows()
    keep = ~np.isin(dst, list(into))
    if keep.all() and not step.all_pairs:
        return step
    unit = None
    if step.unit is not None:
        key = (id(step.unit), into)
        if key not in units:
            units[key] = (step.unit, _without(step.unit, into, units))  # holds the unit: ids stay unique
        unit = units[key][1]
    return Step(
        src[keep],
        dst[keep],
        weight[keep],
        step.repeat,
        step.label,
        links=step.links,
        unit=unit,
        scale=step.scale if unit is not None else 1.0,
        relays=step.relays,
    )


def _held(dims, stream, root: int) -> list[frozenset[int]]:
    """For each stage of a ``multidim`` stream's all-gather, the ranks it would bring nothing new:
    after the scatter in the reverse of the stream's order (:func:`dimension_scatter`), a rank that
    agrees with the root on the stream's first ``i`` dimensions holds every block that agrees with it
    on the others, all that the all-gather's first ``i`` dimensions deliver to it. (The root holds
    everything.) A mesh dimension is one stage, a ring ``k // 2``, an open chain ``k - 1``, as
    :func:`~trnsim.collectives.multidim.stream_stages` stages them."""
    coords = np.stack([d.coord for d in dims], axis=1)
    same = np.ones(len(coords), dtype=bool)
    out = []
    for d in stream.order:
        dim = dims[d]
        same &= coords[:, d] == coords[root, d]
        mode = dim.modes[stream.classes[d]]
        stages = 1 if mode == "mesh" else dim.size // 2 if mode == "ring" else dim.size - 1
        out += [frozenset(np.flatnonzero(same).tolist())] * stages
    return out


def dimension_scatter(dims, order, root: int, p: int) -> list[list[tuple[int, int, list[int]]]]:
    """The root's scatter dimension by dimension, in ``order`` (dimension indices): stage ``i`` is
    ``(src, dst, blocks)`` for each holder sending the blocks whose coordinate on dimension
    ``order[i]`` is ``dst``'s to ``dst``, the rank of its line there. Run in the reverse of a
    ``multidim`` stream's order, it loads the root's link classes as that stream's all-gather loads
    each rank's (its mirror image: a gather to the root along the stream's order), so the streams'
    balance carries over to the scatter."""
    coords = np.stack([d.coord for d in dims], axis=1)
    radix = [d.size for d in dims]
    where = np.empty(int(np.prod(radix)), dtype=np.int64)  # a coordinate's rank (the group is a product)
    where[np.ravel_multi_index(coords.T, radix)] = np.arange(p)
    # every block, grouped by its holder (holders in the order they got their blocks), and its holder
    blocks, holder = np.arange(p), np.full(p, root, dtype=np.int64)
    stages = []
    for d in order:
        moved = coords[holder]
        moved[:, d] = coords[blocks, d]
        target = where[np.ravel_multi_index(moved.T, radix)]
        # a holder's blocks go out to their targets in the order each target first comes up
        run = np.r_[0, np.cumsum(holder[1:] != holder[:-1])]
        _, first, inverse = np.unique(run * p + target, return_index=True, return_inverse=True)
        regroup = np.lexsort((np.arange(p), first[inverse.ravel()]))
        blocks, sender, holder = blocks[regroup], holder[regroup], target[regroup]
        edges = np.flatnonzero(np.r_[True, holder[1:] != holder[:-1], True])
        stages.append(
            [
                (int(sender[a]), int(holder[a]), blocks[a:b].tolist())
                for a, b in zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True)
                if sender[a] != holder[a]
            ]
        )
    return stages


def _fast_broadcast(ctx: Context) -> list[Step | Pipeline]:
    """The root's scatter, then the chosen all-gather's schedule less what it would send a rank that
    holds it already. A ``multidim`` all-gather (a pipeline, a chain per stream) takes each stream's
    :func:`dimension_scatter` as its chain's first stages, so the program's rounds stay the stages,
    and sends nothing the scatter relayed (:func:`_held`); the others follow one direct scatter step
    and send nothing into the root."""
    from trnsim.collectives import multidim
    from trnsim.collectives.algorithms.registry import REGISTRY

    name, p, root = _fast_gather(ctx), ctx.p, ctx.root
    units: dict = {}
    if name != "multidim":
        scatter = Step.of([(root, j) for j in range(p)], 1 / p, 1, "scatter")
        return [
            scatter,
            *(_without(i, frozenset([root]), units) for i in REGISTRY[name].schedule(ctx, "allgather")),
        ]
    chosen = multidim.plan(ctx)
    (pipeline,) = REGISTRY[name].schedule(ctx, "allgather")
    scatters: dict[tuple[int, ...], list[Step]] = {}  # by order: streams share their routing
    chains = []
    for stream, chain in zip(chosen.streams, pipeline.chains, strict=True):
        order = stream.order[::-1]
        if order not in scatters:
            scatters[order] = [
                Step.of([(u, v) for u, v, _ in stage], [len(x) / p for *_, x in stage], 1, "scatter")
                for stage in dimension_scatter(chosen.dims, order, root, p)
            ]
        head = tuple((step.scaled(stream.weight),) for step in scatters[order])
        held = _held(chosen.dims, stream, root)
        tail = tuple(
            tuple(_without(s, into, units) for s in stage) for into, stage in zip(held, chain, strict=True)
        )
        chains.append(head + tail)
    return [Pipeline(tuple(chains), f"scatter, then {pipeline.label}")]


@algorithm(
    "scatter-multidim",
    ROOTED,
    "van de Geijn over the fastest all-gather: broadcast = scatter from the root, then the "
    "multidim (else torus, else multiring) all-gather; reduce = its reduce-scatter, then gather",
)
def fast_schedule(ctx: Context, op: str) -> list[Step | Pipeline]:
    broadcast = _fast_broadcast(ctx)
    return broadcast if op == "broadcast" else mirrored(broadcast)


@program_of("scatter-multidim")
def fast_program(ctx: Context, op: str) -> Program:
    """The scatter's rounds (for ``multidim``, each stream's :func:`dimension_scatter` on its parts;
    else one round of every part of block ``j`` from the root to rank ``j``), then the chosen
    all-gather's program (pipelined if it is), less its transfers to ranks that hold their chunks
    already (:func:`_held`; else the root). Every rank but the root receives each chunk once, so the
    reduce is the mirror image (:func:`~trnsim.collectives.program.reduce_of`)."""
    from trnsim.collectives.algorithms.registry import REGISTRY

    name, p, root = _fast_gather(ctx), ctx.p, ctx.root
    gather = REGISTRY[name].program(ctx, "allgather")
    b = Builder("broadcast", p, "scatter-multidim", parts=gather.parts, pipelined=gather.pipelined, root=root)
    if name == "multidim":
        from trnsim.collectives import multidim

        chosen = multidim.plan(ctx)
        held = {}
        for s, stream in enumerate(chosen.streams):  # stream s carries parts 2s and 2s + 1
            for i, stage in enumerate(dimension_scatter(chosen.dims, stream.order[::-1], root, p)):
                for u, v, blocks in stage:
                    b.send(i, u, v, [Chunk(x, k) for x in blocks for k in (2 * s, 2 * s + 1)], channel=s)
            held[s] = _held(chosen.dims, stream, root)
        start = 1 + max(t.round for t in b.transfers)  # one round per scatter stage
        # the multidim program: stream s's stage i is round i on channel s
        kept = [t for t in gather.transfers if t.dst not in held[t.channel][t.round]]
    else:
        for j in range(p):
            b.send(0, root, j, [Chunk(j, k) for k in range(len(gather.parts))])
        start = 1
        kept = [t for t in gather.transfers if t.dst != root]
    b.transfers += [replace(t, round=t.round + start) for t in kept]
    program = b.build(start + gather.rounds)
    return program if op == "broadcast" else reduce_of(program)
