"""``trnsim topo path``: one shortest path between two chips, link by link."""

from typing import Annotated

import typer

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
from trnsim.cli.topo.common import app, check_source, count, load_topology, resolve_rank
from trnsim.errors import UsageError
from trnsim.outputs.render import Column, Format, Table, emit
from trnsim.studies.structure import path_between


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
    ends = list(ends or [])
    for end in ends:  # the parser passes what looks like an option on (-1 is a rank to refuse)
        if end.startswith("-") and not end[1:].isdigit():
            raise UsageError(f"No such option: {end} (see: trnsim topo path --help)")
    check_source(sku_option, topology)
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
    topo = load_topology(sku, topology, edits(overrides, routing, calibration, fail))
    a, b = (resolve_rank(topo, text, which) for text, which in ((src, "SRC"), (dst, "DST")))
    # a chip that hosts several ranks (trn1) stands for its first rank: its path starts on the chip
    hosts = [
        f"{text.strip()} hosts ranks {', '.join(str(topo.rank_of[r]) for r in topo.ranks_by_chip[text.strip()])}: "
        f"the path is its first rank's ({topo.ranks_by_chip[text.strip()][0]})"
        for text in (src, dst)
        if text.strip() not in topo.rank_of and len(topo.ranks_by_chip.get(text.strip(), ())) > 1
    ]
    payload = path_between(topo, a, b)
    links, paths, policy, steps = payload["links"], payload["paths"], payload["routing"], payload["steps"]
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
            f"{count(links, 'link')}, {count(max(links - 1, 0), 'hop')} (devices passed through); "
            f"{paths:,} shortest path{'s' if paths != 1 else ''}"
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
