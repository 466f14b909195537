"""Collective algorithms as schedules: steps and pipelines of flows between group positions.

Each algorithm builds a list of :class:`~trnsim.collectives.schedule.Step` (flows ``src -> dst``
between positions 0..p-1, each carrying a fraction of the collective's size, repeated ``repeat``
times) and :class:`~trnsim.collectives.schedule.Pipeline` (chains of stages that chunks pass
through: the pipelined ``tree`` and ``multidim``). Schedules depend on the op and the group, never on
the size, so a whole size sweep routes each step once; a pipeline's chunk count is chosen per size
when it is costed.

Each algorithm declares the ops it supports and refuses groups it cannot serve, with a reason.
Closed forms on a fully connected graph with equal links (alpha per step, beta per byte):

=============  ================  ==============================================
algorithm      op                time
=============  ================  ==============================================
ring           allreduce         2(p-1) alpha + 2(p-1)/p S beta
ring           allgather/RS      (p-1) alpha + (p-1)/p S beta
rdh            allreduce         2 log p alpha + 2(p-1)/p S beta   (Rabenseifner)
rdh            allgather/RS      log p alpha + (p-1)/p S beta
mesh           allreduce         2 alpha + 2 S/p beta
mesh           others            alpha + S/p beta
pairwise       alltoall          (p-1) alpha + (p-1)/p S beta
bruck          alltoall          log p alpha + (log p) S/2 beta    (p a power of 2)
bruck          allgather         log p alpha + (p-1)/p S beta      (p a power of 2)
=============  ================  ==============================================
"""

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from trnsim.collectives import multidim
from trnsim.collectives.schedule import RING_SEARCH_LIMIT, Context, NotApplicable, Pipeline, Step
from trnsim.topology.metrics import reducing_switches

__all__ = ["Context", "NotApplicable", "Pipeline", "Step", "REGISTRY", "find", "Algorithm"]


@dataclass(frozen=True)
class Algorithm:
    """A registered algorithm."""

    name: str
    ops: frozenset[str]
    summary: str
    build: Callable[[Context, str], list[Step]]
    aliases: tuple[str, ...] = field(default=())
    dominated_by: str | None = None  # never faster than this one under the model, where both apply
    takes_traffic: bool = False  # builds a skewed all-to-all from the context's traffic matrix

    def schedule(self, ctx: Context, op: str) -> list[Step]:
        if op not in self.ops:
            raise NotApplicable(
                f"{self.name} does not implement {op} (it does {', '.join(sorted(self.ops))})"
            )
        if ctx.traffic is not None and not self.takes_traffic:
            raise NotApplicable(
                "a skewed all-to-all runs on algorithms that send each block straight to its "
                "destination (mesh, pairwise); this one combines blocks for several destinations"
            )
        return self.build(ctx, op)


REGISTRY: dict[str, Algorithm] = {}


def algorithm(
    name: str,
    ops: set[str],
    summary: str,
    aliases: tuple[str, ...] = (),
    dominated_by: str | None = None,
    takes_traffic: bool = False,
):
    """Register a schedule builder under ``name``."""

    def register(build):
        REGISTRY[name] = Algorithm(name, frozenset(ops), summary, build, aliases, dominated_by, takes_traffic)
        return build

    return register


def find(name: str) -> Algorithm:
    """An algorithm by name or alias (case-insensitive)."""
    from trnsim.errors import UsageError

    key = name.lower()
    for algo in REGISTRY.values():
        if key == algo.name or key in algo.aliases:
            return algo
    raise UsageError(f"unknown algorithm {name!r}; choose one of {', '.join(REGISTRY)}, auto or all")


ALL = {"allreduce", "allgather", "reducescatter", "alltoall"}
REDUCTIONS = {"allreduce", "allgather", "reducescatter"}


def _ring_phases(op: str, p: int) -> int:
    return 2 * (p - 1) if op == "allreduce" else p - 1


@algorithm("ring", REDUCTIONS, "one ring through every rank (over direct links where they form one)")
def _ring(ctx: Context, op: str) -> list[Step]:
    order = ctx.ring_order
    pairs = [(order[i], order[(i + 1) % ctx.p]) for i in range(ctx.p)]
    return [Step.of(pairs, 1 / ctx.p, _ring_phases(op, ctx.p), "ring")]


