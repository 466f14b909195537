"""``trnsim topo``: list, show, hops, path, export, draw and validate topologies."""

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.compat import hidden, renamed
from trnsim.cli.options import (
    CalibrationOption,
    FailOption,
    FormatOption,
    RoutingOption,
    SetOption,
    SkuOption,
    TopologyOption,
    edits,
    load,
    writable,
    write_text,
)
from trnsim.errors import EXIT_USAGE, UsageError
from trnsim.outputs.render import Column, Format, Table, emit, kv_table

app = typer.Typer(
    help="Build topologies from the catalog and print hops, bandwidths and structure.\n\nExamples:\n\n"
    "trnsim topo list\ntrnsim topo show nl72x2\ntrnsim topo path nl72x2 0 78",
    no_args_is_help=True,
)

SkuArgument = Annotated[
    str | None,
    typer.Argument(
        metavar="[SKU]", help="SKU name or alias; or give --sku NAME or --topology FILE.", show_default=False
    ),
]


def _pick_sku(positional: str | None, option: str | None) -> str | None:
    """The SKU given as an argument or as ``--sku`` (the other commands' spelling), not both."""
    if positional is not None and option is not None:
        raise UsageError(f"give the SKU once: {positional!r} as an argument or --sku {option}, not both")
    return option if positional is None else positional


def _check_source(sku: str | None, topology: Path | None) -> None:
    """Refuse a SKU given together with --topology FILE: one topology per command."""
    if sku is not None and topology is not None:
        raise UsageError(
            f"give a SKU or --topology FILE, not both (got SKU {sku!r} and --topology {topology})"
        )


def _load(sku: str | None, topology: Path | None, overrides: list[str] | None):
    if sku is None and topology is None:
        raise UsageError(
            "name a SKU (as an argument or --sku NAME; see `trnsim topo list`) or give --topology FILE"
        )
    _check_source(sku, topology)
    return load(sku, topology, overrides)


def _unit(topology) -> str:
    """What the endpoints are: ranks when chips host several, else chips."""
    return "rank" if topology.spec.chip.ranks > 1 else "chip"


def _counts(topology) -> dict:
    """Chips, ranks, switches and links: the figures every topo command prints (one definition,
    :class:`trnsim.topology.graph.Topology`)."""
    return {
        "chips": topology.n_chips,
        "ranks": topology.n_ranks,
        "ranks_per_chip": topology.ranks_per_chip,
        "switches": topology.n_switches,
        "links": topology.n_links,
    }


def _hops(stats) -> dict:
    return {
        "diameter_links": stats.diameter_links,
        "diameter_hops": stats.diameter_hops,
        "avg_links": stats.avg_links,
        "avg_hops": stats.avg_hops,
        "hop_histogram": {str(k): v for k, v in stats.histogram_hops.items()},
    }


def _summary(topology) -> dict:
    from trnsim.routing import hops
    from trnsim.routing.policy import routing_of
    from trnsim.topology import metrics

    bandwidth = metrics.device_bandwidth_gbps(topology)
    raw = metrics.device_bandwidth_gbps(topology, raw=True)
    stats = hops.hop_stats(topology)
    return {
        "name": topology.name,
        "aliases": list(topology.spec.aliases),
        "description": topology.spec.description,
        "kind": topology.spec.kind,
        "chip": topology.spec.chip.name,
        **_counts(topology),
        "failed": list(topology.faults),
        "chip_bw_gbps": max(bandwidth.values()),
        "chip_bw_min_gbps": min(bandwidth.values()),
        "chip_raw_bw_gbps": max(raw.values()),
        "routing": routing_of(topology.spec).label,
        "routing_source": topology.spec.routing.source,
        # between ranks (the endpoints collectives run on); chip_hops: between physical chips
        "hops_between": _unit(topology) + "s",
        **_hops(stats),
        "chip_hops": _hops(hops.chip_hop_stats(topology) if topology.ranks_per_chip > 1 else stats),
        "source": str(topology.path.name if topology.path else ""),
    }


