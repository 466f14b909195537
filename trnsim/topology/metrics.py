"""Link statistics of a built topology: bandwidth per chip, link classes, switch roles, cut bandwidths,
switches that reduce in the network.

Hop statistics need shortest paths and live in :mod:`trnsim.routing.hops`.
"""

from collections import Counter

from trnsim.topology.graph import Topology


def chip_bandwidth_gbps(topology: Topology, raw: bool = False) -> dict[str, float]:
    """Scale-up bandwidth per chip (per direction, all of its links); kept in the topology's cache.

    Effective (after link efficiency) by default; ``raw=True`` gives lanes x lane rate.
    """
    cached = topology.cache.chip_bw_gbps.get(raw)
    if cached is not None:
        return cached
    incident = topology.incident
    field = "raw_bw_gbps" if raw else "bw_gbps"
    topology.cache.chip_bw_gbps[raw] = cached = {
        chip: round(sum(data.get(field, data["bw_gbps"]) for data in incident[chip]), 9)
        for chip in topology.chips
    }
    return cached


def device_bandwidth_gbps(topology: Topology, raw: bool = False) -> dict[str, float]:
    """Per physical chip, the bandwidth of its links to other devices (per direction).

    Equal to :func:`chip_bandwidth_gbps` unless chips host several ranks; then a chip's on-chip
    links to its own ranks do not count.
    """
    if topology.spec.chip.ranks == 1:
        return chip_bandwidth_gbps(topology, raw)
    field = "raw_bw_gbps" if raw else "bw_gbps"
    hubs = {data["chip"] for data in topology.nodes.values() if "chip" in data}
    total = dict.fromkeys(sorted(hubs), 0.0)
    for (u, v), data in topology.links.items():
        if data["medium"] == "onchip":
            continue
        for end in (u, v):
            if end in total:
                total[end] += data.get(field, data["bw_gbps"])
    return {hub: round(bw, 9) for hub, bw in total.items()}


