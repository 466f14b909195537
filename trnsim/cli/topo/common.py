"""What every ``trnsim topo`` command shares: the sub-app, the SKU argument, loading and counting words."""

from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.options import load
from trnsim.errors import UsageError

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


def pick_sku(positional: str | None, option: str | None) -> str | None:
    """The SKU given as an argument or as ``--sku`` (the other commands' spelling), not both."""
    if positional is not None and option is not None:
        raise UsageError(f"give the SKU once: {positional!r} as an argument or --sku {option}, not both")
    return option if positional is None else positional


def check_source(sku: str | None, topology: Path | None) -> None:
    """Refuse a SKU given together with --topology FILE: one topology per command."""
    if sku is not None and topology is not None:
        raise UsageError(
            f"give a SKU or --topology FILE, not both (got SKU {sku!r} and --topology {topology})"
        )


def load_topology(sku: str | None, topology: Path | None, overrides: list[str] | None):
    """The topology a topo command names (a SKU or --topology FILE, not both), with its edits."""
    if sku is None and topology is None:
        raise UsageError(
            "name a SKU (as an argument or --sku NAME; see `trnsim topo list`) or give --topology FILE"
        )
    check_source(sku, topology)
    return load(sku, topology, overrides)


def count(number: int, noun: str) -> str:
    """``1 hop``, ``2 hops``, ``2 switches``."""
    return f"{number} {noun}{'' if number == 1 else 'es' if noun.endswith('ch') else 's'}"


def count_text(topology) -> str:
    """``16 chips (32 ranks), 0 switches``: a topology's counts in words."""
    ranks = f" ({topology.n_ranks} ranks)" if topology.ranks_per_chip > 1 else ""
    return f"{count(topology.n_chips, 'chip')}{ranks}, {count(topology.n_switches, 'switch')}"


def resolve_rank(topo, text: str, which: str) -> str:
    """The rank ``text`` names, an error naming where it was given (``SRC '-1': ...``)."""
    try:
        return topo.resolve_chip(text)
    except UsageError as exc:
        raise UsageError(f"{which} {text!r}: {exc}") from None
