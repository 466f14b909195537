"""Parallelism layouts: tensor, context, expert, pipeline and data parallel groups on one system.

A layout gives each parallel dimension a degree (their product is the number of ranks) and an order,
innermost first: the innermost dimension's groups are consecutive ranks, the next one's are strided
by the innermost degree, and so on (as Megatron-style launchers number ranks). Each dimension's
collective then runs on all of its groups at once (:mod:`trnsim.model.concurrent`):

* ``tp`` all-reduce (tensor-parallel partial sums), ``cp`` all-gather (context-parallel keys and
  values), ``ep`` all-to-all (expert dispatch), ``dp`` all-reduce (gradients);
* ``pp`` exchanges activations point to point between neighbouring stages, which trnsim does not model
  as a collective: it shapes the mapping but adds no time.

A layout's time is the sum of its dimensions' times (an assumption: no overlap between them),
each weighted by how often the dimension's collective runs (once each unless a model shape says).

Message sizes come from the user per dimension or from a model shape (:class:`ModelShape`: width
``H``, tokens ``T`` per micro-batch of one model replica, experts per token ``k``, parameters
``N``, ``L`` layers, element size ``e``). The formulas are the usual Megatron-style accounting,
named here as assumptions (override any with an explicit size):

* ``tp`` all-reduce of one layer's activations of its context shard: ``T/cp x H x e``;
* ``cp`` all-gather of keys and values (as wide as the model, no grouped-query attention), heads
  split over ``tp``: ``2 T H e / tp`` gathered;
* ``ep`` all-to-all dispatch: each rank sends its tokens (split over ``cp`` and, with sequence
  parallelism, ``tp``) to ``k`` experts: ``T / (cp tp) x k x H x e``;
* ``dp`` all-reduce of the gradients a rank holds: ``N / (tp pp) x e`` (expert weights counted as
  dense).

Per training step with ``L`` layers (``L/pp`` on each rank) and ``m`` micro-batches: ``tp`` runs
``4 m L/pp`` times (attention and MLP, forward and backward), ``cp`` ``2 m L/pp`` (forward gather,
backward reduce-scatter, costed as a gather), ``ep`` ``4 m L/pp`` (dispatch and combine, forward
and backward; every layer a mixture-of-experts layer) and ``dp`` once.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import permutations

import numpy as np

from trnsim.errors import ParameterError, UsageError
from trnsim.model.concurrent import ConcurrentRow
from trnsim.topology.graph import Topology

DIMENSIONS = ("tp", "cp", "ep", "dp", "pp")
OPS = {"tp": "allreduce", "cp": "allgather", "ep": "alltoall", "dp": "allreduce"}


@dataclass(frozen=True)
class ModelShape:
    """What a model's shape says about each dimension's message (see the module docstring)."""

    hidden: int
    tokens: int
    topk: int = 1
    experts: int | None = None
    params: float | None = None
    layers: int | None = None
    micro_batches: int = 1

    def sizes(self, degrees: dict[str, int], element: int) -> dict[str, int]:
        """Bytes per call of each dimension's collective that the shape determines."""
        tp, cp, pp = (degrees.get(name, 1) for name in ("tp", "cp", "pp"))
        sizes = {
            "tp": self.tokens / cp * self.hidden * element,
            "cp": 2 * self.tokens * self.hidden * element / tp,
            "ep": self.tokens / (cp * tp) * self.topk * self.hidden * element,
        }
        if self.params is not None:
            sizes["dp"] = self.params * element / (tp * pp)
        return {name: int(round(value)) for name, value in sizes.items()}

    def calls(self, degrees: dict[str, int]) -> dict[str, float]:
        """Calls of each dimension's collective per training step (1 each without ``layers``)."""
        if self.layers is None:
            return {}
        per_rank = self.micro_batches * self.layers / degrees.get("pp", 1)
        return {"tp": 4 * per_rank, "cp": 2 * per_rank, "ep": 4 * per_rank, "dp": 1.0}

    def check(self, degrees: dict[str, int]) -> None:
        """Refuse a shape the degrees cannot split."""
        if self.experts is not None and degrees.get("ep", 1) > 1 and self.experts % degrees["ep"]:
            raise ParameterError(
                f"the expert-parallel degree {degrees['ep']} must divide it", "experts", f"{self.experts}"
            )
        if self.experts is not None and self.topk > self.experts:
            raise ParameterError(f"a token picks at most the {self.experts} experts", "topk", str(self.topk))
        if self.layers is not None and self.layers % degrees.get("pp", 1):
            raise ParameterError(
                f"the pipeline degree {degrees['pp']} must divide it", "layers", f"{self.layers}"
            )


@dataclass
class DimensionResult:
    """One dimension of a layout: its groups and its collective's result (None for pp)."""

    name: str
    degree: int
    op: str | None
    groups: list[list[str]]
    size: int
    row: ConcurrentRow | None
    calls: float = 1.0  # how often the collective runs in what the layout's time covers

    @property
    def total_us(self) -> float:
        return self.calls * self.row.time_us if self.row is not None else 0.0


