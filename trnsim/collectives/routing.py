"""Route a schedule's steps over the graph and summarise each step's cost per byte.

Flows follow the routing policy (:mod:`trnsim.routing.policy`): split evenly over all shortest paths
(``ecmp``), or one path each (``single``, ``hash``); a step pinned to some link classes
(``Step.links``) is routed the same way over the subgraph of those classes alone. A step costs its
path latency (the largest over its flows' paths) plus, per byte of collective size, the time of its
busiest directed link: bytes on that link / the link's bandwidth.

Under ECMP, link loads are computed one of three ways, by the step's shape:

* sparse steps (a ring, a shift, a hypercube exchange): per flow, edge ``u -> v`` carries
  ``w sigma_s(u) sigma_t(v) / sigma_s(t)`` when it lies on a shortest ``s -> t`` path; many flows and
  steps are handled in one vectorised pass;
* translation-invariant steps on a wrapped torus (every chip sends the same pattern): chip 0's loads
  summed over each edge's orbit; on a large fabric with automorphisms found from its node names
  (:func:`trnsim.routing.symmetry.name_automorphisms`), every member to every other likewise from
  one member per orbit;
* other dense steps: the per-source accumulation of :func:`trnsim.routing.ecmp.ecmp_loads`.

Under ``single`` and ``hash`` every flow is walked on its one path (:mod:`trnsim.routing.walk`).

On a large wrapped torus the router runs one BFS, from chip 0, and reads every other source's
distances, path counts and latencies off it by translation.
"""

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from trnsim.collectives.schedule import NotApplicable, Step
from trnsim.errors import UsageError
from trnsim.routing.ecmp import ecmp_loads, pair_loads
from trnsim.routing.hashed import route_hashed
from trnsim.routing.kernels import COMPILED_FROM
from trnsim.routing.kernels import bfs_all as compiled_bfs
from trnsim.routing.kernels import ecmp_demand_loads as compiled_loads
from trnsim.routing.kernels import flow_loads as compiled_flow_loads
from trnsim.routing.policy import Routing, routing_of
from trnsim.routing.shortest import BFS, GraphArrays, bfs, graph_arrays, path_latency_ns, transit_mask
from trnsim.routing.single import route_single
from trnsim.routing.symmetry import edge_image, torus_symmetry
from trnsim.topology.builders import RANK_CLASS
from trnsim.topology.graph import Topology

# a step with more flows than this share of all ordered pairs is dense
_DENSE_SHARE = 0.25
# single-path routing walks every flow: refuse a step of more flow-links than this
_WALK_LIMIT = 50_000_000
# tori at least this large are routed from one BFS and translations
_SYMMETRY_FROM = 512
# with the compiled kernels, flows are walked one by one where paths are at most this many links
_SHORT_PATHS = 8


@dataclass(frozen=True)
class StepRoute:
    """What one step costs, independent of the collective's size."""

    seconds_per_byte: float  # busiest link's seconds per byte of collective size
    latency_ns: float  # largest path latency among the step's flows
    max_links: int  # longest shortest path (in links) among the step's flows
    bottleneck: str  # class of the busiest link
    link_loads: np.ndarray  # bytes per directed edge per byte of collective size


@dataclass(frozen=True)
class MemberOrbits:
    """The group's orbits under some automorphisms of the graph (:attr:`Router.member_orbits`)."""

    reps: np.ndarray  # one member per orbit (group positions)
    sizes: np.ndarray  # members per orbit
    edge_orbit: np.ndarray  # orbit id (0..k-1) per directed edge

    def averaged(self, loads: np.ndarray) -> np.ndarray:
        """Loads averaged over each directed edge's orbit."""
        total = np.bincount(self.edge_orbit, weights=loads)
        return (total / np.bincount(self.edge_orbit))[self.edge_orbit]


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


def routing_work(topology: Topology, group: list[str]) -> int:
    """What routing ``group`` costs, in the units of :data:`trnsim.limits.ROUTING`.

    A BFS from every member touches every device and directed link; a whole wrapped torus large
    enough to be routed by translation keeps only its group x devices matrices.
    """
    devices = len(topology.nodes)
    if len(group) == topology.n_ranks >= _SYMMETRY_FROM and torus_symmetry(topology) is not None:
        return len(group) * devices
    return len(group) * (devices + 2 * len(topology.links))


