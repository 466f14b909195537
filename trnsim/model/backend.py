"""One way to ask for a collective over sizes, whichever model answers: a :class:`Backend`.

A backend is a system and who runs the collective on it: one group (:class:`OneGroup`, the graph
engine of :mod:`trnsim.model.engine`), several groups at once sharing links (:class:`ManyGroups`,
:mod:`trnsim.model.concurrent`) or every rank of a cluster of domains (:class:`Cluster`,
:mod:`trnsim.model.cluster`). Each one's ``evaluate(op, sizes, algo, dtype)`` returns an
:class:`~trnsim.model.rows.Evaluation` whose rows extend :class:`~trnsim.model.rows.Row`, so that
whatever compares, plots, reports or sweeps results takes them from any backend alike.
:func:`backend_for` is the one place that decides between one group and several.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from trnsim.errors import ParameterError, UsageError
from trnsim.model.rows import Evaluation
from trnsim.topology.graph import Topology


class Backend(Protocol):
    """Evaluates a collective at every size on a system fixed when the backend was made."""

    @property
    def topology(self) -> Topology:
        """The system (a cluster's: one domain)."""
        ...

    def evaluate(self, op: str, sizes: list[int], algo: str = "auto", dtype: str = "float") -> Evaluation:
        """Model ``op`` at every size in ``sizes`` (bytes) with algorithm ``algo`` (``auto``: the
        fastest per size) on elements of ``dtype``."""
        ...


@dataclass(frozen=True)
class Costing:
    """What every graph backend costs steps with: the per-step alpha (None: the system's
    ``latency.step_ns``) and the pipelining limits (None: :mod:`trnsim.model.cost`'s defaults)."""

    alpha_us: float | None = None
    max_chunks: int | None = None
    min_chunk_bytes: int | None = None

    def options(self) -> dict:
        return {
            "alpha_us": self.alpha_us,
            "max_chunks": self.max_chunks,
            "min_chunk_bytes": self.min_chunk_bytes,
        }


@dataclass(frozen=True, eq=False)
class OneGroup:
    """One group of ranks running the collective (the graph engine)."""

    topology: Topology
    group: list[str]
    costing: Costing = Costing()
    traffic: np.ndarray | None = None  # a skewed all-to-all's traffic matrix
    exact_bounds: bool = True

    def evaluate(self, op: str, sizes: list[int], algo: str = "auto", dtype: str = "float") -> Evaluation:
        """A :class:`~trnsim.model.engine.GroupEvaluation` (:func:`trnsim.model.engine.evaluate`)."""
        from trnsim.model.engine import evaluate

        return evaluate(
            self.topology,
            op,
            sizes,
            self.group,
            algo=algo,
            dtype=dtype,
            traffic=self.traffic,
            exact_bounds=self.exact_bounds,
            **self.costing.options(),
        )


@dataclass(frozen=True, eq=False)
class ManyGroups:
    """Disjoint groups of equal size running the collective at once, sharing links."""

    topology: Topology
    groups: list[list[str]]
    costing: Costing = Costing()
    traffic: np.ndarray | None = None  # the same skew in every group, by position
    bounds: bool = True

    def evaluate(self, op: str, sizes: list[int], algo: str = "auto", dtype: str = "float") -> Evaluation:
        """A :class:`~trnsim.model.concurrent.ConcurrentEvaluation`
        (:func:`trnsim.model.concurrent.evaluate_concurrent`)."""
        from trnsim.model.concurrent import evaluate_concurrent

        return evaluate_concurrent(
            self.topology,
            op,
            sizes,
            self.groups,
            algo=algo,
            dtype=dtype,
            traffic=self.traffic,
            bounds=self.bounds,
            **self.costing.options(),
        )


@dataclass(frozen=True, eq=False)
class Cluster:
    """Every rank of ``plan.domains`` copies of ``topology`` joined by the scale-out fabric."""

    topology: Topology  # one domain
    plan: object  # the :class:`trnsim.topology.scaleout.FabricPlan`
    inter_algo: str = "auto"
    overlap: bool = True

    def evaluate(self, op: str, sizes: list[int], algo: str = "auto", dtype: str = "float") -> Evaluation:
        """A :class:`~trnsim.model.cluster.ClusterEvaluation` (``algo``: inside each domain)."""
        from trnsim.model.cluster import evaluate_cluster

        if dtype.strip().lower() != "float":
            raise UsageError(f"a cluster collective is modelled on float elements, not {dtype.strip()!r}")
        return evaluate_cluster(self.topology, self.plan, op, sizes, self.inter_algo, algo, self.overlap)


def backend_for(
    topology: Topology,
    *,
    group: str | None = None,
    ranks: int | None = None,
    groups: str | None = None,
    skew: str | None = None,
    traffic_file: Path | None = None,
    costing: Costing = Costing(),
) -> OneGroup | ManyGroups:
    """The backend a run on ``topology`` asks for: several groups at once when ``groups`` (a
    :func:`~trnsim.topology.groups.select_groups` spec) is given, else the one group ``group`` or
    ``ranks`` selects (:func:`~trnsim.topology.groups.select_group`); ``skew`` or ``traffic_file``
    skews an all-to-all (:func:`~trnsim.collectives.traffic.traffic_matrix`)."""
    from trnsim.collectives.traffic import traffic_matrix
    from trnsim.topology.groups import select_group, select_groups

    if groups is not None:
        if group is not None or ranks is not None:
            raise ParameterError("give several groups or one group, not both", ("groups", "group", "ranks"))
        chosen = select_groups(topology, groups)
        return ManyGroups(topology, chosen, costing, traffic_matrix(skew, traffic_file, len(chosen[0])))
    chips = select_group(topology, group, ranks)
    return OneGroup(topology, chips, costing, traffic_matrix(skew, traffic_file, len(chips)))
