"""Route a schedule's steps over the graph and summarise each step's cost per byte.

Flows follow the routing policy (:mod:`trnsim.routing.policy`): split evenly over all shortest paths
(``ecmp``), or one path each (``single``, ``hash``); a step pinned to some link classes
(``Step.links``) is routed the same way over the subgraph of those classes alone; a step through
reducing switches (``Step.in_network``) spreads each member's bytes over its links to them; a step
that names its flows' paths (``Step.paths``) puts their bytes on those paths' links. A step
costs its path latency (the largest over its flows' paths) plus, per byte of collective size, the
time of its busiest directed link: bytes on that link / the link's bandwidth.

How a step's link loads are computed (per flow, by torus translation, by the fabric's orbits, per
source, compiled, or walked) is the routing layer's choice: :func:`trnsim.routing.loads.loads`. The
:class:`Router` turns steps into demands, caches each step's route by identity, and keeps the
group's shortest paths (:class:`~trnsim.routing.paths.GroupPaths`) and the subgraphs of pinned
link classes, which every hash seed shares.
"""

from dataclasses import dataclass, replace

import numpy as np

from trnsim.collectives.schedule import NotApplicable, Step
from trnsim.errors import UsageError
from trnsim.routing.loads import loads
from trnsim.routing.paths import GroupPaths, translations
from trnsim.routing.policy import RoutingPolicy, routing_of
from trnsim.routing.strategies.base import Demand, LinkLoads
from trnsim.topology.arrays import GraphArrays, components, graph_arrays
from trnsim.topology.builders import RANK_CLASS
from trnsim.topology.graph import Topology


@dataclass(frozen=True)
class StepRoute:
    """What one step costs, independent of the collective's size."""

    seconds_per_byte: float  # busiest link's seconds per byte of collective size
    latency_ns: float  # largest path latency among the step's flows
    max_links: int  # longest shortest path (in links) among the step's flows
    bottleneck: str  # class of the busiest link
    link_loads: np.ndarray  # bytes per directed edge per byte of collective size


def busiest_edge(seconds: np.ndarray) -> int:
    """The busiest directed edge; among edges busy within rounding of the busiest, the first, so that
    equal loads never pick a class by the noise of the last bit (or by what the classes are named)."""
    return int(np.flatnonzero(seconds >= seconds.max() * (1 - 1e-9))[0])


def busiest_classes(seconds: np.ndarray, classes) -> str:
    """The link classes of the busiest directed edges, sorted and joined by ``=``.

    Edges within rounding of the busiest count (as in :func:`busiest_edge`), so a balanced load names
    every class it keeps at the peak (``x=y=z`` on a torus) rather than the first class in edge order.

    Parameters
    ----------
    seconds : numpy.ndarray
        How long each directed edge is busy (any unit).
    classes : sequence of str
        Each directed edge's link class.

    Returns
    -------
    str
        ``x``, ``x=y=z``; ``-`` when no edge is busy.
    """
    top = float(seconds.max(initial=0.0))
    if top <= 0:
        return "-"
    return "=".join(sorted({classes[i] for i in np.flatnonzero(seconds >= top * (1 - 1e-9))}))


def _scaled(route: StepRoute, factor: float) -> StepRoute:
    return replace(
        route, seconds_per_byte=route.seconds_per_byte * factor, link_loads=route.link_loads * factor
    )


def _key(step: Step) -> int:
    # steps are immutable and kept alive by their plans; a schedule that repeats a step repeats the object
    return id(step)


def _demand(step: Step) -> Demand:
    return Demand(step.src, step.dst, step.weight, everyone=bool(step.all_pairs))


# a pinned subgraph: its group paths, its directed edges' indices in the whole graph, each member's part
_Parts = tuple[GroupPaths, np.ndarray, np.ndarray]


