"""Replay an exported schedule (``trnsim-schedule/2``): its time at any size, from the document.

Each pattern's link loads come from its listed paths (a flow's share times each path's share, on
every link of the path; the path's latency is its links' plus the devices it passes through) or,
for a pattern routed by rule, from :mod:`trnsim.routing` on the document's system (``sku`` with its
``overrides``). The items are then costed by the model's own formula (:mod:`trnsim.model.cost`:
plain steps one after another, pipelines at the best chunk count) with the document's ``cost``.
"""

from types import SimpleNamespace

import numpy as np

from trnsim.errors import UsageError
from trnsim.model.busiest import busiest_edge
from trnsim.model.cost import PipelineCost, StepCost
from trnsim.model.router import StepRoute


class Replay:
    """A schedule document, routed and ready to cost at any size."""

    def __init__(self, document: dict, where: str = "the schedule"):
        if document.get("format") != "trnsim-schedule/2":
            raise UsageError(f"{where}: expected format trnsim-schedule/2, got {document.get('format')!r}")
        graph = document["graph"]
        links = graph["links"]
        self.bw_bps = np.array([link[3] for link in links]) * 1e9
        self._latency = np.array([link[4] for link in links])
        self._node_latency = np.array(graph["node_latency_ns"])
        self._edge = {(link[0], link[1]): e for e, link in enumerate(links)}
        self._router = None
        self.document, self.where = document, where
        cost = document["cost"]
        self.alpha_ns, self.fixed_us = cost["alpha_ns"], cost["fixed_us"]
        self.chunking = (cost["max_chunks"], cost["min_chunk_bytes"])
        self.units = [self._unit(pattern) for pattern in document["patterns"]]
        self.items = [self._item(item) for item in document["items"]]

    def time_us(self, size: float) -> float:
        """The schedule's time in microseconds at a collective of ``size`` bytes."""
        return self.fixed_us + sum(item.time_us(size) for item in self.items)

    def _route(self, loads: np.ndarray, latency: float, links: int) -> StepRoute:
        seconds = loads / self.bw_bps
        busiest = busiest_edge(seconds) if len(seconds) else 0
        spb = float(seconds[busiest]) if len(seconds) else 0.0
        return StepRoute(spb, latency, links, self.document["graph"]["links"][busiest][2], loads)

    def _unit(self, pattern: dict) -> tuple[SimpleNamespace, StepRoute]:
        """A pattern's flows at unit scale, and their route."""
        step = SimpleNamespace(unit=None, scale=1.0, repeat=1)
        routes = pattern["routes"]
        if "paths" not in routes:
            return step, self._ruled(pattern)
        loads = np.zeros(len(self.bw_bps))
        latency, longest = 0.0, 0
        for (_, _, share), paths in zip(pattern["flows"], routes["paths"], strict=True):
            for path, weight in paths:
                edges = [self._edge[u, v] for u, v in zip(path, path[1:], strict=False)]
                np.add.at(loads, edges, share * weight)
                through = float(self._node_latency[path[1:-1]].sum()) if len(path) > 2 else 0.0
                latency = max(latency, float(self._latency[edges].sum()) + through)
                longest = max(longest, len(edges))
        return step, self._route(loads, latency, longest)

    def _ruled(self, pattern: dict) -> StepRoute:
        """A pattern routed by rule: trnsim.routing on the document's system."""
        from trnsim.collectives.schedule import Step
        from trnsim.model.router import Router
        from trnsim.routing.policy import RoutingPolicy
        from trnsim.topology.load import load_topology

        if self._router is None:
            document = self.document
            topology = load_topology(document["sku"], overrides=list(document.get("overrides", [])))
            policy = RoutingPolicy(document["routing"]["policy"], document["routing"]["relay"])
            self._router = Router(topology, list(document["ranks"]), policy)
        flows = np.array(pattern["flows"], dtype=float).reshape(-1, 3)
        links = None if pattern["link_classes"] == "any" else frozenset(pattern["link_classes"])
        if pattern["routes"].get("rule") == "in-network":
            step = Step.through_switches(pattern["switches"], pattern["up"], pattern["down"])
        elif pattern.get("all_pairs"):
            step = Step.everyone(pattern["all_pairs"], float(flows[0, 2]))
        else:
            step = Step(flows[:, 0].astype(np.int64), flows[:, 1].astype(np.int64), flows[:, 2])
        if links is not None:
            step = Step(step.src, step.dst, step.weight, all_pairs=step.all_pairs, links=links)
        return self._router.route(step)

    def _stage_step(self, entry: dict):
        unit, route = self.units[entry["pattern"]]
        scale, repeat = entry["scale"], entry["repeat"]
        step = SimpleNamespace(unit=unit, scale=scale, repeat=repeat)
        scaled = StepRoute(
            route.seconds_per_byte * scale,
            route.latency_ns,
            route.max_links,
            route.bottleneck,
            route.link_loads * scale,
        )
        return step, scaled

    def _item(self, item: dict):
        if item["kind"] == "step":
            step, route = self._stage_step(item)
            return StepCost(step, route, self.alpha_ns)
        chains = [
            [[self._stage_step(entry) for entry in stage] for stage in chain] for chain in item["chains"]
        ]
        return PipelineCost(chains, self.alpha_ns, self.bw_bps, *self.chunking)


def replay_time_us(document: dict, sizes: list[float], where: str = "the schedule") -> list[float]:
    """The document's time at each size (microseconds), as the model costs it."""
    replay = Replay(document, where)
    return [replay.time_us(size) for size in sizes]
