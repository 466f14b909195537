"""``trnsim topo show``: a system's structure (counts, trays, link classes, parameters, hops, cuts)."""

from trnsim.cli.options import (
    CalibrationOption,
    FailOption,
    FormatOption,
    RoutingOption,
    SetOption,
    SkuOption,
    TopologyOption,
    edits,
)
from trnsim.cli.topo.common import SkuArgument, app, count, load_topology, pick_sku
from trnsim.outputs.render import Column, Format, Scaled, Table, kv_table
from trnsim.spec.schema import NETWORK_NAMES
from trnsim.studies.structure import endpoint_unit, structure


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
    options = dict(locals())  # every option's value: what the printed outcome depends on
    from trnsim.cli.outcome import Outcome, key_of, remember, replay, sku_file

    name, changes = pick_sku(sku, sku_option), edits(overrides, routing, calibration, fail)
    key = (
        None
        if calibration is not None
        else key_of("topo show", {**options, "edits": changes}, [sku_file(name, topology)])
    )
    if replay(key, fmt):
        return
    topo = load_topology(name, topology, changes)
    payload = structure(topo)
    tables = [_overview(topo, payload), _classes_table(payload["link_classes"])]
    tables.append(_parameters_table(payload["parameters"], payload["assumptions"]))
    roles = payload["switch_roles"]
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
    tables.append(_histogram_table(payload, endpoint_unit(topo)))
    if payload["cuts"]:
        tables.append(
            Table(
                "cut bandwidth (per direction)",
                [
                    Column("cut", "cut", align="left"),
                    Column("bw_gbps", "GB/s", "{:,.0f}"),
                ],
                payload["cuts"],
            )
        )
    outcome = Outcome(payload, tables, loaded=list(topo.notes))
    outcome.show(fmt)
    remember(key, outcome)


def _overview(topo, summary: dict) -> Table:
    """The key-value table: name, counts, trays, per-chip bandwidth, routing, hops, scale-out, file."""
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
        *_tray_items(summary["trays"]),
        ("links", summary["links"]),
        ("GB/s per chip (per direction)", f"{bw_text} effective; {summary['chip_raw_bw_gbps']:,.1f} raw"),
        ("routing", summary["routing"]),
        *_hop_items(summary, topo.ranks_per_chip > 1),
    ]
    scale_out = summary["scale_out"]
    if scale_out is not None:
        items.append(
            (
                "scale-out per chip",
                f"{NETWORK_NAMES[scale_out['network']]} {scale_out['nic_gbit_per_chip']:g} Gbit/s = "
                f"{scale_out['nic_bw_gbps']:g} GB/s (not in the scale-up graph)",
            )
        )
    items.append(("file", str(topo.path)))
    return kv_table(topo.name, items)


def _classes_table(classes: list[dict]) -> Table:
    """Links by class: medium, count, lanes, raw and effective bandwidth."""
    return Table(
        "links by class",
        [
            Column("cls", "class", align="left"),
            Column("medium", "medium", align="left"),
            Column("links", "links"),
            Column("lanes_per_link", "lanes"),
            Column("raw_bw_gbps_per_link", "raw GB/s per link", "{:,.1f}"),
            Column("efficiency", "eff %", Scaled(100, "{:.0f}")),
            Column("bw_gbps_per_link", "GB/s per link", "{:,.1f}"),
            Column("total_bw_gbps", "GB/s total", "{:,.0f}"),
        ],
        classes,
    )


def _histogram_table(summary: dict, unit: str) -> Table:
    """Unordered endpoint pairs by hop count."""
    histogram = [
        {"hops": int(h), "links": int(h) + 1, "pairs": n} for h, n in summary["hop_histogram"].items()
    ]
    return Table(
        f"hop histogram (unordered {unit} pairs)",
        [
            Column("hops", "hops"),
            Column("links", "links"),
            Column("pairs", f"{unit} pairs", "{:,}"),
        ],
        histogram,
    )


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
        diameter = f"{count(stats['diameter_links'], 'link')} = {count(stats['diameter_hops'], 'hop')}"
        items.append(("diameter" + suffix, diameter))
        items.append(("average" + suffix, f"{stats['avg_links']:.3f} links = {stats['avg_hops']:.3f} hops"))
    return items


def _tray_items(trays: dict) -> list[tuple[str, str]]:
    """What a compute tray (or server) and a switch tray hold, for ``topo show``."""
    from trnsim.topology.trays import DEFAULT_ASSUMPTION

    items = []
    node = trays.get("node")
    if node is not None:
        held = [count(node["chips"], "chip")]
        if node["ranks"] != node["chips"]:
            held.append(count(node["ranks"], "rank"))
        held.append(count(node["switches"], "switch"))
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
                    f"{_how_many(tray)}; each {count(tray['switches'], 'switch')} ({tray['model']}){assumed}",
                )
            )
    return items


def _how_many(trays: dict) -> str:
    """``18``, or ``18 per rack, 36 in all``."""
    if trays["per_rack"] is None or trays["per_rack"] == trays["count"]:
        return str(trays["count"])
    return f"{trays['per_rack']} per rack, {trays['count']} in all"