@app.command("list")
def list_(fmt: FormatOption = Format.table) -> None:
    """List the catalog: name, aliases, chip, chips, switches, kind, per-chip GB/s, source file.

    Examples:

        trnsim topo list
        trnsim topo list --format json
    """
    from trnsim.spec.catalog import catalog_files
    from trnsim.topology import load_topology
    from trnsim.topology.metrics import device_bandwidth_gbps

    rows = []
    for path in catalog_files():
        topology = load_topology(topology=path)
        rows.append(
            {
                "name": topology.name,
                "aliases": list(topology.spec.aliases),
                "chip": topology.spec.chip.name,
                **{k: v for k, v in _counts(topology).items() if k in ("chips", "ranks", "switches")},
                "kind": topology.spec.kind,
                "chip_raw_bw_gbps": max(device_bandwidth_gbps(topology, raw=True).values()),
                "chip_bw_gbps": max(device_bandwidth_gbps(topology).values()),
                "source": f"topologies/{path.name}",
            }
        )
    rows.sort(key=lambda r: (r["chip"], r["kind"] == "switched", r["chips"], r["name"]))
    # aliases are a list in JSON (as in `topo show`); the table, CSV and Markdown views join them
    table_rows = [{**row, "aliases": ", ".join(row["aliases"])} for row in rows]
    table = Table(
        "trnsim catalog",
        [
            Column("name", "name", align="left"),
            Column("aliases", "aliases", align="left", drop_priority=3),
            Column("chip", "chip", align="left", drop_priority=2),
            Column("chips", "chips"),
            Column("ranks", "ranks", drop_priority=4),
            Column("switches", "switches"),
            Column("kind", "topology", align="left"),
            Column("chip_raw_bw_gbps", "raw GB/s per chip", "{:,.0f}"),
            Column("chip_bw_gbps", "effective", "{:,.0f}"),
            Column("source", "file", align="left", drop_priority=5),
        ],
        table_rows,
    )
    emit({"skus": rows}, [table], fmt)


