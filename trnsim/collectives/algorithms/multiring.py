"""Edge-disjoint rings in both directions over every direct link (Neuron's KangaRing on a 4x4 torus).

Each directed ring runs the ring algorithm on a share of the data proportional to its slowest link.
"""

from trnsim.collectives.algorithms.registry import REDUCTIONS, algorithm, program_of
from trnsim.collectives.algorithms.ring import ring_phases
from trnsim.collectives.program import Builder, Program, order_of, ring_collective
from trnsim.collectives.schedule import RING_SEARCH_LIMIT, Context, NotApplicable, Step


def directed_rings(ctx: Context) -> list[tuple[list[tuple[int, int]], float]]:
    """Each directed ring as its ``(src, dst)`` position pairs in ring order, with its slowest link."""
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
    return rings


@algorithm(
    "multiring",
    REDUCTIONS,
    "edge-disjoint rings in both directions using every direct link (Neuron's KangaRing on a 4x4 torus)",
    aliases=("kangaring",),
)
def schedule(ctx: Context, op: str) -> list[Step]:
    rings = directed_rings(ctx)
    total = sum(bw for _, bw in rings)
    # each directed ring carries a share of the data proportional to its slowest link
    pairs = [pair for ring, _ in rings for pair in ring]
    weights = [bw / total / ctx.p for ring, bw in rings for _ in ring]
    return [Step.of(pairs, weights, ring_phases(op, ctx.p), f"{len(rings)} rings")]


@program_of("multiring")
def program(ctx: Context, op: str) -> Program:
    """Directed ring ``k`` runs the ring algorithm on part ``k`` of every block, all rings at once."""
    rings = directed_rings(ctx)
    total = sum(bw for _, bw in rings)
    b = Builder(op, ctx.p, "multiring", parts=tuple(bw / total for _, bw in rings))
    for k, (ring, _) in enumerate(rings):
        ring_collective(b, order_of(ring), part=k, channel=k)
    return b.build()
