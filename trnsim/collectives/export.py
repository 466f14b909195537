"""A routed schedule as a JSON document, for engineers who want to implement it.

The document names the group's ranks, then the schedule in order: plain steps, and pipelines as
chains of stages. Flows are listed once per *pattern* (a set of flows that stages reuse at different
weights); a stage refers to patterns and scales them. Each flow carries its source and destination
rank and its share of the collective's size; each pattern names the link classes its flows may use,
and ``routes`` lists the shortest paths each pair takes there (traffic splits evenly over them).
"""

from trnsim.collectives import multidim
from trnsim.collectives.engine import Plan
from trnsim.collectives.schedule import Context, NotApplicable, Pipeline, Step
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
        document.update(_multidim_structure(topology, group))
    return document


def _multidim_structure(topology: Topology, group: list[str]) -> dict:
    try:
        chosen = multidim.plan(Context(topology, group))
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
    import networkx as nx

    if len(pairs) > MAX_ROUTED_PAIRS:
        return f"omitted: {len(pairs):,} pairs of ranks (more than {MAX_ROUTED_PAIRS:,})"

    graph = topology.graph
    views: dict[frozenset | None, object] = {}
    out = []
    for s, d, links in sorted(pairs, key=lambda x: (x[0], x[1], sorted(x[2] or []))):
        if links not in views:
            views[links] = (
                graph
                if links is None
                else nx.subgraph_view(
                    graph, filter_edge=lambda u, v, links=links: graph[u][v]["cls"] in links
                )
            )
        paths, total = [], 0
        for path in nx.all_shortest_paths(views[links], group[s], group[d]):
            total += 1
            if len(paths) < MAX_PATHS_PER_PAIR:
                paths.append(path)
        out.append(
            {
                "src": s,
                "dst": d,
                "link_classes": sorted(links) if links else "any",
                "paths_total": total,
                "paths": paths,
            }
        )
    return out
