"""Parallelism layouts: tensor, context, expert, pipeline and data parallel groups on one system.

A layout gives each parallel dimension a degree (their product is the number of ranks) and an order,
innermost first: the innermost dimension's groups are consecutive ranks, the next one's are strided
by the innermost degree, and so on (as Megatron-style launchers number ranks). Each dimension's
collective then runs on all of its groups at once (:mod:`trnsim.model.concurrent`):

* ``tp`` all-reduce (tensor-parallel partial sums), ``cp`` all-gather (context-parallel keys and
  values), ``ep`` all-to-all (expert dispatch), ``dp`` all-reduce (gradients);
* ``pp`` sends activations point to point between consecutive stages: a ``pp`` group holds one rank
  of each stage, and its rank ``s`` sends to its rank ``s + 1`` (``sendrecv`` over the pairs
  ``0:1, 1:2, ..., pp-2:pp-1``). Every stage boundary of every group sends at once, as in a
  pipeline's steady state, so boundaries that share links slow each other.

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
  dense);
* ``pp`` send of one micro-batch's activations at a stage boundary, the tokens split over ``cp``
  and, with sequence parallelism, over ``tp`` (each tensor-parallel rank sends its own shard to its
  peer in the next stage): ``T / (cp tp) x H x e``.

Per training step with ``L`` layers (``L/pp`` on each rank) and ``m`` micro-batches: ``tp`` runs
``4 m L/pp`` times (attention and MLP, forward and backward), ``cp`` ``2 m L/pp`` (forward gather,
backward reduce-scatter, costed as a gather), ``ep`` ``4 m L/pp`` (dispatch and combine, forward
and backward; every layer a mixture-of-experts layer), ``dp`` once and ``pp`` ``2 m`` (each
micro-batch's activations forward and their gradients backward, over the same pairs reversed: on
links as fast both ways as the pipeline's, the backward sends take the forward ones' time; the
pipeline's fill and drain bubble is compute, not communication, and is not counted).
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
OPS = {"tp": "allreduce", "cp": "allgather", "ep": "alltoall", "dp": "allreduce", "pp": "sendrecv"}


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
            "pp": self.tokens / (cp * tp) * self.hidden * element,
        }
        if self.params is not None:
            sizes["dp"] = self.params * element / (tp * pp)
        return {name: int(round(value)) for name, value in sizes.items()}

    def calls(self, degrees: dict[str, int]) -> dict[str, float]:
        """Calls of each dimension's collective per training step (1 each without ``layers``)."""
        if self.layers is None:
            return {}
        per_rank = self.micro_batches * self.layers / degrees.get("pp", 1)
        return {
            "tp": 4 * per_rank,
            "cp": 2 * per_rank,
            "ep": 4 * per_rank,
            "dp": 1.0,
            "pp": 2.0 * self.micro_batches,
        }

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
    """One dimension of a layout: its groups and its collective's result."""

    name: str
    degree: int
    op: str
    groups: list[list[str]]
    size: int
    row: ConcurrentRow
    calls: float = 1.0  # how often the collective runs in what the layout's time covers

    @property
    def total_us(self) -> float:
        return self.calls * self.row.time_us


def stage_pairs(pp: int) -> tuple[tuple[int, int], ...]:
    """A pipeline group's sends, by position in the group: each stage's rank to the next stage's.

    >>> stage_pairs(4)
    ((0, 1), (1, 2), (2, 3))
    """
    return tuple((s, s + 1) for s in range(pp - 1))


def arguments_of(name: str, degree: int):
    """What a dimension's op needs besides its size: the stage pairs for ``pp``, else nothing."""
    from trnsim.collectives.arguments import Arguments

    return Arguments(pairs=stage_pairs(degree)) if name == "pp" else None


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

    layouts = []  # per order: (order, [(name, groups, key of its run)])
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
            if name not in sizes:
                raise UsageError(
                    f"give the {name} message size ({{size}} {name}=BYTES, or a model shape: {{hidden}} "
                    "and {tokens}" + (", with {params} for dp)" if name == "dp" else ")"),
                    names=("size", "hidden", "tokens", "params"),
                )
            key = (name, tuple(map(tuple, groups[name])))
            if key not in runs:
                skew = traffic if name == "ep" else None
                with _naming(name, OPS[name], sizes[name], groups[name]):
                    prepared = prepare_concurrent(
                        topology,
                        OPS[name],
                        [sizes[name]],
                        groups[name],
                        dtype=dtype,
                        traffic=skew,
                        arguments=arguments_of(name, degrees[name]),
                    )
                    check_work([prepared], describe_groups(topology, groups[name], len(prepared.routed)))
                runs[key] = prepared
            dimensions.append((name, groups[name], key))
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
        for name, groups, key in dimensions:
            count = (calls or {}).get(name, 1.0)
            result.dimensions.append(
                DimensionResult(name, degrees[name], OPS[name], groups, sizes[name], rows[key], count)
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
