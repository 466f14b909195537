"""Bandwidth-balanced multi-dimensional collectives: every link class busy at once.

The group is numbered as a product of dimensions (:mod:`trnsim.collectives.dimensions`): torus axes,
or a switched fabric's slots, trays and racks. A hierarchical all-gather runs one dimension after
another; in dimension ``a`` each rank sends what it holds so far, ``(product of the sizes of the
dimensions already done) x S/p`` bytes, to each of the ``k_a - 1`` other ranks of its line (directly
over switches or links, or round a ring of direct links). Its per-rank bytes over all dimensions add
up to ``(p - 1) S / p`` whatever the order, but the order decides how they split between dimensions:
the first dimension carries little, the last most.

Following Themis (Rashidi et al., "Themis: A Network Bandwidth-Aware Collective Scheduling Policy for
Distributed Training of DL Models", ISCA 2022), the data is split into *streams*, each going through
the dimensions in its own order (and, where two link classes can serve one dimension, on a chosen
class), so that every link class carries bytes in proportion to its bandwidth. Themis balances the
load greedily chunk by chunk; here a small linear program (:mod:`trnsim.collectives.lp`) picks the
stream weights that minimise the pipeline's summed round times: in its steady state that makes the
per-rank load proportional to the link bandwidth whenever the orders allow it, and among such mixes
it prefers those whose fill and drain keep the most classes busy. In the steady state the schedule
then runs at the injection bound ``(p-1) S / p / B`` (for all-reduce twice that): the exact optimum
on every catalog system.

We chose this over spanning-tree packing (ForestColl, Zhao et al. 2024, arXiv 2402.06787), which is
optimal on any graph, because it is a schedule vendors run today (dimension by dimension, like
Neuron's and NCCL's hierarchical algorithms), its routes are one switch or one ring hop long, and it
builds in milliseconds; it needs the group to be a product of lines, which holds for whole systems
and their racks, trays and torus sub-blocks, and says so otherwise.

The streams run as a pipeline of ``D`` stages (``2D`` for all-reduce: the reduce-scatter mirrors the
all-gather and runs first), each flow pinned to the link class its stream chose, costed round by
round with its fill and drain at the best chunk count per size (:mod:`trnsim.model.cost`).
"""

from collections import Counter
from dataclasses import dataclass
from itertools import permutations, product

import numpy as np

from trnsim.collectives.dimensions import Dimension, dimensions
from trnsim.collectives.schedule import Context, NotApplicable, Pipeline, Step

# more streams than this makes the LP and the stages slow for no gain: refuse, saying why
MAX_STREAMS = 5040
# streams the LP gives less than this share of the data are dropped (and the rest rescaled)
MIN_SHARE = 1e-6
# the stream weights are chosen for a pipeline of this many chunks (an assumption of the weighting
# only: the steady state dominates from here on, and the schedule is costed at every chunk count)
WEIGHTING_CHUNKS = 64
# more candidate streams than this: the weights balance the steady state alone
MAX_PIPELINE_LP = 600


@dataclass(frozen=True)
class Stream:
    """A share of the data and the order (and link classes) in which it crosses the dimensions."""

    order: tuple[int, ...]  # dimension indices, first to last
    classes: tuple[str, ...]  # the link class serving each dimension (indexed like the dimensions)
    weight: float


def class_bandwidth_gbps(ctx: Context, dims: list[Dimension]) -> dict[str, float]:
    """Per link class, the least bandwidth (per direction) any member has on links of that class.

    A rank of a many-rank chip has its own on-chip link and an equal share of its chip's other links
    with the chip's other members.
    """
    wanted = {cls for dim in dims for cls in dim.classes}
    nodes = ctx.topology.nodes
    site = {chip: nodes[chip].get("chip", chip) for chip in ctx.group}
    sharing = Counter(site.values())
    per_node = {node: dict.fromkeys(wanted, 0.0) for node in [*ctx.group, *sharing]}
    for (u, v), data in ctx.topology.links.items():
        if data["cls"] in wanted:
            for end in (u, v):
                if end in per_node:
                    per_node[end][data["cls"]] += data["bw_gbps"]
    return {
        cls: min(
            per_node[chip][cls]
            if per_node[chip][cls] > 0
            else per_node[site[chip]][cls] / sharing[site[chip]]
            for chip in ctx.group
        )
        for cls in wanted
    }