def _scaled(route: StepRoute, factor: float) -> StepRoute:
    return replace(
        route, seconds_per_byte=route.seconds_per_byte * factor, link_loads=route.link_loads * factor
    )


def _key(step: Step) -> int:
    # steps are immutable and kept alive by their plans; a schedule that repeats a step repeats the object
    return id(step)


class Router:
    """Routes steps for one group on one topology, caching BFS results and identical steps."""

    def __init__(
        self,
        topology: Topology,
        group: list[str],
        arrays: GraphArrays | None = None,
        routing: Routing | None = None,
        seed: int = 0,
        partitioned: bool = False,
    ):
        # partitioned: the graph falls apart into parts that each hold some members (the subgraph of
        # some link classes); flows never leave their part, so unreachable pairs are expected
        self.partitioned = partitioned
        restricted = arrays is not None
        arrays = self.arrays = arrays if restricted else graph_arrays(topology)
        self.topology = topology
        self.group = group
        self.routing = routing = routing or routing_of(topology.spec)
        self.seed = seed
        self.transit = transit_mask(arrays, routing.relay)
        self.rows = np.asarray([arrays.index[chip] for chip in group], dtype=np.int64)
        self._cache: dict[int, StepRoute] = {}
        self._keep: list[Step] = []  # the cache is keyed by identity: keep the steps alive
        self._pinned: dict[frozenset[str], list[tuple[Router, np.ndarray, np.ndarray]]] = {}
        symmetry = (
            None if restricted or routing.policy != "ecmp" or not routing.relay else torus_symmetry(topology)
        )
        self.symmetry = symmetry if symmetry is not None and topology.n_ranks >= _SYMMETRY_FROM else None
        self.compiled = len(self.rows) * (arrays.n_nodes + len(arrays.src)) >= COMPILED_FROM
        if self.symmetry is None and self.compiled:
            # one source at a time at compiled speed; no DAG is kept (loads are recomputed per step)
            self.dist, self.sigma, self.latency = compiled_bfs(
                arrays, self.rows, self.transit, columns=self.rows
            )
        elif self.symmetry is None:
            self.dist, self.sigma = self.bfs.dist, self.bfs.sigma
            self.latency = path_latency_ns(arrays, self.bfs)[:, self.rows]
        else:
            base = self.base_bfs
            self.dist = self.symmetry.shifted(base.dist[0], self.rows)
            self.sigma = self.symmetry.shifted(base.sigma[0], self.rows)
            self.latency = self.symmetry.shifted(path_latency_ns(arrays, base)[0], self.rows)[:, self.rows]
        among = self.dist[:, self.rows]
        if not partitioned and np.any(among < 0):
            a, b = np.argwhere(among < 0)[0]
            message = f"{group[a]} cannot reach {group[b]}" + (
                " when only switches forward traffic (routing without relay)" if not routing.relay else ""
            )
            if restricted:
                raise NotApplicable(message)
            raise UsageError(
                f"{topology.where}: {message}; allow chips to relay (--routing {routing.policy},relay)"
            )
        # the narrowest integers that hold a sum of two distances: the on-path test is memory-bound
        self._dist = self.dist.astype(np.int8 if self.dist.max() < 60 else np.int16)

    def with_seed(self, seed: int) -> "Router":
        """The same router with another hash seed (distances shared, routes not)."""
        other = object.__new__(Router)
        other.__dict__.update(self.__dict__)
        other.seed, other._cache, other._keep, other._pinned = seed, {}, [], {}
        other._base = self  # pinned parts come from the base router, re-seeded (their BFS is shared)
        return other

    @cached_property
    def bfs(self) -> BFS:
        """A BFS from every group member (computed only when a step needs it)."""
        return bfs(self.arrays, self.rows, self.transit)

    @cached_property
    def base_bfs(self) -> BFS:
        return bfs(self.arrays, np.array([0]))

    @cached_property
    def max_links(self) -> int:
        """The fewest links between the group's farthest two members."""
        return int(self.dist[:, self.rows].max())

    @cached_property
    def member_orbits(self) -> "MemberOrbits | None":
        """Symmetry beyond tori: under the automorphisms that node names suggest and the graph
        confirms (:func:`trnsim.routing.symmetry.name_automorphisms`, preserving bandwidths,
        latencies, link classes, which nodes relay, and the group), one member per orbit (positions
        in the group), each orbit's size, and an orbit id per directed edge; None when none is found.
        ECMP loads of a demand the automorphisms preserve (every member to every other) are then the
        representatives' loads, weighted by orbit size and averaged over each edge's orbit."""
        from trnsim.routing.symmetry import name_automorphisms, orbits

        arrays = self.arrays
        if self.routing.policy != "ecmp" or self.partitioned:
            return None
        member = np.zeros(arrays.n_nodes, dtype=np.int64)
        member[self.rows] = 1
        _, latency = np.unique(arrays.node_latency_ns, return_inverse=True)
        chip = np.arange(arrays.n_nodes) < arrays.n_chips
        relays = np.ones(arrays.n_nodes, dtype=np.int64) if self.transit is None else self.transit
        node_key = ((latency.ravel() * 2 + relays) * 2 + chip) * 2 + member
        _, cls = np.unique(np.asarray(arrays.edge_cls)[arrays.edge], return_inverse=True)
        rows = np.stack([arrays.bw_gbps, arrays.link_latency_ns, cls.ravel()], axis=1)
        _, edge_key = np.unique(np.round(rows, 9), axis=0, return_inverse=True)
        edge_key = edge_key.ravel()
        perms = name_automorphisms(arrays.nodes, arrays.src, arrays.dst, edge_key, node_key)
        if not perms:
            return None
        label = orbits(perms, arrays.n_nodes)[self.rows]
        _, reps, sizes = np.unique(label, return_index=True, return_counts=True)
        edge_perms = [edge_image(perm, arrays.src, arrays.dst, edge_key) for perm in perms]
        edge_orbit = np.unique(orbits(edge_perms, len(arrays.src)), return_inverse=True)[1].ravel()
        return MemberOrbits(reps, sizes.astype(float), edge_orbit)

    def route(self, step: Step) -> StepRoute:
        """Summarise one step (cached by its flows)."""
        return self.route_all([step])[0]

    def route_all(self, steps: list[Step]) -> list[StepRoute]:
        """Summarise many steps, routing the sparse ones together in vectorised chunks."""
        if any(step.in_network for step in steps):
            special = {id(step): self._in_network(step) for step in steps if step.in_network}
            plain = [step for step in steps if not step.in_network]
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
        p = len(self.rows)
        pending = {}
        for step in steps:
            key = _key(step)
            if key not in self._cache and key not in pending:
                pending[key] = step
                self._keep.append(step)
        sparse = []
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
        if self.routing.policy != "ecmp":
            walked = list(pending.values())
            for step, route in zip(walked, self._walked_summaries(walked), strict=True):
                self._cache[_key(step)] = route
            return [self._cache[_key(step)] for step in steps]
        for key, step in pending.items():
            if step.all_pairs:
                self._cache[key] = self._all_pairs_summary(step)
                continue
            invariant = self._translated_loads(step)
            if invariant is not None:
                self._cache[key] = self._summary(step, invariant)
            elif len(step.src) <= _DENSE_SHARE * p * (p - 1) and not (
                self.partitioned and self.compiled and len(step.src) > 2 * p
            ):  # in a graph of small parts, many flows per member are dense within the parts
                sparse.append((key, step))
        for (key, step), loads in zip(sparse, self._pair_loads([s for _, s in sparse]), strict=True):
            self._cache[key] = self._summary(step, loads)
        for key, step in pending.items():
            if key not in self._cache:
                self._cache[key] = self._summary(step, self._dense_loads(step))
        return [self._cache[_key(step)] for step in steps]

    def _pinned_parts(self, links: frozenset[str]) -> tuple["Router", np.ndarray, np.ndarray]:
        """The subgraph of ``links``: a router over the nodes of its parts that hold group members
        (all members at once, each part routed within itself), the directed edges' indices in the
        whole graph, and each member's part (-1: no link of those classes).

        One router serves every part: a BFS from a member only reaches its own part, so routing all
        parts together costs the parts' sizes, not the whole graph's (a tray's switches, not the
        rack's), without one router per part.
        """
        arrays = self.arrays
        # on-chip links are part of every class: a rank reaches its chip's links through them
        allowed = np.fromiter((cls in links or cls == RANK_CLASS for cls in arrays.edge_cls), dtype=bool)
        kept = np.nonzero(allowed[arrays.edge])[0]
        src, dst = arrays.src[kept], arrays.dst[kept]
        import scipy.sparse as sp
        from scipy.sparse.csgraph import connected_components

        n = arrays.n_nodes
        joined = sp.csr_array((np.ones(len(src)), (src, dst)), shape=(n, n))
        _, label = connected_components(joined, directed=False)
        member_label = label[self.rows]
        holding = np.isin(label, member_label)
        nodes = np.nonzero(holding)[0]
        edges = kept[holding[src]]
        local = np.full(arrays.n_nodes, -1, dtype=np.int64)
        local[nodes] = np.arange(len(nodes))
        sub = GraphArrays(
            nodes=[arrays.nodes[i] for i in nodes],
            n_chips=int(np.sum(nodes < arrays.n_chips)),
            src=local[arrays.src[edges]],
            dst=local[arrays.dst[edges]],
            edge=arrays.edge[edges],
            bw_gbps=arrays.bw_gbps[edges],
            link_latency_ns=arrays.link_latency_ns[edges],
            node_latency_ns=arrays.node_latency_ns[nodes],
            edge_cls=arrays.edge_cls,
            edge_ends=arrays.edge_ends,
            ids=arrays.node_ids[nodes],
        )
        # a member with no link of these classes is alone in its part (its own label)
        alone = np.bincount(member_label, minlength=arrays.n_nodes)[member_label] == 1
        has_link = np.isin(self.rows, np.r_[src, dst])
        part = np.where(has_link | ~alone, member_label, -1)
        router = Router(self.topology, self.group, sub, self.routing, self.seed, partitioned=True)
        return router, edges, part

    def _pinned_routes(self, steps: list[Step]) -> list[StepRoute]:
        """Route steps pinned to the same link classes over that subgraph, all parts at once, and
        report them on the whole graph."""
        links = steps[0].links
        if links not in self._pinned:
            base = self.__dict__.get("_base")
            if base is not None:
                if links not in base._pinned:
                    base._pinned[links] = base._pinned_parts(links)
                router, edges, part = base._pinned[links]
                self._pinned[links] = (router.with_seed(self.seed), edges, part)
            else:
                self._pinned[links] = self._pinned_parts(links)
        router, edges, part = self._pinned[links]
        plain = []
        for step in steps:
            src, dst, weight = step.flows()
            bad = (part[src] != part[dst]) | (part[src] < 0)
            if len(src) and bad.any():
                first = int(np.argmax(bad))
                raise NotApplicable(
                    f"{self.group[src[first]]} cannot reach {self.group[dst[first]]} "
                    f"over {', '.join(sorted(links))} links alone"
                )
            plain.append(Step(src, dst, weight, step.repeat, step.label))  # free on the subgraph
        results = []
        for step, route in zip(plain, router.route_all(plain), strict=True):
            loads = np.zeros(len(self.arrays.src))
            loads[edges] = route.link_loads
            results.append(self._route(loads, route.latency_ns, route.max_links, len(step.src)))
        return results

    def _in_network(self, step: Step) -> StepRoute:
        """A step through reducing switches: each member's bytes up and down spread evenly over its
        links to them (the switches reduce on the way up and multicast on the way down)."""
        from trnsim.collectives.algorithms import reducing_switches

        arrays = self.arrays
        # the plan names the healthy system's switches: keep those that still reduce for every member
        live = set(reducing_switches(self.topology, self.group)) if self.topology.faults else None
        names = [name for name in step.in_network if live is None or name in live]
        if not names:
            raise NotApplicable("no switch that reduces reaches every member after the failures")
        switches = np.array([arrays.index[name] for name in names])
        position = np.full(arrays.n_nodes, -1)
        position[self.rows] = np.arange(len(self.rows))
        loads = np.zeros(len(arrays.src))
        for member_end, switch_end, share in (
            (arrays.src, arrays.dst, step.up),
            (arrays.dst, arrays.src, step.down),
        ):
            edges = np.flatnonzero(np.isin(switch_end, switches) & (position[member_end] >= 0))
            owner = position[member_end[edges]]
            ports = np.bincount(owner, minlength=len(self.rows))
            if np.any(ports == 0):
                raise NotApplicable("a member has no link to the reducing switches")
            loads[edges] = share[owner] / ports[owner]
        latency = 2 * arrays.link_latency_ns.max() + arrays.node_latency_ns[switches].max()
        return self._route(loads, latency, 2, len(self.rows))

    def _route(self, loads: np.ndarray, latency_ns: float, max_links: int, flows: int) -> StepRoute:
        """A step's summary from its loads: the busiest link's time per byte and its class."""
        if not flows:
            return StepRoute(0.0, 0.0, 0, "-", loads)
        seconds = loads / (self.arrays.bw_gbps * 1e9)
        busiest = busiest_edge(seconds)
        return StepRoute(
            seconds_per_byte=float(seconds[busiest]),
            latency_ns=float(latency_ns),
            max_links=int(max_links),
            bottleneck=self.arrays.edge_cls[self.arrays.edge[busiest]],
            link_loads=loads,
        )

    def _summary(self, step: Step, loads: np.ndarray) -> StepRoute:
        if len(step.src) == 0:
            return self._route(loads, 0.0, 0, 0)
        dst_nodes = self.rows[step.dst]
        latency = self.latency[step.src, step.dst].max()
        return self._route(loads, latency, self.dist[step.src, dst_nodes].max(), len(step.src))

    def _all_pairs_summary(self, step: Step) -> StepRoute:
        """Every member sends the same bytes to every other: no flow list is needed."""
        p = len(self.rows)
        weight = float(step.weight[0])
        if self.symmetry is not None and p == self.symmetry.n:
            demand = np.zeros((1, self.arrays.n_nodes))
            demand[0, 1:p] = weight
            from_zero = ecmp_loads(self.arrays, self.base_bfs, demand)
            orbit = self.symmetry.edge_orbits(self.arrays.src, self.arrays.dst)
            loads = np.bincount(orbit, weights=from_zero)[orbit]
        elif self.compiled and self.member_orbits is not None:
            # one source per orbit, weighted by its orbit's size, its loads averaged over edge orbits
            found = self.member_orbits
            demand = np.zeros((len(found.reps), self.arrays.n_nodes))
            demand[:, self.rows] = weight * found.sizes[:, None]
            demand[np.arange(len(found.reps)), self.rows[found.reps]] = 0.0
            loads = found.averaged(compiled_loads(self.arrays, self.rows[found.reps], self.transit, demand))
        elif self.compiled:
            demand = np.zeros((1, self.arrays.n_nodes))
            demand[0, self.rows] = weight  # every source's own row is left out by the kernel
            loads = compiled_loads(self.arrays, self.rows, self.transit, demand)
        else:
            demand = np.zeros((p, self.arrays.n_nodes))
            demand[:, self.rows] = weight
            demand[np.arange(p), self.rows] = 0.0
            loads = ecmp_loads(self.arrays, self.bfs, demand)
        among = np.ix_(np.arange(p), self.rows)
        return self._route(loads, self.latency.max(), self.dist[among].max(), p * (p - 1))

    def _translated_loads(self, step: Step) -> np.ndarray | None:
        """Loads of a step in which every chip of a wrapped torus sends the same pattern, else None."""
        sym = self.symmetry
        p = len(self.rows)
        if sym is None or p != sym.n or len(step.src) == 0 or len(step.src) % p:
            return None
        per_source = np.bincount(step.src, minlength=p)
        if not np.all(per_source == per_source[0]):
            return None
        src, dst = self.rows[step.src], self.rows[step.dst]
        offsets = sym.offset(src, dst)
        order = np.lexsort((step.weight, offsets, src))
        k = per_source[0]
        pattern_offsets = offsets[order].reshape(p, k)
        pattern_weights = step.weight[order].reshape(p, k)
        if not (
            np.all(pattern_offsets == pattern_offsets[0]) and np.all(pattern_weights == pattern_weights[0])
        ):
            return None
        demand = np.zeros((1, self.arrays.n_nodes))
        np.add.at(demand[0], pattern_offsets[0], pattern_weights[0])
        from_zero = ecmp_loads(self.arrays, self.base_bfs, demand)
        orbit = sym.edge_orbits(self.arrays.src, self.arrays.dst)
        return np.bincount(orbit, weights=from_zero)[orbit]

    def _dense_loads(self, step: Step) -> np.ndarray:
        demand = np.zeros((len(self.rows), self.arrays.n_nodes))
        np.add.at(demand, (step.src, self.rows[step.dst]), step.weight)
        if self.compiled:
            return compiled_loads(self.arrays, self.rows, self.transit, demand)
        return ecmp_loads(self.arrays, self.bfs, demand)

    def _pair_loads(self, steps: list[Step]) -> list[np.ndarray]:
        """ECMP loads of several sparse steps, flow by flow (:func:`trnsim.routing.ecmp.pair_loads`)."""
        if not steps:
            return []
        flows = (
            np.concatenate([s.src for s in steps]),
            np.concatenate([s.dst for s in steps]),
            np.concatenate([s.weight for s in steps]),
            np.repeat(np.arange(len(steps)), [len(s.src) for s in steps]),
        )
        if self.compiled and (self.partitioned or self.max_links <= _SHORT_PATHS):
            # many small parts, or short paths: walk each flow's own paths instead of scanning every
            # node per flow
            totals = compiled_flow_loads(
                self.arrays, self.dist, self.sigma, self.rows, flows, len(steps), self.transit
            )
        else:
            totals = pair_loads(
                self.arrays, self._dist, self.sigma, self.rows, flows, len(steps), self.transit
            )
        return list(totals)

    def _walked_summaries(self, steps: list[Step]) -> list[StepRoute]:
        """Route every flow of these steps on one path each (``single`` or ``hash``), all steps in
        one walk."""
        p = len(self.rows)
        parts = []
        for step in steps:
            if step.all_pairs:
                src, dst = (axis.ravel() for axis in np.nonzero(~np.eye(p, dtype=bool)))
                parts.append((src, dst, np.full(len(src), float(step.weight[0]))))
            else:
                parts.append((step.src, step.dst, step.weight))
        counts = [len(src) for src, _, _ in parts]
        total = sum(counts)
        if total * max(int(self.dist[:, self.rows].max()), 1) > _WALK_LIMIT:
            raise NotApplicable(
                f"{total:,} flows are too many to route one by one under --routing {self.routing.label} "
                f"(limit {_WALK_LIMIT:,} flow-links)"
            )
        n_edges = len(self.arrays.src)
        if not total:
            return [StepRoute(0.0, 0.0, 0, "-", np.zeros(n_edges)) for _ in steps]
        src = np.concatenate([s for s, _, _ in parts]).astype(np.int64)
        dst = np.concatenate([d for _, d, _ in parts]).astype(np.int64)
        weight = np.concatenate([w for _, _, w in parts]).astype(float)
        sets = np.repeat(np.arange(len(steps)), counts)
        args = (self.arrays, self.dist, self.rows[src], dst, self.rows[dst], weight)
        if self.routing.policy == "single":
            torus = self.topology.spec.torus
            order = [axis.name for axis in torus.axes] if torus is not None else None
            walked = route_single(*args, transit=self.transit, axis_order=order, sets=sets, n_sets=len(steps))
        else:
            walked = route_hashed(*args, seed=self.seed, transit=self.transit, sets=sets, n_sets=len(steps))
        latency = np.full(len(steps), -np.inf)
        np.maximum.at(latency, sets, walked.latency_ns)
        links = np.zeros(len(steps), dtype=np.int64)
        np.maximum.at(links, sets, walked.links)
        return [self._route(walked.loads[i], latency[i], links[i], count) for i, count in enumerate(counts)]
