"""The :class:`Topology` type: devices and link bundles, with the chips in rank order.

Nodes carry ``kind`` ("chip" or "switch") and ``latency_ns`` (the cost of passing through them);
chips carry ``rank`` and a location; switches ``role``, ``model``, ``plane``. Each link bundle joins
two devices with ``cls``, ``lanes``, ``active_lanes``, ``bw_gbps`` (per direction), ``latency_ns``,
``medium`` and ``parallel`` (links in the bundle, 2 for the wrap of a size-2 ring).

``topology.graph`` is the same system as a ``networkx.Graph`` (built on first use): the analysis and
export view. The collective engine works on plain lists and numpy arrays, so a ``trnsim collective``
run on a switched fabric never pays for importing networkx.
"""

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from trnsim.errors import UsageError
from trnsim.spec.overrides import named_edits
from trnsim.spec.schema import Spec

# The link class of the on-chip link between a rank and its chip (where a chip hosts several ranks,
# see trnsim.topology.builders.expand_ranks). Part of the data model, not of a builder: routing,
# collectives and faults all tell these links apart from the fabric's.
RANK_CLASS = "core"


def add_link(
    links: dict,
    u: str,
    v: str,
    *,
    cls: str,
    lanes: int,
    active_lanes: float,
    lane_gbps: float,
    latency_ns: float,
    medium: str,
) -> None:
    """Add one link to the bundle between ``u`` and ``v`` (bundles add up lanes and bandwidth).

    Parameters
    ----------
    links : dict
        The bundles being built, by their two ends (either order finds an existing bundle).
    u, v : str
        The two devices.
    cls, medium : str
        The link's class and medium (the bundle keeps its first link's).
    lanes, active_lanes : float
        Wired and active lanes; ``active_lanes x lane_gbps`` is the link's raw rate.
    lane_gbps, latency_ns : float
        Per-lane rate (GB/s per direction) and the link's latency.
    """
    data = links.get((u, v)) or links.get((v, u))
    if data is not None:
        data["lanes"] += lanes
        data["active_lanes"] += active_lanes
        data["bw_gbps"] += active_lanes * lane_gbps
        data["parallel"] += 1
        return
    links[(u, v)] = {
        "cls": cls,
        "lanes": lanes,
        "active_lanes": active_lanes,
        "bw_gbps": active_lanes * lane_gbps,
        "latency_ns": latency_ns,
        "medium": medium,
        "parallel": 1,
    }


@dataclass(slots=True)
class TopologyCache:
    """What is derived from one :class:`Topology` and kept with it, each entry computed on first use.

    A Topology is never changed once built: a what-if edit, a failure
    (:func:`trnsim.topology.faults.apply_faults`) or the raw-rate view (:meth:`Topology.at_raw_rates`)
    builds a new one, which starts with an empty cache (``dataclasses.replace`` does not copy it). So
    no entry is ever invalid; whoever mutates a Topology's nodes or links in place must build a new
    Topology instead. Entries are named here (no other attribute can be set), each with its owner:

    * ``arrays``: the graph as arrays (:func:`trnsim.topology.arrays.graph_arrays`);
    * ``chip_bw_gbps``: each chip's bandwidth, by ``raw`` (:func:`trnsim.topology.metrics.chip_bandwidth_gbps`);
    * ``cut_bw_gbps``: every natural cut's bandwidth (:func:`trnsim.topology.metrics.cut_bandwidths`);
    * ``optimum``: bandwidth lower bounds by (group, op) (:func:`trnsim.model.optimum.optimum`), and
      by (group, op, root or traffic digest) for the rooted and demand ops (``trnsim.model.optimum``);
    * ``optimum_gather``: all-gather optima by (group, reversed), and by blocks (``trnsim.model.optimum``);
    * ``forest_overlay``: the chip overlay trees are packed on (:func:`trnsim.collectives.forest.overlay`);
    * ``digest``: the built system's digest (:attr:`Topology.digest`).
    * ``relabels``: the name tokens whose renamings are automorphisms, in a 1-tuple
      (:func:`trnsim.routing.relabel.relabels`);
    * ``paths``: the last few groups' shortest paths, by (group, routing policy)
      (:class:`trnsim.model.router.Router`: every op run on one group shares them).
    * ``forest_trees``: the packed trees by (group, rounds, generations) (:func:`trnsim.collectives.forest.pack`).
    """

    arrays: Any = None
    chip_bw_gbps: dict[bool, dict[str, float]] = field(default_factory=dict)
    cut_bw_gbps: dict[str, float] | None = None
    optimum: dict[tuple, Any] = field(default_factory=dict)
    optimum_gather: dict[tuple, Any] = field(default_factory=dict)
    forest_overlay: Any = None
    digest: str | None = None
    relabels: Any = None
    paths: dict[tuple, Any] = field(default_factory=dict)
    forest_trees: dict[tuple, Any] = field(default_factory=dict)


