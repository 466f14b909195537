"""A routed schedule as a JSON document, for engineers who want to implement it.

The document names the group's ranks, then the schedule in order: plain steps, and pipelines as
chains of stages. Flows are listed once per *pattern* (a set of flows that stages reuse at different
weights); a stage refers to patterns and scales them. Each flow carries its source and destination
rank and its share of the collective's size; each pattern names the link classes its flows may use,
and ``routes`` lists the shortest paths each pair takes there (traffic splits evenly over them).
"""

from trnsim.collectives import multidim
from trnsim.collectives.schedule import Context, NotApplicable, Pipeline, Step
from trnsim.model.plan import Plan
from trnsim.topology.graph import Topology

FORMAT = "trnsim-schedule/1"
# paths listed per pair of ranks (the count is always given); a switched fabric has up to ten
MAX_PATHS_PER_PAIR = 16
# beyond this many distinct pairs (an all-pairs step on a large group), paths are left out
MAX_ROUTED_PAIRS = 20_000


def schedule_document(topology: Topology, group: list[str], op: str, plan: Plan, sizes: list[int]) -> dict:
    """The JSON-ready document for ``plan`` (``op`` on ``group``), with its chunk count at each size."""
    patterns: dict[int, dict] = {}
    pair_classes: set[tuple[int, int, frozenset | None]] = set()

    def pattern_of(step: Step) -> tuple[int, float]:
        base = step.unit if step.unit is not None else step
        key = id(base)
        if key not in patterns:
            src, dst, weight = base.flows()
            patterns[key] = {
                "id": len(patterns),
                "label": base.label,
                "link_classes": sorted(base.links) if base.links else "any",
                "flows": [[int(s), int(d), float(w)] for s, d, w in zip(src, dst, weight, strict=True)],
            }
            pair_classes.update((int(s), int(d), base.links) for s, d in zip(src, dst, strict=True))
        return patterns[key]["id"], step.scale

    def step_entry(step: Step) -> dict:
        pattern, scale = pattern_of(step)
        return {"label": step.label, "pattern": pattern, "scale": scale, "repeat": step.repeat}

    items = []
    for entry in plan.schedule:
        if isinstance(entry, Pipeline):
            items.append(
                {
                    "kind": "pipeline",
                    "label": entry.label,
                    "chains": [
                        [[step_entry(step) for step in stage] for stage in chain] for chain in entry.chains
                    ],
                }
            )
        else:
            items.append({"kind": "step", **step_entry(entry)})
    document = {
        "format": FORMAT,
        "sku": topology.name,
        "op": op,
        "algorithm": plan.algorithm,
        "ranks": list(group),
        "fields": {
            "ranks": "the group's chips; flows name them by position in this list (0-based)",
            "patterns": "sets of flows [src, dst, share]: src sends share x size bytes to dst",
            "items": "run in order: a step, or a pipeline whose chains run at once, stage by stage",
            "scale": "a stage sends its pattern's flows with every share times scale",
            "repeat": "how many times the stage's flows are sent one after another",
            "routes": "shortest paths each pair's bytes split evenly over, within its link classes",
            "chunks_by_size": "how many chunks the pipelines cut the data into at each size",
        },
        "chunks_by_size": {str(size): plan.chunks(size) for size in sizes},
        "items": items,
        "patterns": sorted(patterns.values(), key=lambda p: p["id"]),
        "routes": _routes(topology, group, pair_classes),
    }
    if plan.algorithm == "multidim":
        document.update(_multidim_structure(topology, group, op))
    return document


def _multidim_structure(topology: Topology, group: list[str], op: str) -> dict:
    try:
        chosen = multidim.plan(Context(topology.planner, group), op)
    except NotApplicable:
        return {}
    dims = chosen.dims
    return {
        "dimensions": [
            {"name": d.name, "size": d.size, "link_classes": list(d.classes), "coordinate": d.coord.tolist()}
            for d in dims
        ],
        "streams": [
            {
                "order": [dims[i].name for i in s.order],
                "link_classes": [s.classes[i] for i in s.order],
                "weight": s.weight,
            }
            for s in chosen.streams
        ],
    }


def _routes(topology: Topology, group: list[str], pairs) -> list[dict] | str:
    """Each pair's shortest paths within its link classes (one BFS per source and class set)."""
    if len(pairs) > MAX_ROUTED_PAIRS:
        return f"omitted: {len(pairs):,} pairs of ranks (more than {MAX_ROUTED_PAIRS:,})"
    adjacency: dict[frozenset | None, dict[str, list[str]]] = {}
    searches: dict[tuple[int, frozenset | None], tuple[dict, dict]] = {}
    out = []
    for s, d, links in sorted(pairs, key=lambda x: (x[0], x[1], sorted(x[2] or []))):
        if links not in adjacency:
            near: dict[str, list[str]] = {node: [] for node in topology.nodes}
            for (u, v), data in topology.links.items():
                if links is None or data["cls"] in links:
                    near[u].append(v)
                    near[v].append(u)
            adjacency[links] = near
        if (s, links) not in searches:
            searches[s, links] = _search(adjacency[links], group[s])
        parents, counts = searches[s, links]
        paths = _paths(parents, group[s], group[d], MAX_PATHS_PER_PAIR)
        out.append(
            {
                "src": s,
                "dst": d,
                "link_classes": sorted(links) if links else "any",
                "paths_total": counts.get(group[d], 0),
                "paths": paths,
            }
        )
    return out


def _search(near: dict[str, list[str]], source: str) -> tuple[dict, dict]:
    """BFS from ``source``: each device's parents on shortest paths and its number of shortest paths."""
    depth, parents, counts = {source: 0}, {source: []}, {source: 1}
    frontier = [source]
    while frontier:
        following = []
        for node in frontier:
            for other in near[node]:
                if other not in depth:
                    depth[other] = depth[node] + 1
                    parents[other], counts[other] = [], 0
                    following.append(other)
                if depth[other] == depth[node] + 1:
                    parents[other].append(node)
                    counts[other] += counts[node]
        frontier = following
    return parents, counts


def _paths(parents: dict, source: str, target: str, limit: int) -> list[list[str]]:
    """Up to ``limit`` shortest paths from ``source`` to ``target``, in a fixed order."""
    if target not in parents:
        return []
    found: list[list[str]] = []

    def walk(node: str, tail: list[str]) -> None:
        if len(found) >= limit:
            return
        if node == source:
            found.append([source, *reversed(tail)])
            return
        for parent in sorted(parents[node]):
            walk(parent, [*tail, node])

    walk(target, [])
    return found
