"""``trnsim topo validate``: load, validate, build and hardware-check topology files."""

from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.options import FormatOption
from trnsim.cli.topo.common import app
from trnsim.errors import EXIT_USAGE
from trnsim.outputs.render import Column, Format, Table, emit
from trnsim.studies.structure import counts


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
                **counts(topo),
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
