"""One way to ask for a collective over sizes, whichever model answers: a :class:`Backend`.

A backend is a system and who runs the collective on it: one group (:class:`OneGroup`, the graph
engine of :mod:`trnsim.model.engine`), several groups at once sharing links (:class:`ManyGroups`,
:mod:`trnsim.model.concurrent`) or every rank of a cluster of domains (:class:`Cluster`,
:mod:`trnsim.model.cluster`). Each one's ``evaluate(op, sizes, algo, dtype)`` returns an
:class:`~trnsim.model.rows.Evaluation` whose rows extend :class:`~trnsim.model.rows.Row`, so that
whatever compares, plots, reports or sweeps results takes them from any backend alike.
:meth:`Selection.backend` is the one place that decides between one group, several at once and a
cluster.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from trnsim.collectives.arguments import Arguments
from trnsim.errors import UsageError
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
    arguments: Arguments | None = None  # the op's root, pairs or counts
    raw_bounds: bool = True  # the bound at raw link rates too (False: an output that shows none)

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
            arguments=self.arguments,
            raw_bounds=self.raw_bounds,
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
    arguments: Arguments | None = None  # the same root, pairs or counts in every group, by position

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
            arguments=self.arguments,
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


@dataclass(frozen=True)
class Fabric:
    """A cluster: ``domains`` copies of a system joined by the scale-out fabric its file describes
    (``scale_out``), with ``edits`` to that fabric by field name
    (:func:`trnsim.topology.scaleout.fabric_choice`: ``nic_gbit_per_chip``, ``port_gbit``, ...;
    ``hop_us``, the latency of a step across domains, in microseconds)."""

    domains: int
    edits: tuple[tuple[str, object], ...] = ()
    layers: int | None = None  # switch layers above the ToRs (None: as few as reach every rack)
    inter_algo: str = "auto"  # the algorithm across domains
    overlap: bool = True  # pipeline the phases in chunks (False: one after the other)

    def plan(self, topology: Topology):
        """The fabric joining copies of ``topology``, counted for the healthy system (its racks and
        NICs do not change when a part fails)."""
        from trnsim.topology.scaleout import fabric_choice, plan_fabric

        per_domain = topology.planner.n_chips
        racks = topology.spec.switched.racks if topology.spec.switched else None
        edits = dict(self.edits)
        if edits.get("hop_us") is not None:
            edits["hop_ns"] = edits["hop_us"] * 1e3
        edits.pop("hop_us", None)
        choice = fabric_choice(topology.spec, per_domain, racks, **edits)
        return plan_fabric(choice, per_domain, self.domains, self.layers)


@dataclass(frozen=True)
class Selection:
    """Who runs the collective on a system, and how its steps are costed, said before the system
    is known (the same for every variant of a comparison, every task of a sweep).

    ``groups`` (a :func:`~trnsim.topology.groups.select_groups` spec) runs several groups at once;
    else ``group`` or ``ranks`` selects one (:func:`~trnsim.topology.groups.select_group`; every
    rank by default). ``fabric`` runs every rank of a cluster of copies of the system instead.
    ``skew`` or ``traffic_file`` skews an all-to-all
    (:func:`~trnsim.collectives.traffic.traffic_matrix`); ``root``, ``pairs`` and ``counts_file``
    shape the ops that take them (:mod:`trnsim.collectives.arguments`).
    """

    group: str | None = None
    ranks: int | None = None
    groups: str | None = None
    skew: str | None = None
    traffic_file: Path | None = None
    costing: Costing = Costing()
    fabric: Fabric | None = None
    root: int | None = None
    pairs: str | None = None
    counts_file: Path | None = None
    raw_bounds: bool = True  # one group's bound at raw link rates too (False: an output shows none)

    def arguments(self) -> Arguments | None:
        """The op's root, pairs and counts as given (None: none given)."""
        from trnsim.collectives.arguments import parse_pairs, read_counts

        if self.root is None and self.pairs is None and self.counts_file is None:
            return None
        return Arguments(
            root=self.root or 0,
            pairs=None if self.pairs is None else parse_pairs(self.pairs),
            counts=None if self.counts_file is None else read_counts(self.counts_file),
        )

    def backend(self, topology: Topology) -> "OneGroup | ManyGroups | Cluster":
        """The one place that decides between one group, several at once and a cluster."""
        from trnsim.collectives.traffic import traffic_matrix
        from trnsim.topology.groups import select_group, select_groups

        if self.fabric is not None:
            names = ("group", "ranks", "groups", "skew", "traffic_file", "root", "pairs", "counts_file")
            given = [name for name in names if getattr(self, name) is not None]
            if given:
                named = ", ".join(
                    "{" + n.removesuffix("_file").replace("traffic", "traffic") + "}" for n in given
                )
                raise UsageError(f"a cluster runs every rank of every domain, evenly: {named} do not apply")
            if self.costing != Costing():
                raise UsageError(
                    "a cluster is costed at its file's latencies: {alpha_us}, {max_chunks} and "
                    "{min_chunk_bytes} do not apply"
                )
            return Cluster(topology, self.fabric.plan(topology), self.fabric.inter_algo, self.fabric.overlap)
        if self.groups is not None:
            if self.group is not None or self.ranks is not None:
                raise UsageError("give {groups}, or {group}/{ranks} for one group, not both")
            chosen = select_groups(topology, self.groups)
            traffic = traffic_matrix(self.skew, self.traffic_file, len(chosen[0]))
            return ManyGroups(topology, chosen, self.costing, traffic, arguments=self.arguments())
        chips = select_group(topology, self.group, self.ranks)
        traffic = traffic_matrix(self.skew, self.traffic_file, len(chips))
        return OneGroup(
            topology, chips, self.costing, traffic, arguments=self.arguments(), raw_bounds=self.raw_bounds
        )


def backend_for(topology: Topology, **selection) -> "OneGroup | ManyGroups | Cluster":
    """The backend a run on ``topology`` asks for: :meth:`Selection.backend` of
    ``Selection(**selection)``."""
    return Selection(**selection).backend(topology)
