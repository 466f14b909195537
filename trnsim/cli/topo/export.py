"""``trnsim topo export``: the graph as GraphML, networkx JSON, Graphviz dot or ASTRA-sim YAML."""

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.options import (
    CalibrationOption,
    FailOption,
    RoutingOption,
    SetOption,
    SkuOption,
    TopologyOption,
    edits,
    writable,
    write_text,
)
from trnsim.cli.topo.common import SkuArgument, app, count_text, load_topology, pick_sku


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
    topo = load_topology(pick_sku(sku, sku_option), topology, edits(overrides, routing, calibration, fail))
    text = to_text(topo, fmt.value)
    if output is None:
        typer.echo(text, nl=not text.endswith("\n"))
    else:
        write_text(output, text)
        typer.echo(f"wrote {output} ({fmt.value}, {count_text(topo)})", err=True)
