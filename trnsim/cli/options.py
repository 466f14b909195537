"""Options shared by several commands, and how they turn into a loaded topology."""

from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.render import Format

FormatOption = Annotated[Format, typer.Option("--format", help="Output format.", case_sensitive=False)]
SkuOption = Annotated[
    str | None, typer.Option("--sku", help="Catalog SKU name or alias (see `trnsim topo list`).")
]
TopologyOption = Annotated[
    Path | None,
    typer.Option("--topology", help="A topology YAML file in the catalog schema.", dir_okay=False),
]
SetOption = Annotated[
    list[str] | None,
    typer.Option("--set", help="What-if edit of the topology file, KEY=VALUE (e.g. latency.switch_ns=50)."),
]


def load(sku: str | None, topology: Path | None, overrides: list[str] | None):
    """Load a topology from ``--sku`` or ``--topology`` with ``--set`` edits applied."""
    from trnsim.topology import load_topology

    return load_topology(sku, topology, overrides or [])
