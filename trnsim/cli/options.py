"""Options shared by several commands, and how they turn into a loaded topology."""

import sys
from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.render import Format
from trnsim.errors import UsageError

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


DEFAULT_MIN, DEFAULT_MAX = "8", "1G"


def resolve_sizes(
    minbytes: str, maxbytes: str, stepfactor: float | None, sizes: str | None, fmt: Format
) -> list[int]:
    """Sizes from ``--sizes`` or the -b/-e/-f sweep (factor 2, or 4 on a terminal table)."""
    from trnsim.units import parse_size, size_sweep

    if sizes is not None:
        values = [parse_size(part) for part in sizes.split(",") if part.strip()]
        if not values:
            raise UsageError("--sizes needs at least one size, e.g. --sizes 1K,1M,1G")
        if any(v <= 0 for v in values):
            raise UsageError("--sizes must all be at least 1 byte")
        return sorted(set(values))
    if stepfactor is None:
        stepfactor = 4.0 if fmt == Format.table and sys.stdout.isatty() else 2.0
    return size_sweep(parse_size(minbytes), parse_size(maxbytes), stepfactor)


Algo = Annotated[
    str, typer.Option("--algo", help="Algorithm name, auto (fastest per size) or all (side by side).")
]
MinBytes = Annotated[
    str, typer.Option("-b", "--minbytes", help="Smallest size (bytes; K/M/G, KiB/MiB/GiB ok).")
]
MaxBytes = Annotated[str, typer.Option("-e", "--maxbytes", help="Largest size.")]
StepFactor = Annotated[
    float | None,
    typer.Option("-f", "--stepfactor", help="Multiply the size by this between rows [2; 4 on a terminal]."),
]
Sizes = Annotated[str | None, typer.Option("--sizes", help="Comma-separated sizes instead of -b/-e/-f.")]
Ranks = Annotated[int | None, typer.Option("--ranks", help="Use the first N ranks.")]
Group = Annotated[
    str | None,
    typer.Option(
        "--group", help="all, rack:K, server:K, plane:NAME, slot:NAME, a range 0-31 or a list 0,2,5-7."
    ),
]
Dtype = Annotated[
    str, typer.Option("--dtype", help="Element type for the count column (float, bf16, half, ...).")
]
AlphaUs = Annotated[
    float | None, typer.Option("--alpha-us", help="Per-step alpha in microseconds (overrides the SKU file).")
]