@dataclass
class LayoutResult:
    """A layout: its order (innermost first) and each dimension's result."""

    order: tuple[str, ...]
    dimensions: list[DimensionResult] = field(default_factory=list)

    @property
    def time_us(self) -> float:
        return sum(d.total_us for d in self.dimensions)

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
    calls: dict[str, float] | None = None,
    traffic: np.ndarray | None = None,
) -> LayoutResult:
    """Run every dimension's collective on all of its groups at once, for one layout.

    Parameters
    ----------
    sizes : dict
        Bytes per call of each dimension's collective.
    calls : dict, optional
        Calls per dimension (1 where missing); the layout's time weights each dimension by them.
    traffic : numpy.ndarray, optional
        A skewed all-to-all for ``ep`` (:mod:`trnsim.collectives.traffic`), by position in each group.
    """
    return _evaluate(topology, members, degrees, [order], sizes, dtype, calls, traffic)[0]


def compare_layouts(
    topology: Topology,
    members: list[str],
    degrees: dict[str, int],
    sizes: dict[str, int],
    orders: list[tuple[str, ...]] | None = None,
    dtype: str = "float",
    calls: dict[str, float] | None = None,
    traffic: np.ndarray | None = None,
) -> list[LayoutResult]:
    """Every order of the dimensions (or the ones given), fastest first.

    A dimension's groups depend only on which dimensions are inside it, so orders share runs: each
    distinct run is evaluated once, and all of them together must fit the work limits before any
    is routed.
    """
    names = [name for name in DIMENSIONS if degrees.get(name, 1) > 1]
    candidates = orders or list(permutations(names))
    results = _evaluate(topology, members, degrees, candidates, sizes, dtype, calls, traffic)
    return sorted(results, key=lambda r: r.time_us)


def _evaluate(topology, members, degrees, orders, sizes, dtype, calls, traffic) -> list[LayoutResult]:
    """The layouts of ``orders``: every distinct dimension run prepared and its work checked first."""
    from trnsim.model.concurrent import (
        check_work,
        describe_groups,
        prepare_concurrent,
        run_concurrent,
    )

    layouts = []  # per order: (order, [(name, op, groups, key of its run or None)])
    runs: dict[tuple, object] = {}  # distinct (dimension, groups) -> its prepared run
    for order in orders:
        order = tuple(name for name in order if degrees.get(name, 1) > 1)
        unknown = [name for name in order if name not in DIMENSIONS]
        if unknown:
            raise UsageError(
                f"unknown parallel dimension {unknown[0]!r}; dimensions: {', '.join(DIMENSIONS)}"
            )
        groups = layout_groups(members, degrees, order)
        dimensions = []
        for name in order:
            op, key = OPS.get(name), None
            if op is not None:
                if name not in sizes:
                    raise UsageError(
                        f"give the {name} message size ({{size}} {name}=BYTES, or a model shape: {{hidden}} "
                        "and {tokens}" + (", with {params} for dp)" if name == "dp" else ")"),
                        names=("size", "hidden", "tokens", "params"),
                    )
                key = (name, tuple(map(tuple, groups[name])))
                if key not in runs:
                    skew = traffic if name == "ep" else None
                    with _naming(name, op, sizes[name], groups[name]):
                        prepared = prepare_concurrent(
                            topology, op, [sizes[name]], groups[name], dtype=dtype, traffic=skew
                        )
                        check_work([prepared], describe_groups(topology, groups[name], len(prepared.routed)))
                    runs[key] = prepared
            dimensions.append((name, op, groups[name], key))
        layouts.append((order, dimensions))
    if len(runs) > 1:
        what = (
            f"{len(orders):,} layouts ({len(runs):,} distinct runs)"
            if len(orders) > 1
            else "the layout's runs"
        )
        check_work(list(runs.values()), f"{topology.where}: {what}")
    rows = {}
    for key, prepared in runs.items():
        name = key[0]
        with _naming(name, OPS[name], sizes[name], prepared.groups):
            rows[key] = run_concurrent(prepared, bounds=False).rows[0]
    results = []
    for order, dimensions in layouts:
        result = LayoutResult(order)
        for name, op, groups, key in dimensions:
            count = (calls or {}).get(name, 1.0)
            row = rows[key] if key is not None else None
            result.dimensions.append(
                DimensionResult(name, degrees[name], op, groups, sizes.get(name, 0), row, count)
            )
        results.append(result)
    return results


@contextmanager
def _naming(name: str, op: str, size: int, groups: list) -> Iterator[None]:
    """Name the dimension in a refusal: several run in one layout."""
    try:
        yield
    except UsageError as exc:
        raise exc.within(f"{name} ({op} of {size} B on {len(groups)} groups)") from None