@app.command()
def show(
    sku: SkuArgument = None,
    sku_option: SkuOption = None,
    topology: TopologyOption = None,
    overrides: SetOption = None,
    routing: RoutingOption = None,
    calibration: CalibrationOption = None,
    fail: FailOption = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Chips, switches by role, links by class, per-chip bandwidth, diameter, hop histogram and cuts.

    Examples:

        trnsim topo show nl72x2
        trnsim topo show nl64 --set torus.axes.z.lanes=8
    """
    from trnsim.topology import metrics

    topo = _load(_pick_sku(sku, sku_option), topology, edits(overrides, routing, calibration, fail))
    summary = _summary(topo)
    classes = metrics.link_classes(topo)
    roles = metrics.switch_roles(topo)
    cuts = metrics.natural_cuts(topo)
    node_cuts = [
        c["bw_gbps"] for c in metrics.natural_cuts(topo, per_node=True) if c["cut"].startswith("node-")
    ]
    if node_cuts:
        label = topo.spec.switched.node_label
        cuts.append({"cut": f"one {label} vs the rest (smallest)", "bw_gbps": min(node_cuts)})
    scale_out = topo.spec.scale_out
    from trnsim.topology.trays import trays

    payload = {
        **summary,
        "trays": trays(topo.spec),
        "link_classes": classes,
        "switch_roles": roles,
        "cuts": cuts,
        "parameters": metrics.model_parameters(topo),
        "assumptions": metrics.assumed_sections(topo),
        "scale_out": None
        if scale_out is None
        else {
            "efa_gbit_per_chip": scale_out.efa_gbit_per_chip,
            "efa_bw_gbps": scale_out.efa_gbit_per_chip / 8,
            "efa_latency_ns": scale_out.efa_latency_ns,
        },
    }
    bw = summary["chip_bw_gbps"]
    bw_text = (
        f"{bw:,.1f}"
        if bw == summary["chip_bw_min_gbps"]
        else f"{summary['chip_bw_min_gbps']:,.1f} to {bw:,.1f}"
    )
    items = [
        ("name", topo.name),
        ("aliases", ", ".join(topo.spec.aliases) or "-"),
        ("description", topo.spec.description),
        ("chip", topo.spec.chip.name),
        *([("failed", ", ".join(topo.faults))] if topo.faults else []),
        ("chips", summary["chips"]),
        *(
            [("ranks", f"{summary['ranks']} ({summary['ranks_per_chip']} per chip)")]
            if summary["ranks_per_chip"] > 1
            else []
        ),
        ("switches", summary["switches"]),
        *_tray_items(payload["trays"]),
        ("links", summary["links"]),
        ("GB/s per chip (per direction)", f"{bw_text} effective; {summary['chip_raw_bw_gbps']:,.1f} raw"),
        ("routing", summary["routing"]),
        *_hop_items(summary, topo.ranks_per_chip > 1),
    ]
    if scale_out is not None:
        items.append(
            (
                "EFA scale-out per chip",
                f"{scale_out.efa_gbit_per_chip:g} Gbit/s = "
                f"{scale_out.efa_gbit_per_chip / 8:g} GB/s (not in the scale-up graph)",
            )
        )
    items.append(("file", str(topo.path)))
    tables = [kv_table(topo.name, items)]
    tables.append(
        Table(
            "links by class",
            [
                Column("cls", "class", align="left"),
                Column("medium", "medium", align="left"),
                Column("links", "links"),
                Column("lanes_per_link", "lanes"),
                Column("raw_bw_gbps_per_link", "raw GB/s per link", "{:,.1f}"),
                Column("efficiency", "eff %", lambda v: f"{100 * v:.0f}"),
                Column("bw_gbps_per_link", "GB/s per link", "{:,.1f}"),
                Column("total_bw_gbps", "GB/s total", "{:,.0f}"),
            ],
            classes,
        )
    )
    tables.append(_parameters_table(payload["parameters"], payload["assumptions"]))
    if roles:
        tables.append(
            Table(
                "switches by role",
                [
                    Column("role", "role", align="left"),
                    Column("model", "model", align="left"),
                    Column("count", "count"),
                ],
                roles,
            )
        )
    histogram = [
        {"hops": int(h), "links": int(h) + 1, "pairs": n} for h, n in summary["hop_histogram"].items()
    ]
    tables.append(
        Table(
            f"hop histogram (unordered {_unit(topo)} pairs)",
            [
                Column("hops", "hops"),
                Column("links", "links"),
                Column("pairs", f"{_unit(topo)} pairs", "{:,}"),
            ],
            histogram,
        )
    )
    if cuts:
        tables.append(
            Table(
                "cut bandwidth (per direction)",
                [
                    Column("cut", "cut", align="left"),
                    Column("bw_gbps", "GB/s", "{:,.0f}"),
                ],
                cuts,
            )
        )
    emit(payload, tables, fmt)


def _parameters_table(parameters: list[dict], assumptions: dict[str, str]) -> Table:
    """The latency and efficiency parameters, each marked as the file's source has it (an assumption
    or cited) or as edited; the sources themselves, long, are the footer, which also names the
    file's other sections that hold assumptions."""
    from trnsim.spec.overrides import origin_of

    rows = [
        {
            "key": p["key"],
            "value": f"{p['value']:,.4g} ns" if p["unit"] == "ns" else f"{100 * p['value']:.4g}%",
            "what": p["what"],
            "basis": p["basis"],
        }
        for p in parameters
    ]
    footer = []
    for section in ("latency", "efficiency"):
        source = next((p["source"] for p in parameters if p["key"].startswith(section + ".")), "")
        footer.append(f"{section} source: {source or '(none in the file)'}")
    others = [path for path in assumptions if path not in ("latency", "efficiency")]
    if others:
        footer.append(
            f"assumptions also in: {', '.join(others)} (their source: texts are in the file and in "
            "--format json, under assumptions)"
        )
    for p in parameters:
        if p["edit"] is not None:
            origin = origin_of(p["edit"])
            footer.append(f"{p['key']}: edited by {origin + ' ' if origin else ''}{p['edit'].strip()!r}")
    return Table(
        "model parameters (assumption: the file's source says so; override with --set KEY=VALUE)",
        [
            Column("key", "parameter", align="left"),
            Column("value", "value"),
            Column("what", "what", align="left", drop_priority=1),
            Column("basis", "basis", align="left"),
        ],
        rows,
        footer,
    )


