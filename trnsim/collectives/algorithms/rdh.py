"""Recursive halving (reduce-scatter) and doubling (all-gather): a hypercube exchange (Rabenseifner)."""

import numpy as np

from trnsim.collectives.algorithms.registry import REDUCTIONS, algorithm, program_of
from trnsim.collectives.program import Builder, Chunk, Program
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
    at, address = np.asarray(at, dtype=np.int64), np.arange(p)
    halving = [
        Step.of((at, at[address ^ (1 << bit)]), 1 / 2 ** (k + 1), 1, f"halving bit {bit}")
        for k, bit in enumerate(bits)
    ]
    doubling = [
        Step.of((at, at[address ^ (1 << bit)]), 2**j / p, 1, f"doubling bit {bit}")
        for j, bit in enumerate(reversed(bits))
    ]
    return {"allreduce": halving + doubling, "reducescatter": halving, "allgather": doubling}[op]


@program_of("rdh")
def program(ctx: Context, op: str) -> Program:
    """Halving on bit ``k`` (fastest first): partners exchange, each reducing into the other the half
    of its blocks whose address differs from its own on that bit and keeping the rest. Doubling runs
    the bits back in reverse, each rank copying all it holds to its partner."""
    p = ctx.p
    if not power_of_two(p):
        raise NotApplicable(f"needs a power-of-two group; this one has {p} ranks")
    at, bits = cube_order(ctx)
    b = Builder(op, p, "rdh")
    start = 0
    if op in ("reducescatter", "allreduce"):
        held = {a: list(range(p)) for a in range(p)}  # cube addresses of the blocks each address holds
        for step, bit in enumerate(bits):
            mask = 1 << bit
            for a in range(p):
                away = [x for x in held[a] if (x ^ a) & mask]
                b.send(step, at[a], at[a ^ mask], [Chunk(at[x]) for x in away], True)
                held[a] = [x for x in held[a] if not (x ^ a) & mask]
        start = len(bits)
    if op in ("allgather", "allreduce"):
        held = {a: [a] for a in range(p)}
        for step, bit in enumerate(reversed(bits)):
            mask = 1 << bit
            for a in range(p):
                b.send(start + step, at[a], at[a ^ mask], [Chunk(at[x]) for x in held[a]])
            held = {a: held[a] + held[a ^ mask] for a in range(p)}
    return b.build()
