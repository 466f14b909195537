"""What the closed-form tests of the algorithms share: the model run on a group, pipelines simulated
round by round, and flows routed by hand on a ring of chips (independently of the router)."""

import math

import numpy as np

from trnsim.collectives.arguments import Arguments
from trnsim.model.cost import MAX_CHUNKS, MIN_CHUNK_BYTES
from trnsim.model.engine import evaluate

ALPHA_US = 1.0  # step_ns = 1000 in the synthetic topologies
BW = 100.0  # GB/s per link and direction
# sizes every group of 2..8 ranks runs unchanged (whole 16-byte lines per rank: 16 x lcm(1..8)
# divides them), one latency-bound and one bandwidth-bound
UNIT = 16 * 1680
SIZES = [UNIT, UNIT * 39_936]


def beta(size: float) -> float:
    """Microseconds to move ``size`` bytes over one link."""
    return size / (BW * 1e9) * 1e6


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def modelled(topology, op: str, algo: str, size: int, root: int = 0, counts=None) -> float:
    """The model's time of ``op`` by ``algo`` on every chip of ``topology``."""
    arguments = Arguments(root=root, counts=None if counts is None else np.asarray(counts, dtype=float))
    row = evaluate(topology, op, [size], topology.chips, algo=algo, arguments=arguments).rows[0]
    assert row.bytes == size
    return row.time_us


def pipelined_us(stages: list[dict], size: float) -> float:
    """A pipeline of stages (each: directed link -> share of a chunk it carries) at its best chunk
    count: with ``m`` chunks, round ``r`` runs stages ``r - m + 1 .. r`` at once, one chunk each, and
    costs alpha plus its busiest link's load of ``size / m``; ``m`` from 1 to the most chunks of at
    least 64 KiB (at most 1,024) the model allows."""
    depth = len(stages)

    def total(m: int) -> float:
        out = 0.0
        for r in range(m + depth - 1):
            load: dict = {}
            for stage in stages[max(0, r - m + 1) : min(r, depth - 1) + 1]:
                for link, share in stage.items():
                    load[link] = load.get(link, 0.0) + share
            out += ALPHA_US + beta(size / m) * max(load.values())
        return out

    top = max(1, min(MAX_CHUNKS, int(size) // MIN_CHUNK_BYTES))
    return min(total(m) for m in range(1, top + 1))


def ring_loads(p: int, flows) -> dict[tuple[int, int], float]:
    """Each directed link ``(i, i +- 1)`` of a ring of ``p`` chips under ``flows`` ``(src, dst,
    share)``, each routed along the shorter arc (half each way when both are as short: ECMP)."""
    load: dict[tuple[int, int], float] = {}

    def walk(src: int, hops: int, step: int, share: float) -> None:
        at = src
        for _ in range(hops):
            nxt = (at + step) % p
            load[at, nxt] = load.get((at, nxt), 0.0) + share
            at = nxt

    for src, dst, share in flows:
        forward = (dst - src) % p
        if forward < p - forward:
            walk(src, forward, 1, share)
        elif forward > p - forward:
            walk(src, p - forward, -1, share)
        else:
            walk(src, forward, 1, share / 2)
            walk(src, forward, -1, share / 2)
    return load