class Router:
    """Routes steps for one group on one topology, caching each step's route.

    Parameters
    ----------
    topology : Topology
    group : list of str
        The members, in group order (a step's positions index it).
    routing : RoutingPolicy, optional
        The policy (the topology file's by default).
    seed : int
        The hash function's seed (``hash`` routing).

    Examples
    --------
    A ring of four chips, 100 GB/s each way per link: a flow to the opposite chip has two shortest
    paths, and ECMP puts half its bytes on each, so its busiest link carries half the size.

    >>> from trnsim.collectives.schedule import Step
    >>> from trnsim.topology.synthetic import ring_topology
    >>> ring = ring_topology(4, lanes=100)
    >>> route = Router(ring, ring.chips).route(Step.of([(0, 2)], 1.0))
    >>> route.max_links, round(route.seconds_per_byte * 100e9, 12), route.link_loads.tolist().count(0.5)
    (2, 0.5, 4)
    """

    def __init__(
        self,
        topology: Topology,
        group: list[str],
        routing: RoutingPolicy | None = None,
        seed: int = 0,
        *,
        _paths: GroupPaths | None = None,
        _parts: dict[frozenset[str], _Parts] | None = None,
        _relays: int = 0,
    ):
        self.topology, self.group, self.seed = topology, group, seed
        self.routing = routing = routing or routing_of(topology.spec)
        self.paths = _paths if _paths is not None else self._group_paths()
        self._cache: dict[int, StepRoute] = {}
        self._keep: list[Step] = []  # the cache is keyed by identity: keep the steps alive
        # pinned subgraphs by link classes, shared with every seed (they do not depend on it)
        self._parts = {} if _parts is None else _parts
        self._relayed: dict[tuple[str, ...], Router] = {}  # the group with relay chips, by relays
        self._relays = _relays  # how many of the group's last chips are another router's relays
        self._edge_index: dict[tuple[int, int], int] | None = None  # directed edge by its ends

    def _group_paths(self) -> GroupPaths:
        topology, group, routing = self.topology, self.group, self.routing
        arrays = graph_arrays(topology)
        rows = np.asarray([arrays.index[chip] for chip in group], dtype=np.int64)
        paths = GroupPaths(arrays, rows, routing, translations(topology, routing), axis_order=self._axes())
        missing = paths.unreachable()
        if missing is not None:
            a, b = missing
            relay = "" if routing.relay else " when only switches forward traffic (routing without relay)"
            raise UsageError(
                f"{topology.where}: {group[a]} cannot reach {group[b]}{relay}; "
                f"allow chips to relay ({{routing}} {routing.policy},relay)",
                names="routing",
            )
        return paths

    def _axes(self) -> list[str] | None:
        """The torus axes in dimension order (``single`` routes dimension by dimension)."""
        torus = self.topology.spec.torus
        return [axis.name for axis in torus.axes] if torus is not None else None

    def with_seed(self, seed: int) -> "Router":
        """The same router with another hash seed (paths and pinned subgraphs shared, routes not)."""
        return Router(self.topology, self.group, self.routing, seed, _paths=self.paths, _parts=self._parts)

    @property
    def arrays(self) -> GraphArrays:
        return self.paths.arrays

    @property
    def rows(self) -> np.ndarray:
        """Each member's node index."""
        return self.paths.rows

    @property
    def max_links(self) -> int:
        """The fewest links between the group's farthest two members."""
        return self.paths.max_links

    def route(self, step: Step) -> StepRoute:
        """Summarise one step (cached by its flows)."""
        return self.route_all([step])[0]

    def route_all(self, steps: list[Step]) -> list[StepRoute]:
        """Summarise many steps, routing those that share a strategy together."""
        if not self._relays and any(step.relays for step in steps):
            return self._with_relays(steps)
        if any(step.in_network or step.paths is not None for step in steps):
            special = {
                id(step): self._in_network(step) if step.in_network else self._explicit(step)
                for step in steps
                if step.in_network or step.paths is not None
            }
            plain = [step for step in steps if id(step) not in special]
            routed = dict(zip(map(id, plain), self.route_all(plain), strict=True))
            return [special[id(step)] if id(step) in special else routed[id(step)] for step in steps]
        if any(step.unit is not None for step in steps):
            units = list({id(step.unit): step.unit for step in steps if step.unit is not None}.values())
            plain = [step for step in steps if step.unit is None]
            routed = dict(zip(map(id, units + plain), self.route_all(units + plain), strict=True))
            return [
                routed[id(step)] if step.unit is None else _scaled(routed[id(step.unit)], step.scale)
                for step in steps
            ]
        pending: dict[int, Step] = {}
        for step in steps:
            key = _key(step)
            if key not in self._cache and key not in pending:
                pending[key] = step
                self._keep.append(step)
        pinned: dict[frozenset[str], list[Step]] = {}
        for key, step in list(pending.items()):
            if step.links is not None:
                pinned.setdefault(step.links, []).append(step)
                del pending[key]
        for group in pinned.values():
            try:
                routed = self._pinned_routes(group)
            except NotApplicable:
                if not self.topology.faults:
                    raise
                # a failure took links the plan keeps to: the hardware re-routes on any shortest path
                pending.update((_key(step), step) for step in group)
                continue
            for step, route in zip(group, routed, strict=True):
                self._cache[_key(step)] = route
        plain = list(pending.values())
        for step, found in zip(plain, loads(self.paths, [_demand(s) for s in plain], self.seed), strict=True):
            self._cache[_key(step)] = self._route(found)
        return [self._cache[_key(step)] for step in steps]

    def _with_relays(self, steps: list[Step]) -> list[StepRoute]:
        """Route steps whose flows name relay chips (positions ``p..``, ``Step.relays``) with a router
        for the group extended by those chips: their flows are then ordinary flows between positions."""
        routed: dict[int, StepRoute] = {}
        for relays in dict.fromkeys(step.relays for step in steps):
            mine = [step for step in steps if step.relays == relays]
            if relays and relays not in self._relayed:
                try:
                    self._relayed[relays] = Router(
                        self.topology, self.group + list(relays), self.routing, self.seed, _relays=len(relays)
                    )
                except (UsageError, KeyError):
                    # a relay chip failed or was cut off: the plan made on the healthy system cannot run
                    raise NotApplicable(
                        "a chip the schedule relays through is gone after the failures"
                    ) from None
            router = self._relayed[relays] if relays else self
            routed.update(zip(map(id, mine), router.route_all(mine), strict=True))
        return [routed[id(step)] for step in steps]

    def _pinned_parts(self, links: frozenset[str]) -> _Parts:
        """The subgraph of ``links``: the group's paths over the nodes of its parts that hold group
        members (all members at once, each part routed within itself), the directed edges' indices
        in the whole graph, and each member's part (-1: no link of those classes).

        One set of paths serves every part: a BFS from a member only reaches its own part, so routing
        all parts together costs the parts' sizes, not the whole graph's (a tray's switches, not the
        rack's), without one router per part.
        """
        arrays = self.arrays
        # on-chip links are part of every class: a rank reaches its chip's links through them
        allowed = np.fromiter((cls in links or cls == RANK_CLASS for cls in arrays.edge_cls), dtype=bool)
        kept = np.nonzero(allowed[arrays.edge])[0]
        src, dst = arrays.src[kept], arrays.dst[kept]
        label = components(arrays.n_nodes, src, dst)
        member_label = label[self.rows]
        holding = np.isin(label, member_label)
        edges = kept[holding[src]]
        sub = arrays.restricted(np.nonzero(holding)[0], edges)
        # a member with no link of these classes is alone in its part (its own label)
        alone = np.bincount(member_label, minlength=arrays.n_nodes)[member_label] == 1
        has_link = np.isin(self.rows, np.r_[src, dst])
        part = np.where(has_link | ~alone, member_label, -1)
        rows = np.asarray([sub.index[chip] for chip in self.group], dtype=np.int64)
        # flows never leave their part: unreachable pairs across parts are expected
        paths = GroupPaths(sub, rows, self.routing, partitioned=True, axis_order=self._axes())
        return paths, edges, part

    def _pinned_routes(self, steps: list[Step]) -> list[StepRoute]:
        """Route steps pinned to the same link classes over that subgraph, all parts at once, and
        report them on the whole graph."""
        links = steps[0].links
        if links not in self._parts:
            self._parts[links] = self._pinned_parts(links)
        paths, edges, part = self._parts[links]
        demands = []
        for step in steps:
            src, dst, weight = step.flows()
            bad = (part[src] != part[dst]) | (part[src] < 0)
            if len(src) and bad.any():
                first = int(np.argmax(bad))
                raise NotApplicable(
                    f"{self.group[src[first]]} cannot reach {self.group[dst[first]]} "
                    f"over {', '.join(sorted(links))} links alone"
                )
            demands.append(Demand(src, dst, weight))
        results = []
        for demand, found in zip(demands, loads(paths, demands, self.seed), strict=True):
            whole = np.zeros(len(self.arrays.src))
            whole[edges] = found.loads
            results.append(self._route(replace(found, loads=whole, flows=len(demand.src))))
        return results

    def _in_network(self, step: Step) -> StepRoute:
        """A step through reducing switches: each member's bytes up and down spread evenly over its
        links to them (the switches reduce on the way up and multicast on the way down)."""
        from trnsim.topology.metrics import reducing_switches

        arrays = self.arrays
        # the plan names the healthy system's switches: keep those that still reduce for every member
        live = set(reducing_switches(self.topology, self.group)) if self.topology.faults else None
        names = [name for name in step.in_network if live is None or name in live]
        if not names:
            raise NotApplicable("no switch that reduces reaches every member after the failures")
        switches = np.array([arrays.index[name] for name in names])
        position = np.full(arrays.n_nodes, -1)
        position[self.rows] = np.arange(len(self.rows))
        found = np.zeros(len(arrays.src))
        for member_end, switch_end, share in (
            (arrays.src, arrays.dst, step.up),
            (arrays.dst, arrays.src, step.down),
        ):
            edges = np.flatnonzero(np.isin(switch_end, switches) & (position[member_end] >= 0))
            owner = position[member_end[edges]]
            ports = np.bincount(owner, minlength=len(self.rows))
            if np.any(ports == 0):
                raise NotApplicable("a member has no link to the reducing switches")
            found[edges] = share[owner] / ports[owner]
        latency = 2 * arrays.link_latency_ns.max() + arrays.node_latency_ns[switches].max()
        return self._route(LinkLoads(found, float(latency), 2, len(self.rows)))

    def _explicit(self, step: Step) -> StepRoute:
        """A step whose flows name their paths (``Step.paths``): each path carries its share of its
        flow's bytes on every link of it; the latency is the slowest path's (its links' and the
        devices' it passes through, as :func:`trnsim.routing.shortest.path_latency_ns` counts them)."""
        key = _key(step)
        if key in self._cache:
            return self._cache[key]
        arrays = self.arrays
        if self._edge_index is None:
            ends = zip(arrays.src.tolist(), arrays.dst.tolist(), strict=True)
            self._edge_index = {pair: e for e, pair in enumerate(ends)}
        loads = np.zeros(len(arrays.src))
        latency, longest = 0.0, 0
        for weight, paths in zip(step.weight.tolist(), step.paths, strict=True):
            for path, share in paths:
                try:
                    nodes = [arrays.index[name] for name in path]
                    edges = [self._edge_index[pair] for pair in zip(nodes, nodes[1:], strict=False)]
                except KeyError:
                    if not self.topology.faults:
                        raise
                    # a failure took a link or device the plan's paths take (it was made on the
                    # healthy system): the hardware re-routes the flows on any shortest path
                    plain = Step(step.src, step.dst, step.weight, step.repeat, step.label)
                    self._keep.append(plain)
                    self._cache[key] = route = self.route(plain)
                    return route
                np.add.at(loads, edges, weight * share)
                through = float(arrays.node_latency_ns[nodes[1:-1]].sum())
                latency = max(latency, float(arrays.link_latency_ns[edges].sum()) + through)
                longest = max(longest, len(edges))
        self._cache[key] = route = self._route(LinkLoads(loads, latency, longest, len(step.weight)))
        self._keep.append(step)
        return route

    def _route(self, found: LinkLoads) -> StepRoute:
        """A step's summary from its loads: the busiest link's time per byte and its class."""
        if not found.flows:
            return StepRoute(0.0, 0.0, 0, "-", found.loads)
        arrays = self.arrays
        seconds = found.loads / (arrays.bw_gbps * 1e9)
        busiest = busiest_edge(seconds)
        return StepRoute(
            seconds_per_byte=float(seconds[busiest]),
            latency_ns=float(found.latency_ns),
            max_links=int(found.max_links),
            bottleneck=arrays.edge_cls[arrays.edge[busiest]],
            link_loads=found.loads,
        )