@algorithm(
    "multiring",
    REDUCTIONS,
    "edge-disjoint rings in both directions using every direct link (Neuron's KangaRing on a 4x4 torus)",
    aliases=("kangaring",),
)
def _multiring(ctx: Context, op: str) -> list[Step]:
    cycles = ctx.disjoint_rings
    if cycles is None:
        raise NotApplicable(
            "the group's direct links do not split into edge-disjoint rings through every rank "
            "(needs every chip to have the same even number of direct links to other members, "
            f"and at most {RING_SEARCH_LIMIT} ranks for the search)"
        )
    position = {chip: i for i, chip in enumerate(ctx.group)}
    rings = []
    for cycle in cycles:
        closing = list(zip(cycle, cycle[1:] + cycle[:1], strict=True))
        bottleneck = min(ctx.topology.link(u, v)["bw_gbps"] for u, v in closing)
        forward = [(position[u], position[v]) for u, v in closing]
        rings += [(forward, bottleneck), ([(b, a) for a, b in forward], bottleneck)]
    total = sum(bw for _, bw in rings)
    # each directed ring carries a share of the data proportional to its slowest link
    pairs = [pair for ring, _ in rings for pair in ring]
    weights = [bw / total / ctx.p for ring, bw in rings for _ in ring]
    return [Step.of(pairs, weights, _ring_phases(op, ctx.p), f"{len(rings)} rings")]


@algorithm(
    "multidim",
    REDUCTIONS,
    "bandwidth-balanced: streams cross the group's dimensions (torus axes; slots, trays, racks) in "
    "orders an LP picks, pipelined, so every link class is busy at once (Themis-style)",
    aliases=("balanced",),
)
def _multidim(ctx: Context, op: str) -> list[Pipeline]:
    return multidim.schedule(ctx, op)


def _torus_lines(ctx: Context):
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
def _torus(ctx: Context, op: str) -> list[Step]:
    axes, sizes, strides, order = _torus_lines(ctx)
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


def _power_of_two(p: int) -> bool:
    return p & (p - 1) == 0


def _cube_order(ctx: Context) -> tuple[list[int], list[int]]:
    """Positions indexed by cube address, and the address bits, fastest link first."""
    p = ctx.p
    cubes = [ctx.attr(i, "hcube") for i in range(p)]
    if all(c is not None for c in cubes):
        by_address = sorted(range(p), key=lambda i: cubes[i])
    else:
        by_address = list(range(p))
    bits = p.bit_length() - 1

    def bit_bandwidth(bit: int) -> float:
        link = ctx.topology.link(ctx.group[by_address[0]], ctx.group[by_address[1 << bit]])
        return link["bw_gbps"] if link else 0.0

    return by_address, sorted(range(bits), key=lambda bit: -bit_bandwidth(bit))


@algorithm(
    "rdh", REDUCTIONS, "recursive halving (reduce-scatter) and doubling (all-gather): a hypercube exchange"
)
def _rdh(ctx: Context, op: str) -> list[Step]:
    p = ctx.p
    if not _power_of_two(p):
        raise NotApplicable(f"needs a power-of-two group; this one has {p} ranks")
    at, bits = _cube_order(ctx)
    halving = [
        Step.of([(at[a], at[a ^ (1 << bit)]) for a in range(p)], 1 / 2 ** (k + 1), 1, f"halving bit {bit}")
        for k, bit in enumerate(bits)
    ]
    doubling = [
        Step.of([(at[a], at[a ^ (1 << bit)]) for a in range(p)], 2**j / p, 1, f"doubling bit {bit}")
        for j, bit in enumerate(reversed(bits))
    ]
    return {"allreduce": halving + doubling, "reducescatter": halving, "allgather": doubling}[op]