def link_classes(topology: Topology) -> list[dict]:
    """Links grouped by class: count of links, lanes and bandwidth per link, total bandwidth."""
    groups: dict[tuple, dict] = {}
    for data in topology.links.values():
        per_link_bw = data["bw_gbps"] / data["parallel"]
        raw_bw = data.get("raw_bw_gbps", data["bw_gbps"]) / data["parallel"]
        key = (data["cls"], data["medium"], data["lanes"] // data["parallel"], round(per_link_bw, 6))
        group = groups.setdefault(
            key,
            {
                "cls": data["cls"],
                "medium": data["medium"],
                "links": 0,
                "lanes_per_link": key[2],
                "raw_bw_gbps_per_link": raw_bw,
                "efficiency": data.get("efficiency", 1.0),
                "bw_gbps_per_link": per_link_bw,
                "total_bw_gbps": 0.0,
            },
        )
        group["links"] += data["parallel"]
        group["total_bw_gbps"] += data["bw_gbps"]
    return sorted(groups.values(), key=lambda g: (g["cls"], -g["bw_gbps_per_link"]))


def switch_roles(topology: Topology) -> list[dict]:
    """Switch chips grouped by role and model (chips that host several ranks are not switches)."""
    counts = Counter(
        (data["role"], data["model"])
        for data in topology.nodes.values()
        if data["kind"] == "switch" and data["role"] != "chip"
    )
    return [{"role": role, "model": model, "count": count} for (role, model), count in sorted(counts.items())]


def reducing_switches(topology: Topology, group: list[str]) -> list[str]:
    """The switches that reduce in the network and that every member of ``group`` reaches directly.

    A switch reduces when its model says so (``switch_models.<model>.reduction``); in-network
    reduction (NVLS, SHARP) needs every member on a direct link to it, so a failed link between a
    member and a switch takes that switch out for any group holding the member.

    Parameters
    ----------
    topology : Topology
        The built system (after any failures).
    group : list of str
        Member chips.

    Returns
    -------
    list of str
        Switch names, in the topology's node order (empty on a fabric without reducing switches).
    """
    models = topology.spec.switch_models
    out = []
    for name, data in topology.nodes.items():
        model = models.get(data.get("model")) if data["kind"] == "switch" else None
        if model is not None and model.reduction and all(topology.link(m, name) for m in group):
            out.append(name)
    return out


def cut_bandwidth_gbps(topology: Topology, side: frozenset[str]) -> float:
    """Bandwidth (per direction) of the links with exactly one end in ``side``."""
    total = sum(data["bw_gbps"] for (u, v), data in topology.links.items() if (u in side) != (v in side))
    return round(total, 9)


def cut_bandwidths(topology: Topology) -> dict[str, float]:
    """Every natural cut's bandwidth (per direction), kept in the topology's cache.

    The per-node cuts are disjoint, so one pass over the links serves all of them: a fabric of
    thousands of trays costs one pass, not one per tray.
    """
    if topology.cache.cut_bw_gbps is not None:
        return topology.cache.cut_bw_gbps
    owner: dict[str, str] = {}
    result: dict[str, float] = {}
    for name, side in topology.cuts.items():
        if name.startswith("node-"):
            result[name] = 0.0
            owner.update(dict.fromkeys(side, name))
    for (u, v), data in topology.links.items():
        a, b = owner.get(u), owner.get(v)
        if a != b:
            for name in (a, b):
                if name is not None:
                    result[name] += data["bw_gbps"]
    for name, side in topology.cuts.items():
        result[name] = cut_bandwidth_gbps(topology, side) if name not in result else round(result[name], 9)
    topology.cache.cut_bw_gbps = result
    return result


def natural_cuts(topology: Topology, per_node: bool = False) -> list[dict]:
    """The SKU's natural cuts with their bandwidth: rack halves, torus halves per axis, switch planes,
    and (with ``per_node``) each node with its on-node switches against the rest."""
    return [
        {"cut": name, "bw_gbps": bw}
        for name, bw in cut_bandwidths(topology).items()
        if per_node or not name.startswith("node-")
    ]


# the latency fields of the alpha-beta model, in the order ``topo show`` lists them, with what each is
LATENCY_FIELDS = {
    "step_ns": "per step (alpha)",
    "collective_ns": "per collective call",
    "link_ns": "per link",
    "relay_ns": "per relaying chip",
    "switch_ns": "per switch",
    "node_switch_ns": "per on-node switch",
}


def is_assumption(source: str) -> bool:
    """Whether a ``source:`` text names its figures an assumption (the catalog's convention: the
    word ``assumption`` in the section's source)."""
    return "assumption" in source.lower()


def last_edit(topology: Topology, keypath: str) -> str | None:
    """The last what-if edit (``--set`` or a calibration file's) of ``keypath`` or of a section
    holding it, None when the file's value stands."""
    for edit in reversed(topology.overrides):
        key = edit.partition("=")[0].strip()
        if keypath == key or keypath.startswith(f"{key}."):
            return edit
    return None


def basis(topology: Topology, keypath: str, source: str) -> str:
    """What a parameter's value rests on: ``edited`` (a what-if edit set it), ``assumption`` (its
    section's ``source`` says so), ``cited`` (a source that names no assumption) or ``no source``."""
    if last_edit(topology, keypath) is not None:
        return "edited"
    if not source:
        return "no source"
    return "assumption" if is_assumption(source) else "cited"


def model_parameters(topology: Topology) -> list[dict]:
    """The latency and link-efficiency parameters of the model, each with its section's source.

    Returns
    -------
    list of dict
        ``key`` (the ``--set`` path), ``value``, ``unit`` (``ns`` or ``share``), ``what``, ``basis``
        (see :func:`basis`), ``source`` (the section's text in the file) and ``edit`` (the edit that
        set it, or None).
    """
    spec = topology.spec
    latency, efficiency = spec.latency, spec.efficiency
    rows = [
        (f"latency.{name}", getattr(latency, name), "ns", what, latency.source)
        for name, what in LATENCY_FIELDS.items()
    ]
    rows.append(("efficiency.default", efficiency.default, "share", "of raw link rate", efficiency.source))
    rows += [
        (f"efficiency.classes.{cls}", share, "share", f"of raw rate, {cls} links", efficiency.source)
        for cls, share in efficiency.classes.items()
    ]
    return [
        {
            "key": key,
            "value": value,
            "unit": unit,
            "what": what,
            "basis": basis(topology, key, source),
            "source": source,
            "edit": last_edit(topology, key),
        }
        for key, value, unit, what, source in rows
    ]


def assumed_sections(topology: Topology) -> dict[str, str]:
    """Every section of the file whose ``source`` names an assumption, by its key path (``routing``,
    ``switched.switch_fabric``, ``torus.axes.z``), with that source text."""
    import msgspec

    found: dict[str, str] = {}

    def walk(node, path: str) -> None:
        if isinstance(node, msgspec.Struct):
            source = getattr(node, "source", "")
            if path and source and is_assumption(source):
                found[path] = source
            for name in node.__struct_fields__:
                if name != "source":
                    walk(getattr(node, name), f"{path}.{name}" if path else name)
        elif isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{path}.{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{path}.{getattr(value, 'name', index)}")

    walk(topology.spec, "")
    return found
