"""Parallelism layouts: tensor, context, expert, pipeline and data parallel groups on one system.

A layout gives each parallel dimension a degree (their product is the number of ranks) and an order,
innermost first: the innermost dimension's groups are consecutive ranks, the next one's are strided
by the innermost degree, and so on (as Megatron-style launchers number ranks). Each dimension's
collective then runs on all of its groups at once (:mod:`trnsim.collectives.concurrent`):

* ``tp`` all-reduce (tensor-parallel partial sums), ``cp`` all-gather (context-parallel keys and
  values), ``ep`` all-to-all (expert dispatch), ``dp`` all-reduce (gradients);
* ``pp`` exchanges activations point to point between neighbouring stages, which trnsim does not model
  as a collective: it shapes the mapping but adds no time.

A layout's time is the sum of its dimensions' times (an assumption: no overlap between them).
"""

from dataclasses import dataclass
from itertools import permutations

from trnsim.collectives.concurrent import ConcurrentRow, evaluate_concurrent
from trnsim.errors import UsageError
from trnsim.topology.graph import Topology

DIMENSIONS = ("tp", "cp", "ep", "dp", "pp")
OPS = {"tp": "allreduce", "cp": "allgather", "ep": "alltoall", "dp": "allreduce"}


@dataclass
class DimensionResult:
    """One dimension of a layout: its groups and its collective's result (None for pp)."""

    name: str
    degree: int
    op: str | None
    groups: list[list[str]]
    size: int
    row: ConcurrentRow | None


@dataclass
class LayoutResult:
    """A layout: its order (innermost first) and each dimension's result."""

    order: tuple[str, ...]
    dimensions: list[DimensionResult]

    @property
    def time_us(self) -> float:
        return sum(d.row.time_us for d in self.dimensions if d.row is not None)

    @property
    def label(self) -> str:
        return ",".join(self.order)


def layout_groups(
    members: list[str], degrees: dict[str, int], order: tuple[str, ...]
) -> dict[str, list[list[str]]]:
    """Each dimension's groups when ``order`` (innermost first) numbers the members."""
    strides, stride = {}, 1
    for name in order:
        strides[name] = stride
        stride *= degrees[name]
    if stride != len(members):
        raise UsageError(
            f"the degrees multiply to {stride}, but the layout has {len(members)} ranks: "
            "their product must equal the number of ranks"
        )
    out = {}
    for name in order:
        k, s = degrees[name], strides[name]
        block = k * s
        out[name] = [
            [members[base + offset + i * s] for i in range(k)]
            for base in range(0, len(members), block)
            for offset in range(s)
        ]
    return out


def evaluate_layout(
    topology: Topology,
    members: list[str],
    degrees: dict[str, int],
    order: tuple[str, ...],
    sizes: dict[str, int],
    dtype: str = "float",
) -> LayoutResult:
    """Run every dimension's collective on all of its groups at once, for one layout."""
    order = tuple(name for name in order if degrees.get(name, 1) > 1)
    unknown = [name for name in order if name not in DIMENSIONS]
    if unknown:
        raise UsageError(f"unknown parallel dimension {unknown[0]!r}; dimensions: {', '.join(DIMENSIONS)}")
    groups = layout_groups(members, degrees, order)
    results = []
    for name in order:
        op = OPS.get(name)
        row = None
        if op is not None:
            if name not in sizes:
                raise UsageError(f"give the {name} message size (--size {name}=BYTES)")
            row = evaluate_concurrent(topology, op, [sizes[name]], groups[name], dtype=dtype).rows[0]
        results.append(DimensionResult(name, degrees[name], op, groups[name], sizes.get(name, 0), row))
    return LayoutResult(order, results)


def compare_layouts(
    topology: Topology,
    members: list[str],
    degrees: dict[str, int],
    sizes: dict[str, int],
    orders: list[tuple[str, ...]] | None = None,
    dtype: str = "float",
) -> list[LayoutResult]:
    """Every order of the dimensions (or the ones given), fastest first."""
    names = [name for name in DIMENSIONS if degrees.get(name, 1) > 1]
    candidates = orders or list(permutations(names))
    results = [evaluate_layout(topology, members, degrees, order, sizes, dtype) for order in candidates]
    return sorted(results, key=lambda r: r.time_us)
