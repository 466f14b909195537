"""``trnsim topo new``: write a minimal annotated topology file to start from."""

from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.options import writable, write_text
from trnsim.cli.topo.common import app
from trnsim.errors import UsageError


@app.command()
def new(
    kind: Annotated[
        str, typer.Argument(metavar="torus|switched", help="The kind of fabric.", show_default=False)
    ],
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write to this file instead of stdout.")
    ] = None,
    name: Annotated[str, typer.Option("--name", help="The system's name in the file.")] = "my-system",
    force: Annotated[bool, typer.Option("--force", help="Replace the file if it exists.")] = False,
) -> None:
    """Write a minimal topology file to edit: every key explained, example figures marked as such.

    Then check it with `trnsim topo validate FILE` and use it with --topology FILE on any command.

    Examples:

        trnsim topo new torus -o mine.yaml
        trnsim topo new switched --name my-rack -o rack.yaml
    """
    from trnsim.spec.template import template_text

    text = template_text(kind.strip().lower(), name)
    if output is None:
        typer.echo(text, nl=False)
        return
    writable(output)
    if output.exists() and not force:
        raise UsageError(f"-o {output} exists; give another name or --force to replace it")
    write_text(output, text)
    typer.echo(
        f"wrote {output} ({kind.strip().lower()} template); next: trnsim topo validate {output}", err=True
    )
