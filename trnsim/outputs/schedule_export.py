"""A routed schedule as a JSON document (``trnsim-schedule/2``): what to implement, and enough to
reproduce its time.

The document names the group's ranks, then the schedule in order: plain steps, and pipelines as
chains of stages. Flows are listed once per *pattern* (a set of flows that stages reuse at different
weights); a stage refers to patterns and scales them. Each flow carries its source and destination
rank and its share of the collective's size. Each pattern's ``routes`` gives every path each flow
takes with its share of the flow's bytes, or, where the paths are too many, the routing rule that
generates them (:mod:`trnsim.outputs.schedule_routes`). ``graph`` lists the nodes and directed links
(bandwidth and latency as the model costs them) and ``cost`` the per-step alpha, the fixed cost and
the pipelines' chunk limits, so that :mod:`trnsim.model.replay` reproduces the reported time from the
document alone (loading the system only for patterns routed by rule).

Version 1 listed at most 16 paths per pair and no routes beyond 20,000 pairs, and said traffic split
evenly over the listed paths; its files are refused by the reader (re-export them).
"""

from trnsim.collectives import multidim
from trnsim.collectives.schedule import Context, NotApplicable, Pipeline, Step
from trnsim.model.plan import Plan
from trnsim.model.router import Router
from trnsim.outputs.schedule_routes import PathLister, graph_table
from trnsim.topology.graph import Topology

FORMAT = "trnsim-schedule/2"
FIELDS = {
    "ranks": "the group's chips; flows name them by position in this list (0-based)",
    "patterns": "sets of flows [src, dst, share]: src sends share x size bytes to dst",
    "items": "run in order: a step, or a pipeline whose chains run at once, stage by stage",
    "scale": "a stage sends its pattern's flows with every share times scale",
    "repeat": "how many times the stage's flows are sent one after another",
    "routes": "per pattern: paths[i] lists flow i's paths [nodes, share of its bytes], or rule names "
    "how trnsim.routing spreads the flows (ecmp: evenly over all shortest paths within link_classes)",
    "graph": "nodes (paths name them by index) and directed links [from, to, class, bw_gbps, latency_ns]",
    "cost": "alpha_ns per step, fixed_us per collective, pipelines' max_chunks and min_chunk_bytes",
    "chunks_by_size": "how many chunks the pipelines cut the data into at each size",
    "time_us_by_size": "the time trnsim reported at each size (a replay of this document reproduces it)",
    "program": "the algorithm as data: transfers [round, src, dst, [[block, part]...], reduce, channel]",
}


def schedule_document(topology: Topology, group: list[str], op: str, plan: Plan, sizes: list[int]) -> dict:
    """The JSON-ready document for ``plan`` (``op`` on ``group``), with its chunk count at each size."""
    patterns: dict[int, dict] = {}
    router = Router(topology, group)
    lister = PathLister(topology, group, router)

    def pattern_of(step: Step) -> tuple[int, float]:
        base = step.unit if step.unit is not None else step
        key = id(base)
        if key not in patterns:
            flows = base.flows()
            patterns[key] = {
                "id": len(patterns),
                "label": base.label,
                "link_classes": sorted(base.links) if base.links else "any",
                "all_pairs": int(base.all_pairs),
                "flows": [[int(s), int(d), float(w)] for s, d, w in zip(*flows, strict=True)],
                "routes": lister.routes(base, flows),
            }
            if base.in_network:
                patterns[key].update(
                    switches=list(base.in_network), up=base.up.tolist(), down=base.down.tolist()
                )
        return patterns[key]["id"], step.scale

    def step_entry(step: Step) -> dict:
        pattern, scale = pattern_of(step)
        return {"label": step.label, "pattern": pattern, "scale": scale, "repeat": step.repeat}

    items = []
    for entry in plan.schedule:
        if isinstance(entry, Pipeline):
            chains = [[[step_entry(step) for step in stage] for stage in chain] for chain in entry.chains]
            items.append({"kind": "pipeline", "label": entry.label, "chains": chains})
        else:
            items.append({"kind": "step", **step_entry(entry)})
    document = {
        "format": FORMAT,
        "sku": topology.name,
        "overrides": list(topology.overrides),
        "op": op,
        "algorithm": plan.algorithm,
        "ranks": list(group),
        "fields": FIELDS,
        "routing": {"policy": router.routing.policy, "relay": router.routing.relay},
        "cost": {
            "alpha_ns": plan.alpha_ns,
            "fixed_us": plan.fixed_us,
            "max_chunks": plan.chunking[0],
            "min_chunk_bytes": plan.chunking[1],
        },
        "chunks_by_size": {str(size): plan.chunks(size) for size in sizes},
        "time_us_by_size": {str(size): plan.time_us(size) for size in sizes},
        "items": items,
        "patterns": sorted(patterns.values(), key=lambda p: p["id"]),
        "graph": graph_table(topology),
    }
    if plan.algorithm == "multidim":
        document.update(_multidim_structure(topology, group, op))
    document["program"] = _program(topology, group, op, plan)
    return document


def _program(topology: Topology, group: list[str], op: str, plan: Plan) -> dict | str:
    """The chunk-level program of the plan's algorithm (:meth:`Plan.program`: for the root, traffic
    matrix or unequal blocks it was scheduled for), where it moves the bytes the plan costs."""
    from trnsim.collectives.agreement import agreement
    from trnsim.collectives.formats.trnsim_schedule import program_json

    try:
        program = plan.program(op)
    except NotApplicable as why:
        return f"omitted: {why}"
    if not agreement(program, plan.schedule).ok:
        return "omitted: the program does not move the bytes this schedule costs"
    return program_json(program)


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