def _hop_items(summary: dict, several: bool) -> list[tuple[str, str]]:
    """Diameter and average, between ranks and between chips when chips host several ranks."""
    levels = [("ranks", summary), ("chips", summary["chip_hops"])] if several else [("", summary)]
    items = []
    for unit, stats in levels:
        suffix = f" (between {unit})" if unit else ""
        diameter = f"{_count(stats['diameter_links'], 'link')} = {_count(stats['diameter_hops'], 'hop')}"
        items.append(("diameter" + suffix, diameter))
        items.append(("average" + suffix, f"{stats['avg_links']:.3f} links = {stats['avg_hops']:.3f} hops"))
    return items


def _tray_items(trays: dict) -> list[tuple[str, str]]:
    """What a compute tray (or server) and a switch tray hold, for ``topo show``."""
    from trnsim.topology.trays import DEFAULT_ASSUMPTION

    items = []
    node = trays.get("node")
    if node is not None:
        held = [_count(node["chips"], "chip")]
        if node["ranks"] != node["chips"]:
            held.append(_count(node["ranks"], "rank"))
        held.append(_count(node["switches"], "switch"))
        label = "compute trays" if node["label"] == "tray" and trays.get("switch") else f"{node['label']}s"
        items.append((label, f"{_how_many(node)}; each {', '.join(held)}"))
    if "switch" in trays:
        tray = trays["switch"]
        if tray is None:
            items.append(("switch trays", f"none: the switches sit on the {node['label']}'s board"))
        else:
            assumed = f" ({DEFAULT_ASSUMPTION})" if tray["assumed"] else ""
            items.append(
                (
                    "switch trays",
                    f"{_how_many(tray)}; each {_count(tray['switches'], 'switch')} ({tray['model']}){assumed}",
                )
            )
    return items


def _how_many(trays: dict) -> str:
    """``18``, or ``18 per rack, 36 in all``."""
    if trays["per_rack"] is None or trays["per_rack"] == trays["count"]:
        return str(trays["count"])
    return f"{trays['per_rack']} per rack, {trays['count']} in all"


class DistanceMetric(str, Enum):
    hops = "hops"
    links = "links"


