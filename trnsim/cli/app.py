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

    console = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
    console.print(f"[red]{label}:[/red] {message}", markup=True)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI: exit 0 when fine, 1 when a comparison fails its threshold, 2 on bad usage or input.

    Errors, the argument parser's and trnsim's own, become one red line on stderr (exit 2, or 1 for a
    failed threshold); ``--debug``, anywhere on the line, shows the traceback instead.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    if debug:  # accepted anywhere on the line, not only before the command
        argv = ["--debug", *[arg for arg in argv if arg != "--debug"]]
    try:
        _register_collective()
        app(args=argv, prog_name="trnsim", standalone_mode=False)
    except TrnsimError as exc:
        if debug:
            raise
        _error(str(exc).replace("[", "\\["), "regression" if exc.exit_code == 1 else "error")
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        sys.exit(0)
    except (KeyboardInterrupt, SystemExit):
        raise
    except MemoryError:
        _error("out of memory: the group or fabric is too large for this machine; try a smaller --group")
        sys.exit(EXIT_USAGE)
    except Exception as exc:
        code = getattr(exc, "exit_code", None)
        if code is None or not hasattr(exc, "format_message"):
            if debug:
                raise
            _error(f"internal error: {type(exc).__name__}: {exc} (run again with --debug for the traceback)")
            sys.exit(EXIT_USAGE)
        context = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and context is not None:
            print(context.get_help())  # a bare group command shows its help
            sys.exit(0)
        # the argument parser's own errors (unknown option, bad value): one line, with a pointer to --help
        command = context.command_path if context is not None else "trnsim"
        _error(f"{exc.format_message()} (see: {command} --help)".replace("[", "\\["))
        sys.exit(EXIT_USAGE if code else 0)
    sys.exit(0)