def stream_loads(dims: list[Dimension], order, classes) -> dict[str, float]:
    """Bytes per rank on each link class, in units of S/p, for an all-gather stream.

    The sum of :func:`stage_times` over the stages at unit bandwidth: the one count of a stream's
    bytes that the weighting LP uses too.
    """
    names = sorted({classes[d] for d in order})
    totals = stage_times(dims, order, classes, dict.fromkeys(names, 1.0), names).sum(axis=0)
    return {cls: float(total) for cls, total in zip(names, totals, strict=True)}


def stage_times(dims: list[Dimension], order, classes, bandwidth: dict[str, float], names) -> np.ndarray:
    """A stream's all-gather stages as rows of per-rank time on each link class (units of S/p / GB/s).

    A mesh stage sends ``held x (k - 1)``; a ring hop ``held`` each way (half on the last hop of an
    even ring); a chain hop at most ``held`` each way: the same stages :func:`stream_stages` builds.
    """
    rows = []
    held = 1
    for d in order:
        dim, cls = dims[d], classes[d]
        column, k = names.index(cls), dim.size
        if dim.modes[cls] == "mesh":
            amounts = [held * (k - 1)]
        elif dim.modes[cls] == "ring":
            amounts = [2 * held if hop < k // 2 or k % 2 else held for hop in range(1, k // 2 + 1)]
        else:
            amounts = [2 * held] * (k - 1)
        for amount in amounts:
            row = np.zeros(len(names))
            row[column] = amount / bandwidth[cls]
            rows.append(row)
        held *= k
    return np.array(rows)


def choose_streams(dims: list[Dimension], bandwidth: dict[str, float], op: str = "allgather") -> list[Stream]:
    """The stream weights that make the pipelined schedule fastest (a linear program).

    With the steady state alone, every mix that loads each link class in proportion to its bandwidth
    is optimal; they differ in the pipeline's fill and drain, when only some stages run. So the LP
    minimises the sum over the rounds of a :data:`WEIGHTING_CHUNKS`-chunk pipeline of each round's
    busiest class (per-rank bytes over bandwidth): fill rounds (stages 0..r busy), the steady rounds
    and drain rounds (stages j.. busy). The schedule is then costed for real at every chunk count.
    """
    candidates = []
    options = [dim.classes for dim in dims]
    count = np.prod([len(o) for o in options]) * np.prod(range(1, len(dims) + 1))
    if count > MAX_STREAMS:
        raise NotApplicable(f"{len(dims)} dimensions give {count:,} dimension orders: too many to balance")
    for order in permutations(range(len(dims))):
        for classes in product(*options):
            candidates.append((order, classes))
    # classes in the order the dimensions name them (not by name: a renamed class must not change
    # which of two equally good mixes the LP returns)
    names = list(dict.fromkeys([*(cls for dim in dims for cls in dim.classes), *bandwidth]))
    if any(bandwidth[c] <= 0 for c in names):
        raise NotApplicable("a member has no bandwidth on a link class its dimension needs")
    stages = [stage_times(dims, order, classes, bandwidth, names) for order, classes in candidates]
    if op == "allreduce":  # the reduce-scatter runs the all-gather's stages backwards, then it
        stages = [np.vstack([s[::-1], s]) for s in stages]
    weights = _pipeline_weights(np.stack(stages))  # streams x stages x classes
    keep = weights > MIN_SHARE
    weights = weights[keep] / weights[keep].sum()
    chosen = [c for c, k in zip(candidates, keep, strict=True) if k]
    return [Stream(order, classes, float(w)) for (order, classes), w in zip(chosen, weights, strict=True)]


def _pipeline_weights(stages: np.ndarray) -> np.ndarray:
    """Stream weights minimising the summed busiest-class time over a pipeline's rounds (see above)."""
    n, depth, classes = stages.shape
    steady = stages.sum(axis=1)  # streams x classes
    if n == 1:
        return np.ones(1)
    if n > MAX_PIPELINE_LP:  # too many streams for the dense solver: balance the steady state alone
        return balance(steady.T)
    chunks = max(WEIGHTING_CHUNKS, depth)
    prefix = np.concatenate([np.zeros((n, 1, classes)), np.cumsum(stages, axis=1)], axis=1)
    rounds = [(0, r, 1.0) for r in range(depth - 1)] + [(0, depth - 1, float(chunks - depth + 1))]
    rounds += [(j, depth - 1, 1.0) for j in range(1, depth)]
    p = len(rounds)
    scale = steady.max()
    a_ub = np.zeros((p * classes, n + p))
    for i, (lo, hi, _) in enumerate(rounds):
        busy = (prefix[:, hi + 1] - prefix[:, lo]) / scale  # streams x classes
        a_ub[i * classes : (i + 1) * classes, :n] = busy.T
        a_ub[i * classes : (i + 1) * classes, n + i] = -1.0
    cost = np.r_[np.zeros(n), [times for _, _, times in rounds]]
    a_eq = np.r_[np.ones(n), np.zeros(p)][None, :]
    from trnsim.collectives.lp import minimize

    return minimize(cost, a_ub, np.zeros(p * classes), a_eq, np.ones(1))[:n]


def balance(loads: np.ndarray) -> np.ndarray:
    """Weights ``w >= 0`` summing to 1 that minimise ``max(loads @ w)`` (rows: resources, columns: options).

    A matrix game: with every column nonzero, it is ``max sum(z) s.t. loads z <= 1, z >= 0`` and
    ``w = z / sum(z)``. That LP has a feasible origin and as many rows as link classes, so a dense
    simplex with Bland's rule (which cannot cycle) solves it in a few pivots, without importing
    scipy.optimize (half a second of start-up).
    """
    rows, n = loads.shape
    if np.any(loads.sum(axis=0) <= 0):
        raise NotApplicable("a stream uses no link at all")
    scaled = loads / loads.max()
    table = np.hstack([scaled, np.eye(rows), np.ones((rows, 1))])
    gain = np.r_[np.ones(n), np.zeros(rows)]
    basis = list(range(n, n + rows))
    for _ in range(100 * (n + rows)):
        reduced = gain - gain[basis] @ table[:, :-1]
        entering = int(np.argmax(reduced > 1e-12))
        if reduced[entering] <= 1e-12:
            break
        column = table[:, entering]
        ratios = np.full(rows, np.inf)
        positive = column > 1e-12
        ratios[positive] = table[positive, -1] / column[positive]
        best = ratios.min()
        ties = np.nonzero(ratios <= best * (1 + 1e-12))[0]
        leaving = int(min(ties, key=lambda r: basis[r]))
        table[leaving] /= table[leaving, entering]
        for r in range(rows):
            if r != leaving and table[r, entering] != 0:
                table[r] -= table[r, entering] * table[leaving]
        basis[leaving] = entering
    z = np.zeros(n + rows)
    z[basis] = table[:, -1]
    return z[:n] / z[:n].sum()


def _line_pairs(dim: Dimension, coords: np.ndarray, number: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of positions that differ only in dimension ``number``."""
    others = np.delete(coords, number, axis=1)
    _, line = np.unique(others, axis=0, return_inverse=True)
    line = np.asarray(line).reshape(-1)
    order = np.lexsort((coords[:, number], line))
    members = order.reshape(-1, dim.size)  # one row per line, positions by coordinate
    a, b = np.nonzero(~np.eye(dim.size, dtype=bool))
    return members[:, a].reshape(-1), members[:, b].reshape(-1)


def _units(ctx: Context, dims: list[Dimension]) -> dict[tuple, Step]:
    """One routed pattern per dimension and link class: all of its lines' flows at weight 1.

    Mesh: every ordered pair of a line. Ring: each rank to both ring neighbours at weight 1/2. Both
    are their own reverse, so a reduce-scatter reuses them. Chain (an open line): one pattern per hop
    ``h``, keyed ``(d, cls, h)``; it is not its own reverse (its last hop leaves the ends' neighbours
    outward), so the reduce-scatter's pattern, the same flows turned round, is kept too, keyed
    ``(d, cls, -h)``.
    """
    p = ctx.p
    coords = np.stack([d.coord for d in dims], axis=1)
    units = {}
    for d, dim in enumerate(dims):
        for cls in dim.classes:
            links = frozenset([cls])
            if dim.modes[cls] == "chain":
                # hop h: every block still travelling moves one link on, in both directions
                nxt = dim.rings[cls]
                prev = {b: a for a, b in nxt.items()}
                ends = [x for x in range(p) if x not in prev]  # each line's first position
                for hop in range(1, dim.size):
                    src, dst = [], []
                    for start in ends:
                        line = [start]
                        while line[-1] in nxt:
                            line.append(nxt[line[-1]])
                        for i in range(hop - 1, dim.size - 1):  # rightward: node i - hop + 1's block
                            src.append(line[i])
                            dst.append(line[i + 1])
                        for i in range(1, dim.size - hop + 1):  # leftward: node i + hop - 1's block
                            src.append(line[i])
                            dst.append(line[i - 1])
                    label = f"{dim.name} chain hop {hop}/{dim.size - 1}{_over(dim, cls)}"
                    units[d, cls, hop] = Step.of((np.array(src), np.array(dst)), 1.0, 1, label, links=links)
                    units[d, cls, -hop] = units[d, cls, hop].reversed()
            elif dim.modes[cls] == "ring":
                nxt = dim.rings[cls]
                src = np.arange(p)
                forward = np.array([nxt[x] for x in range(p)])
                backward = np.empty(p, dtype=np.int64)
                backward[forward] = src
                pairs = (np.r_[src, src], np.r_[forward, backward])
                units[d, cls] = Step.of(pairs, 0.5, 1, f"{dim.name} ring hop{_over(dim, cls)}", links=links)
            else:
                pairs = _line_pairs(dim, coords, d)
                units[d, cls] = Step.of(pairs, 1.0, 1, f"{dim.name}{_over(dim, cls)}", links=links)
    return units


def _over(dim: Dimension, cls: str) -> str:
    return "" if dim.name == cls else f" over {cls}"


def stream_stages(
    dims: list[Dimension], stream: Stream, units, p: int, turned: bool = False
) -> list[tuple[Step, ...]]:
    """One stream's all-gather as pipeline stages: a mesh dimension is one stage, a ring ``k // 2``,
    an open chain ``k - 1``. ``turned``: every stage's flows in the opposite direction (the
    reduce-scatter runs these stages in reverse order, each turned round)."""
    stages = []
    held = 1
    for d in stream.order:
        dim, cls = dims[d], stream.classes[d]
        share = stream.weight * held / p
        if dim.modes[cls] == "chain":
            # every block goes to both ends of the open line: k - 1 hops
            for hop in range(1, dim.size):
                stages.append((units[d, cls, -hop if turned else hop].scaled(share),))
            held *= dim.size
            continue
        unit = units[d, cls]
        if dim.modes[cls] == "ring":
            # each rank's data goes both ways round the ring, half of it 1..k/2 hops clockwise and the
            # other half the other way, so no piece travels more than k/2 hops: floor(k/2) stages
            # instead of k - 1, the same bytes on every link ((k-1)/2 x the data each way)
            hops = dim.size // 2
            for hop in range(1, hops + 1):
                full = hop < hops or dim.size % 2 == 1
                label = f"{dim.name} ring hop {hop}/{hops}{_over(dim, cls)}"
                stages.append((unit.scaled(share * (2 if full else 1), label),))
        else:
            stages.append((unit.scaled(share),))
        held *= dim.size
    return stages


@dataclass
class MultidimPlan:
    """What the schedule is made of (for export and explanation)."""

    dims: list[Dimension]
    streams: list[Stream]
    bandwidth_gbps: dict[str, float]


def plan(ctx: Context, op: str = "allgather") -> MultidimPlan:
    """The group's dimensions and the balanced streams over them for ``op``."""
    dims = dimensions(ctx)
    bandwidth = class_bandwidth_gbps(ctx, dims)
    return MultidimPlan(dims, choose_streams(dims, bandwidth, op), bandwidth)


def schedule(ctx: Context, op: str) -> list[Pipeline]:
    """The multi-dimensional schedule of ``op`` (allgather, reducescatter, allreduce): a chain per stream."""
    chosen = plan(ctx, op)
    units = _units(ctx, chosen.dims)
    chains = []
    for stream in chosen.streams:
        gather = stream_stages(chosen.dims, stream, units, ctx.p)
        # the reduce-scatter is the all-gather run backwards: its stages in reverse order, each in the
        # opposite direction (a mesh's and a ring's patterns are their own reverse, a chain's not)
        scatter = [] if op == "allgather" else stream_stages(chosen.dims, stream, units, ctx.p, turned=True)
        scatter.reverse()
        chains.append(
            tuple({"allgather": gather, "reducescatter": scatter, "allreduce": scatter + gather}[op])
        )
    label = f"{len(chosen.streams)} streams over {' x '.join(str(d.size) for d in chosen.dims)}"
    return [Pipeline(tuple(chains), label)]
