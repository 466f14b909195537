"""``trnsim topo cost``: a system's bill of materials, network capex and power and their shares."""

from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.options import (
    FormatOption,
    SetOption,
    SkuOption,
    TopologyOption,
    edits,
)
from trnsim.cli.topo.common import SkuArgument, app, load_topology, pick_sku
from trnsim.errors import TrnsimError, UsageError
from trnsim.outputs.render import Format
from trnsim.studies.cost.scaleout import DEFAULT_CLUSTER_CHIPS

PARTS_HELP = (
    "A parts file (YAML, `parts: {NAME: {price_usd, power_w, per, gbit, source}}`) over the default "
    "catalog and the topology file's own parts: section; --set parts.NAME.KEY=VALUE edits go on top."
)
DOMAINS_HELP = (
    "Domains in the cluster whose scale-out fabric the system shares (the fabric's layers depend on "
    f"it); default: an assumed cluster of {DEFAULT_CLUSTER_CHIPS:,} chips (range 1,000 to 500,000)."
)

OVERRIDE_HINT = "change one: --set parts.NAME.price_usd=... or power_w=..., or --parts FILE"


@app.command()
def cost(
    sku: SkuArgument = None,
    sku_option: SkuOption = None,
    topology: TopologyOption = None,
    overrides: SetOption = None,
    parts: Annotated[
        Path | None, typer.Option("--parts", help=PARTS_HELP, show_default=False, dir_okay=False)
    ] = None,
    domains: Annotated[
        int | None, typer.Option("--domains", help=DOMAINS_HELP, min=1, max=1 << 24, show_default=False)
    ] = None,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Also write the bill to a .json or .csv file.")
    ] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """The bill of materials: chips, switch chips and trays, links by medium and length, retimers, NICs,
    ToR and fabric switches, transceivers; the network's capex and power and their shares.

    Every part is counted from the built system (its graph and the file's counts) and priced from the
    parts catalog that ships with trnsim (topologies/parts/parts.yaml), where every price and power
    is a named assumption with its range, or a public figure (docs/sources.md#part-figures); the
    second table prints each part's source. The network is every line but the chips. The scale-out
    lines are the system's share of a cluster's fabric (--domains; the Clos math of
    docs/sources.md#clos-math). Not counted: hosts, compute-tray boards, racks, power delivery and
    cooling. docs/guide/cost.md says how each line is counted.

    Examples:

        trnsim topo cost nl72x2
        trnsim topo cost trn3-nl72x2-gen2 --format json
        trnsim topo cost nl72x2 --set parts.trainium3.price_usd=16000
        trnsim topo cost nl72x2 --set parts.aec.power_w=2 --domains 64
        trnsim topo cost nl64 --parts examples/parts-what-if.yaml -o nl64-bill.csv
        trnsim topo cost nvl72 --domains 1000
    """
    from trnsim.cli.sweep import _check_output
    from trnsim.outputs.cost import bill_lines, bill_tables
    from trnsim.outputs.render import emit
    from trnsim.spec.parts_catalog import load_parts
    from trnsim.studies.cost import bill_of_materials

    _check_output(output, fmt)
    catalog = load_parts(parts)
    topo = load_topology(pick_sku(sku, sku_option), topology, edits(overrides, None, None, None))
    try:
        bill = bill_of_materials(topo, catalog, domains=domains)
    except TrnsimError as exc:
        raise _in_our_terms(exc) from None
    payload = {"name": topo.name, **bill.to_dict()}
    if output is not None:
        _write(output, payload, bill_lines(bill))
    # CSV is for machines: the lines as numbers, as -o bill.csv writes them
    emit(
        payload,
        [bill_lines(bill)] if fmt == Format.csv else bill_tables(bill, topo.where, OVERRIDE_HINT),
        fmt,
    )


# the scale-out fabric's parameters, which `cluster` sets by flags and this command by --set edits
SCALE_OUT_KEYS = {
    key: f"--set scale_out.{key}"
    for key in ("tor_tbit", "fabric_tbit", "tors_per_rack", "oversubscription", "port_gbit", "chips_per_rack")
}
SCALE_OUT_KEYS["nic_gbit_per_chip"] = "--set scale_out.nic_gbit_per_chip"


def _in_our_terms(error: TrnsimError) -> TrnsimError:
    """A scale-out refusal names the --set edit that changes the parameter (this command has no
    --tor-tbit); other errors pass as they are."""
    if not any("{" + key + "}" in error.template for key in SCALE_OUT_KEYS):
        return error
    text = error.render(lambda parameter: SCALE_OUT_KEYS.get(parameter, "{" + parameter + "}"))
    return UsageError(text, names=tuple(name for name in error.names if name not in SCALE_OUT_KEYS))


def _write(path: Path, payload: dict, lines) -> None:
    """The bill as JSON (the --format json document) or CSV (``lines``, one row per line of the
    bill, as --format csv prints them), by the suffix."""
    import io
    import json

    from trnsim.cli.options import write_text
    from trnsim.outputs.plain import emit_csv
    from trnsim.outputs.table import SCHEMA

    if path.suffix.lower() == ".json":
        write_text(path, json.dumps({"schema": SCHEMA, **payload}, indent=1, allow_nan=False) + "\n")
    else:
        buffer = io.StringIO()
        emit_csv([lines], buffer)
        write_text(path, buffer.getvalue())
    typer.echo(f"wrote {path}", err=True)