@app.command()
def hops(
    sku: SkuArgument = None,
    sku_option: SkuOption = None,
    topology: TopologyOption = None,
    overrides: SetOption = None,
    routing: RoutingOption = None,
    calibration: CalibrationOption = None,
    fail: FailOption = None,
    source: Annotated[str | None, typer.Option("--from", help="Rank or chip name to measure from.")] = None,
    matrix: Annotated[bool, typer.Option("--matrix", help="Print the all-pairs matrix.")] = False,
    metric: Annotated[
        DistanceMetric | None,
        typer.Option(
            "--distance",
            help="What --matrix counts: hops (devices passed through; the default) or links (links crossed).",
        ),
    ] = None,
    old_metric: Annotated[DistanceMetric | None, hidden("--metric")] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Hop and link counts from one chip (--from) or for all pairs (histogram, or --matrix).

    Examples:

        trnsim topo hops nl32x2
        trnsim topo hops nl72x2 --from 0
        trnsim topo hops nl16 --matrix --distance links
    """
    from trnsim.routing import hops

    metric = renamed("--metric", "--distance", old_metric, metric) or DistanceMetric.hops
    topo = _load(_pick_sku(sku, sku_option), topology, edits(overrides, routing, calibration, fail))
    if source is not None and matrix:
        raise UsageError("give --from RANK (one chip's distances) or --matrix (all pairs), not both")
    if source is not None:
        origin = _end(topo, source, "--from")
        links = hops.link_distances(topo, [origin])[0]
        rows = [
            {"rank": r, "chip": name, "links": int(links[r]), "hops": max(int(links[r]) - 1, 0)}
            for r, name in enumerate(topo.chips)
        ]
        payload = {"name": topo.name, "from": origin, "from_rank": topo.rank_of[origin], "rows": rows}
        table = Table(
            f"{topo.name}: from rank {topo.rank_of[origin]} ({origin})",
            [
                Column("rank", "rank"),
                Column("chip", "chip", align="left"),
                Column("links", "links"),
                Column("hops", "hops"),
            ],
            rows,
        )
        emit(payload, [table], fmt)
        return
    if matrix:
        _matrix(topo, metric, fmt)
        return
    stats = hops.hop_stats(topo)
    rows = [{"hops": h, "links": h + 1, "pairs": n} for h, n in stats.histogram_hops.items()]
    payload = {
        "name": topo.name,
        "pairs": stats.pairs,
        "diameter_links": stats.diameter_links,
        "diameter_hops": stats.diameter_hops,
        "avg_links": stats.avg_links,
        "avg_hops": stats.avg_hops,
        "hop_histogram": {str(k): v for k, v in stats.histogram_hops.items()},
    }
    table = Table(
        f"{topo.name}: hops over {stats.pairs:,} {_unit(topo)} pairs"
        + (" (a rank's path starts and ends on its chip's on-chip link)" if topo.spec.chip.ranks > 1 else ""),
        [
            Column("hops", "hops"),
            Column("links", "links"),
            Column("pairs", f"{_unit(topo)} pairs", "{:,}"),
        ],
        rows,
        footer=[
            f"diameter {_count(stats.diameter_links, 'link')} = {_count(stats.diameter_hops, 'hop')}; average "
            f"{stats.avg_links:.3f} links = {stats.avg_hops:.3f} hops"
        ],
    )
    emit(payload, [table], fmt)


def _matrix(topo, metric: "DistanceMetric", fmt: Format) -> None:
    """``topo hops --matrix``: every format holds all ranks x ranks but a table, which builds only
    the columns its width can show; either is refused beyond :data:`trnsim.limits.MATRIX_CELLS`."""
    from trnsim import limits
    from trnsim.outputs.render import available_width
    from trnsim.routing import hops

    n = topo.n_ranks
    width = available_width() if fmt == Format.table else None
    shown = n if width is None else _columns_that_fit(n, width)
    limits.MATRIX_CELLS.check(n * shown, f"{topo.where}: the --matrix would print")
    # distances are symmetric (every link runs both ways): a table's BFS runs from its columns only
    links = hops.link_distances(topo) if shown == n else hops.link_distances(topo, topo.chips[:shown]).T
    values = links if metric == DistanceMetric.links else (links - 1).clip(min=0)
    if shown < n:  # now that the values are known, as many columns as their widths let fit
        shown = _columns_that_fit(n, width, [len(str(v)) for v in values.max(axis=0)])
    rows = [{"rank": r, **{str(c): int(values[r, c]) for c in range(shown)}} for r in range(n)]
    # the last ranks' columns go first to fit the width (every one is in --format csv)
    columns = [Column("rank", "rank")] + [Column(str(c), str(c), drop_priority=c + 1) for c in range(shown)]
    footer = []
    if shown < n:
        footer.append(
            f"not shown to fit {width} columns: ranks {shown} to {n - 1} ({n - shown} columns); see every "
            "column with --wide, --format json|csv|markdown or a larger COLUMNS"
        )
    payload = (
        {"name": topo.name, "metric": metric.value, "matrix": values.tolist()} if fmt == Format.json else {}
    )
    emit(payload, [Table(f"{topo.name}: {metric.value} between ranks", columns, rows, footer)], fmt)


def _columns_that_fit(n: int, width: int, cells: list[int] | None = None) -> int:
    """How many rank columns of an ``n``-rank matrix fit a table ``width`` wide: each is as wide as
    its header (the rank number) or its widest value (``cells``, when known), plus its border and
    padding; at least one."""
    used = max(len("rank"), len(str(n - 1))) + 4  # the rank column and the left border
    for count in range(n):
        if cells is not None and count == len(cells):
            return count
        used += max(len(str(count)), cells[count] if cells is not None else 1) + 3
        if used > width:
            return max(count, 1)
    return n


def _end(topo, text: str, which: str) -> str:
    """The rank ``text`` names, an error naming where it was given (``SRC '-1': ...``)."""
    try:
        return topo.resolve_chip(text)
    except UsageError as exc:
        raise UsageError(f"{which} {text!r}: {exc}") from None


@app.command(context_settings={"ignore_unknown_options": True})  # `topo path nl72x2 -1 5`: a rank
def path(
    ends: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[SKU] SRC DST",
            help="SKU SRC DST, or SRC DST with --sku NAME or --topology FILE (ranks or chip names; a chip "
            "that hosts several ranks stands for its first).",
            show_default=False,
        ),
    ] = None,
    sku_option: SkuOption = None,
    topology: TopologyOption = None,
    overrides: SetOption = None,
    routing: RoutingOption = None,
    calibration: CalibrationOption = None,
    fail: FailOption = None,
    fmt: FormatOption = Format.table,
) -> None:
    """One shortest path between two chips with its links, and how many equal paths exist (under
    --routing single or hash: the path that policy takes).

    Examples:

        trnsim topo path nl72x2 0 78
        trnsim topo path nl72x2 0 78 --routing single
    """
    from trnsim.routing.hops import policy_path, shortest_path

    ends = list(ends or [])
    for end in ends:  # the parser passes what looks like an option on (-1 is a rank to refuse)
        if end.startswith("-") and not end[1:].isdigit():
            raise UsageError(f"No such option: {end} (see: trnsim topo path --help)")
    _check_source(sku_option, topology)
    named = "--sku NAME" if sku_option is not None else "--topology FILE" if topology is not None else None
    if named is not None and len(ends) == 3:
        raise UsageError(f"with {named} give SRC DST only, not a SKU as well (got {' '.join(ends)})")
    if len(ends) != (2 if named else 3):
        got = f"got {len(ends)} argument{'s' if len(ends) != 1 else ''}"
        raise UsageError(
            f"give SKU SRC DST, or SRC DST with --sku NAME or --topology FILE ({got}), "
            "e.g. trnsim topo path nl72x2 0 78"
        )
    sku = sku_option if named else ends.pop(0)
    src, dst = ends
    topo = _load(sku, topology, edits(overrides, routing, calibration, fail))
    a, b = (_end(topo, text, which) for text, which in ((src, "SRC"), (dst, "DST")))
    # a chip that hosts several ranks (trn1) stands for its first rank: its path starts on the chip
    hosts = [
        f"{text.strip()} hosts ranks {', '.join(str(topo.rank_of[r]) for r in topo.ranks_by_chip[text.strip()])}: "
        f"the path is its first rank's ({topo.ranks_by_chip[text.strip()][0]})"
        for text in (src, dst)
        if text.strip() not in topo.rank_of and len(topo.ranks_by_chip.get(text.strip(), ())) > 1
    ]
    nodes, count = shortest_path(topo, a, b)
    if not count:
        raise UsageError(
            f"{topo.where}: {a} cannot reach {b} when only switches forward traffic (routing without relay)"
        )
    policy = topo.spec.routing.policy
    if policy != "ecmp":
        nodes = policy_path(topo, a, b)
    graph = topo.graph
    steps = []
    for u, v in zip(nodes, nodes[1:], strict=False):
        data = graph.edges[u, v]
        steps.append(
            {
                "from": u,
                "to": v,
                "cls": data["cls"],
                "medium": data["medium"],
                "lanes": data["lanes"],
                "bw_gbps": data["bw_gbps"],
                "to_kind": graph.nodes[v]["kind"],
            }
        )
    links = len(nodes) - 1
    payload = {
        "name": topo.name,
        "src": a,
        "dst": b,
        "src_rank": topo.rank_of[a],
        "dst_rank": topo.rank_of[b],
        "links": links,
        "hops": max(links - 1, 0),
        "paths": count,
        "routing": policy,
        "path": nodes,
        "steps": steps,
    }
    table = Table(
        f"{topo.name}: rank {topo.rank_of[a]} ({a}) -> rank {topo.rank_of[b]} ({b})",
        [
            Column("from", "from", align="left"),
            Column("to", "to", align="left"),
            Column("cls", "class", align="left"),
            Column("medium", "medium", align="left"),
            Column("lanes", "lanes"),
            Column("bw_gbps", "GB/s", "{:,.1f}"),
        ],
        steps,
        footer=[
            f"{_count(links, 'link')}, {_count(max(links - 1, 0), 'hop')} (devices passed through); "
            f"{count:,} shortest path{'s' if count != 1 else ''}"
            + (
                "; ecmp spreads the flow over all of them (this is one)"
                if policy == "ecmp"
                else f"; {policy} routing takes this one" + (" (seed 0)" if policy == "hash" else "")
            ),
            *hosts,
        ],
    )
    if a == b and fmt in (Format.table, Format.markdown):  # no link to list: one line, no empty table
        typer.echo(
            f"{table.title}: the same {'rank' if topo.ranks_per_chip > 1 else 'chip'}: 0 links, 0 hops"
        )
        return
    emit(payload, [table], fmt)


class ExportFormat(str, Enum):
    graphml = "graphml"
    json = "json"
    dot = "dot"
    astra_sim = "astra-sim"


_EXPORT_SUFFIXES = {
    "graphml": (".graphml", ".xml"),
    "json": (".json",),
    "dot": (".dot", ".gv"),
    "astra-sim": (".yaml", ".yml"),
}


@app.command()
def export(
    sku: SkuArgument = None,
    sku_option: SkuOption = None,
    topology: TopologyOption = None,
    overrides: SetOption = None,
    routing: RoutingOption = None,
    calibration: CalibrationOption = None,
    fail: FailOption = None,
    fmt: Annotated[
        ExportFormat,
        typer.Option(
            "--format",
            help="graphml (Gephi), json (networkx node-link), dot (Graphviz), astra-sim (analytical network YAML).",
            case_sensitive=False,
        ),
    ] = ExportFormat.graphml,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write to a file instead of stdout.")
    ] = None,
) -> None:
    """Export the graph for Gephi (graphml), Graphviz (dot) or a script (json: networkx node-link data).

    Examples:

        trnsim topo export nl64 --format astra-sim
        trnsim topo export nl16 --format graphml -o nl16.graphml
    """
    from trnsim.cli.options import check_suffix
    from trnsim.outputs.topology_export import to_text

    check_suffix(output, "-o", f"{fmt.value} (--format {fmt.value})", _EXPORT_SUFFIXES[fmt.value])
    writable(output)
    topo = _load(_pick_sku(sku, sku_option), topology, edits(overrides, routing, calibration, fail))
    text = to_text(topo, fmt.value)
    if output is None:
        typer.echo(text, nl=not text.endswith("\n"))
    else:
        write_text(output, text)
        typer.echo(f"wrote {output} ({fmt.value}, {_count_text(topo)})", err=True)


@app.command()
def draw(
    sku: SkuArgument = None,
    sku_option: SkuOption = None,
    topology: TopologyOption = None,
    overrides: SetOption = None,
    fail: FailOption = None,
    output: Annotated[
        Path, typer.Option("-o", "--output", help="The picture: .png, .svg or .pdf.", show_default=False)
    ] = ...,
    title: Annotated[str | None, typer.Option("--title", help="A title instead of the system's.")] = None,
) -> None:
    """Draw the fabric to a PNG, SVG or PDF file, links coloured by class.

    Tori as grids (3-D: a row of slices along the slowest axis, the links between slices as bands);
    switched fabrics as racks of trays with their chips, each tray's switches and each rack's switch
    planes as boxes, and the cross-rack cables. With --fail, what failed is drawn dashed in grey.
    Needs the plot extra (matplotlib).

    Examples:

        trnsim topo draw nl72x2 -o nl72x2.svg
        trnsim topo draw nl64 --fail chip:5 -o nl64.png
    """
    from trnsim.cli.options import picture_path
    from trnsim.outputs import draw as drawing

    picture_path(output, "-o")
    topo = _load(_pick_sku(sku, sku_option), topology, edits(overrides, None, None, fail))
    picture = drawing.layout(topo)
    if title is not None:
        picture.title = title
    drawing.save(picture, output)
    counts = picture.title.split(": ", 1)[-1] if title is None else _count_text(topo)
    typer.echo(f"wrote {output} ({counts}; {len(picture.segments)} drawn lines)", err=True)


@app.command()
def validate(
    # folders are reported per file like any other bad file, not refused before the others are checked
    files: Annotated[list[Path], typer.Argument(help="Topology YAML files.")],
    fmt: FormatOption = Format.table,
) -> None:
    """Load, validate, build and hardware-check topology files; exit 2 if any is bad.

    Every file is checked: the table (stdout) gives each one's status, ok or the reason, and each
    bad file also gets its one error line on stderr.

    Examples:

        trnsim topo validate topologies/trn2-nl16.yaml topologies/trn2-nl64.yaml
    """
    from trnsim.errors import TrnsimError
    from trnsim.outputs.render import print_error
    from trnsim.topology import load_topology
    from trnsim.topology.hardware import check_reachable_without_relay

    rows = []
    for file in files:
        try:
            topo = load_topology(topology=file)
            check_reachable_without_relay(topo)  # as every command that routes all the chips
        except TrnsimError as exc:
            print_error(str(exc))
            reason = str(exc).removeprefix(f"{file}: ")  # the file has its own column
            rows.append(
                {
                    "file": str(file),
                    "name": None,
                    **dict.fromkeys(("chips", "ranks", "ranks_per_chip", "switches", "links")),
                    "status": reason,
                }
            )
            continue
        rows.append(
            {
                "file": str(file),
                "name": topo.name,
                **_counts(topo),
                "status": "ok",
            }
        )
    emit(
        {"files": rows},
        [
            Table(
                "validated",
                [
                    Column("file", "file", align="left"),
                    Column("name", "name", align="left", drop_priority=1),
                    Column("chips", "chips"),
                    Column("ranks", "ranks", drop_priority=4),
                    Column("switches", "switches", drop_priority=2),
                    Column("links", "links", drop_priority=3),
                    Column("status", "status", align="left"),
                ],
                rows,
            )
        ],
        fmt,
    )
    if any(row["status"] != "ok" for row in rows):
        raise typer.Exit(EXIT_USAGE)


def _count(number: int, noun: str) -> str:
    """``1 hop``, ``2 hops``, ``2 switches``."""
    return f"{number} {noun}{'' if number == 1 else 'es' if noun.endswith('ch') else 's'}"


def _count_text(topology) -> str:
    """``16 chips (32 ranks), 0 switches``: the counts of :func:`_counts` in words."""
    ranks = f" ({topology.n_ranks} ranks)" if topology.ranks_per_chip > 1 else ""
    return f"{_count(topology.n_chips, 'chip')}{ranks}, {_count(topology.n_switches, 'switch')}"
