"""Recursive halving (reduce-scatter) and doubling (all-gather): a hypercube exchange (Rabenseifner)."""

from trnsim.collectives.algorithms.registry import REDUCTIONS, algorithm
from trnsim.collectives.schedule import Context, NotApplicable, Step


def power_of_two(p: int) -> bool:
    return p & (p - 1) == 0


def cube_order(ctx: Context) -> tuple[list[int], list[int]]:
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
def schedule(ctx: Context, op: str) -> list[Step]:
    p = ctx.p
    if not power_of_two(p):
        raise NotApplicable(f"needs a power-of-two group; this one has {p} ranks")
    at, bits = cube_order(ctx)
    halving = [
        Step.of([(at[a], at[a ^ (1 << bit)]) for a in range(p)], 1 / 2 ** (k + 1), 1, f"halving bit {bit}")
        for k, bit in enumerate(bits)
    ]
    doubling = [
        Step.of([(at[a], at[a ^ (1 << bit)]) for a in range(p)], 2**j / p, 1, f"doubling bit {bit}")
        for j, bit in enumerate(reversed(bits))
    ]
    return {"allreduce": halving + doubling, "reducescatter": halving, "allgather": doubling}[op]
