"""The ``trnsim`` root command; ``main()`` maps errors to exit codes in one place."""

import sys
from typing import Annotated

import typer

from trnsim import __version__
from trnsim.cli import topo
from trnsim.errors import EXIT_USAGE, TrnsimError

app = typer.Typer(
    name="trnsim",
    help="Analyze Trainium scale-up topologies and model how fast collectives run on them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(topo.app, name="topo")


def _register_collective() -> None:
    from trnsim.cli import collective, compare

    if not any(group.name == "collective" for group in app.registered_groups):
        app.add_typer(collective.app, name="collective")
        compare.register(app)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"trnsim {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of an error.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Analyze Trainium scale-up topologies and model how fast collectives run on them."""


def _error(message: str, label: str = "error") -> None:
    from rich.console import Console

    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[red]{label}:[/red] {message}", markup=True)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI: exit 0 when fine, 1 when a comparison fails its threshold, 2 on bad usage or input.

    Usage errors found by the argument parser exit 2 on their own (standalone mode); trnsim's own
    errors become one red line on stderr; ``--debug`` shows their traceback instead.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        _register_collective()
        app(args=argv, prog_name="trnsim")
    except TrnsimError as exc:
        if debug:
            raise
        _error(str(exc).replace("[", "\\["), "regression" if exc.exit_code == 1 else "error")
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        sys.exit(0)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:  # a bug, not the user's fault: say so briefly
        if debug:
            raise
        _error(f"internal error: {type(exc).__name__}: {exc} (run again with --debug for the traceback)")
        sys.exit(EXIT_USAGE)