@algorithm(
    "tree",
    {"allreduce"},
    "double binary tree, pipelined: reduce up and broadcast down, half the data on each tree, in chunks",
)
def _tree(ctx: Context, op: str) -> list[Pipeline]:
    p = ctx.p
    depth = p.bit_length() - 1

    def edges(mirror: bool):
        for node in range(1, p):
            parent = (node - 1) // 2
            level = (node + 1).bit_length() - 1
            if mirror:
                yield level, p - 1 - node, p - 1 - parent
            else:
                yield level, node, parent

    links = list(edges(False)) + list(edges(True))
    # a chunk is reduced level by level up to the roots, then broadcast back down; NCCL pipelines
    # the chunks through the levels, so every level works on its own chunk at once
    reduce_stages = [
        (Step.of([(c, par) for level, c, par in links if level == d], 0.5, 1, f"reduce level {d}"),)
        for d in range(depth, 0, -1)
    ]
    broadcast_stages = [
        (Step.of([(par, c) for level, c, par in links if level == d], 0.5, 1, f"broadcast level {d}"),)
        for d in range(1, depth + 1)
    ]
    return [Pipeline((tuple(reduce_stages + broadcast_stages),), "double binary tree")]


@algorithm(
    "mesh",
    ALL,
    "direct: every rank sends its share straight to every other rank at once (Neuron's Mesh)",
    aliases=("direct",),
    takes_traffic=True,
)
def _mesh(ctx: Context, op: str) -> list[Step]:
    if ctx.traffic is not None:
        src, dst = np.nonzero(~np.eye(ctx.p, dtype=bool) & (ctx.traffic > 0))
        return [Step.of((src, dst), ctx.traffic[src, dst], 1, "all pairs (skewed)")]
    step = Step.everyone(ctx.p, 1 / ctx.p, 1, "all pairs")
    return [step, step] if op == "allreduce" else [step]


# Mesh sends the same blocks in one step: link loads add up linearly, so its busiest link carries no
# more than the sum of the rounds' busiest links, and one step's latency is at most p-1 steps' latency.
@algorithm(
    "pairwise",
    {"alltoall"},
    "p-1 rounds: in round k rank i sends its block to rank i+k",
    dominated_by="mesh",
    takes_traffic=True,
)
def _pairwise(ctx: Context, op: str) -> list[Step]:
    p = ctx.p
    if ctx.traffic is not None:
        rounds = [(np.arange(p), (np.arange(p) + k) % p) for k in range(1, p)]
        return [
            Step.of((s, d), ctx.traffic[s, d], 1, f"shift {k} (skewed)") for k, (s, d) in enumerate(rounds, 1)
        ]
    return [Step.of([(i, (i + k) % p) for i in range(p)], 1 / p, 1, f"shift {k}") for k in range(1, p)]


@algorithm("bruck", {"alltoall", "allgather"}, "Bruck et al.: ceil(log2 p) rounds of doubling distance")
def _bruck(ctx: Context, op: str) -> list[Step]:
    p = ctx.p
    steps, k = [], 0
    while (1 << k) < p:
        distance = 1 << k
        if op == "alltoall":
            blocks = sum(1 for j in range(p) if j & distance)
            pairs = [(i, (i + distance) % p) for i in range(p)]
        else:
            blocks = min(distance, p - distance)
            pairs = [(i, (i - distance) % p) for i in range(p)]
        steps.append(Step.of(pairs, blocks / p, 1, f"distance {distance}"))
        k += 1
    return steps


@algorithm(
    "nvls",
    REDUCTIONS,
    "in-network reduction (NVLS/SHARP): reduce in the switches on the way up, multicast on the way "
    "down; an all-reduce pipelines the two",
    aliases=("sharp",),
)
def _nvls(ctx: Context, op: str) -> list:
    switches = reducing_switches(ctx.topology, ctx.group)
    if not switches:
        raise NotApplicable("needs switches that reduce in the network and reach every member directly")
    p = ctx.p
    # reduce-scatter: every member sends its whole buffer up, the switches reduce each shard and
    # deliver it to its owner; all-gather: each owner sends its shard up once, the switches deliver
    # it to every member (itself included: an assumption about the multicast group)
    reduce = Step.through_switches(switches, np.ones(p), np.full(p, 1 / p), "reduce in the switches")
    gather = Step.through_switches(switches, np.full(p, 1 / p), np.ones(p), "multicast from the switches")
    if op == "reducescatter":
        return [reduce]
    if op == "allgather":
        return [gather]
    return [Pipeline((((reduce,), (gather,)),), "NVLS: reduce up, multicast down")]


def _levels(ctx: Context) -> tuple[list[list[int]], str]:
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
def _hierarchical(ctx: Context, op: str) -> list[Step]:
    members, level = _levels(ctx)
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