@dataclass
class Topology:
    """A built scale-up system (never changed once built: see :class:`TopologyCache`)."""

    spec: Spec
    nodes: dict[str, dict]  # every device's attributes, chips first in rank order
    links: dict[tuple[str, str], dict]  # link bundles by their two ends
    chips: list[str]
    path: Path | None = None
    cuts: dict[str, frozenset[str]] = field(default_factory=dict)
    overrides: tuple[str, ...] = ()
    faults: tuple[str, ...] = ()  # failed components (trnsim.topology.faults): no symmetry shortcut holds
    # what the user should know about the file (a default it relies on that changes the numbers)
    notes: tuple[str, ...] = ()
    # the same system before its failures: what a collective library plans its schedules on
    healthy: "Topology | None" = field(default=None, repr=False, compare=False)
    # derived values, computed on first use (a copy made with dataclasses.replace starts empty)
    cache: TopologyCache = field(default_factory=TopologyCache, init=False, repr=False, compare=False)

    @property
    def planner(self) -> "Topology":
        """The system schedules are planned on: the healthy one (a failure re-routes the flows, it
        does not change the library's plan), or this one when nothing failed."""
        return self.healthy if self.healthy is not None else self

    @property
    def where(self) -> str:
        """Where the spec came from, for messages: the file, and any --set edits applied to it."""
        origin = str(self.path) if self.path else self.spec.name
        return origin + (f" with {named_edits(self.overrides)}" if self.overrides else "")

    @property
    def name(self) -> str:
        return self.spec.name

    # One definition of the counts every command prints. ``chips`` (the list) holds the endpoints
    # collectives run on, the ranks; a chip that hosts several ranks is a device of its own (a
    # "switch" with role "chip", see builders.expand_ranks), neither a rank nor a switch.

    @property
    def ranks_per_chip(self) -> int:
        return self.spec.chip.ranks

    @property
    def n_ranks(self) -> int:
        """Endpoints: the ranks collectives run on (``len(chips)``)."""
        return len(self.chips)

    @cached_property
    def physical_chips(self) -> list[str]:
        """The physical chips' device names, in rank order (the ranks themselves when one per chip)."""
        return self.chips if self.ranks_per_chip == 1 else self.chips_of(self.chips)

    @property
    def n_chips(self) -> int:
        """Physical chips (``n_ranks / ranks_per_chip``)."""
        return len(self.physical_chips)

    def chips_of(self, ranks: list[str]) -> list[str]:
        """The physical chips that host ``ranks`` (endpoint names), each once, in order."""
        return list(dict.fromkeys(self.nodes[rank].get("chip", rank) for rank in ranks))

    @property
    def n_switches(self) -> int:
        """Switch chips: plane and on-node switches (not the chips that host several ranks)."""
        return sum(self.nodes[name].get("role") != "chip" for name in self.switches)

    @property
    def n_links(self) -> int:
        """Links (a bundle of ``parallel`` links counts each), the on-chip rank links included."""
        return sum(data["parallel"] for data in self.links.values())

    @cached_property
    def rank_of(self) -> dict[str, int]:
        return {name: rank for rank, name in enumerate(self.chips)}

    @cached_property
    def switches(self) -> list[str]:
        """Every device that is not a rank: switch chips, and chips that host several ranks."""
        return [node for node, data in self.nodes.items() if data["kind"] == "switch"]

    @cached_property
    def incident(self) -> dict[str, list[dict]]:
        """The link bundles at each device."""
        at: dict[str, list[dict]] = {node: [] for node in self.nodes}
        for (u, v), data in self.links.items():
            at[u].append(data)
            at[v].append(data)
        return at

    def at_raw_rates(self) -> "Topology":
        """The same system with every link at its raw rate (lanes x lane rate, no protocol overhead)."""
        links = {
            ends: {**data, "bw_gbps": data.get("raw_bw_gbps", data["bw_gbps"])}
            for ends, data in self.links.items()
        }
        from dataclasses import replace

        return replace(self, links=links)

    @cached_property
    def uniform_efficiency(self) -> float | None:
        """The efficiency every link shares, or None when link classes differ."""
        shares = {data.get("efficiency", 1.0) for data in self.links.values()}
        return shares.pop() if len(shares) == 1 else None

    @property
    def digest(self) -> str:
        """A digest of the built system: its spec, devices, links, rank order, natural cuts and failed
        parts (what anything computed from it may read; not where it came from). A key of the values
        kept on disk between runs (:mod:`trnsim.cache`)."""
        if self.cache.digest is None:
            from trnsim.cache import digest

            links = [(u, v, data) for (u, v), data in self.links.items()]
            # the devices in their order (an array index each), each one's attributes in any order
            nodes = list(self.nodes.items())
            self.cache.digest = digest(self.spec, nodes, links, self.chips, self.cuts, self.faults)
        return self.cache.digest

    def link(self, u: str, v: str) -> dict | None:
        """The bundle between two devices, if any."""
        return self.links.get((u, v)) or self.links.get((v, u))

    @cached_property
    def graph(self):
        """The topology as a ``networkx.Graph`` (node and edge attributes as described above)."""
        import networkx as nx

        graph = nx.Graph(name=self.name)
        graph.add_nodes_from(self.nodes.items())
        graph.add_edges_from((u, v, data) for (u, v), data in self.links.items())
        return graph

    @cached_property
    def ranks_by_chip(self) -> dict[str, list[str]]:
        """Each physical chip's ranks in rank order (a chip is its own one rank when one per chip)."""
        out: dict[str, list[str]] = {}
        for rank in self.chips:
            out.setdefault(self.nodes[rank].get("chip", rank), []).append(rank)
        return out

    def resolve_ranks(self, ref: str | int) -> list[str]:
        """The ranks ``ref`` names: one rank (a number or a rank's name), or every rank of a physical
        chip named (``x0.y0`` on trn1, whose chips host two ranks: ``x0.y0.c0``, ``x0.y0.c1``)."""
        text = str(ref).strip()
        if text not in self.rank_of and text in self.ranks_by_chip:
            return list(self.ranks_by_chip[text])
        return [self.resolve_chip(text)]

    def resolve_chip(self, ref: str | int) -> str:
        """Return the node name of a rank given by number (``"5"``) or by node name (``"r0.n1.A"``);
        a physical chip that hosts several ranks (trn1's ``x0.y0``) stands for its first rank."""
        text = str(ref).strip()
        digits = text.removeprefix("-")
        if digits.isascii() and digits.isdigit():
            rank = int(text)
            # after failures the survivors are renumbered: say so, or 15 of 16 looks like a typo
            failed = f" with its failed parts ({', '.join(self.faults)})" if self.faults else ""
            if rank < 0:
                raise UsageError(
                    f"{text} is negative, and ranks count from 0: {self.name}{failed} has ranks "
                    f"0..{self.n_ranks - 1}"
                )
            if rank >= self.n_ranks:
                unit = "rank" if self.spec.chip.ranks > 1 else "chip"
                raise UsageError(
                    f"rank {rank} is not a {unit} of {self.name}{failed}: ranks are 0..{self.n_ranks - 1}"
                )
            return self.chips[rank]
        if text in self.rank_of:
            return text
        if text in self.ranks_by_chip:
            return self.ranks_by_chip[text][0]
        close = closest(text, [*self.chips, *(c for c in self.ranks_by_chip if c not in self.rank_of)])
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UsageError(
            f"{text!r} is not a chip of {self.name}: give a rank 0..{self.n_ranks - 1} or a name{hint}"
        )


def closest(text: str, names: list[str], n: int = 3) -> list[str]:
    """The ``n`` names most like ``text``, closest first: among those similar enough (difflib's
    ratio at least 0.6, as ``get_close_matches``), the longest prefix shared with ``text`` first,
    then the higher ratio; ties keep the order of ``names`` (rank order), where difflib would put
    them in reverse alphabetical order (``x0.y3.c0`` before ``x0.y0.c0``)."""
    import difflib

    scored = []
    for index, name in enumerate(names):
        ratio = difflib.SequenceMatcher(None, text, name).ratio()
        if ratio >= 0.6:
            shared = next((i for i, (a, b) in enumerate(zip(text, name, strict=False)) if a != b), None)
            prefix = min(len(text), len(name)) if shared is None else shared
            scored.append((-prefix, -ratio, index, name))
    return [name for *_, name in sorted(scored)[:n]]
