"""The ``trnsim`` root command; ``main()`` maps errors to exit codes in one place."""

import contextlib
import sys
import traceback
from typing import Annotated

import typer

from trnsim import __version__
from trnsim.cli import topo
from trnsim.cli.flags import error_text
from trnsim.errors import EXIT_INTERRUPTED, EXIT_THRESHOLD, EXIT_USAGE, TrnsimError
from trnsim.outputs.render import NON_FINITE, print_error, set_wide

app = typer.Typer(
    name="trnsim",
    help="Analyze Trainium scale-up topologies and model how fast collectives run on them.\n\nExamples:\n\n"
    "trnsim topo list\ntrnsim topo show nl72x2\ntrnsim collective allreduce --sku nl72x2\n"
    "trnsim compare alltoall --sku nl72x2 --sku trn3-nl72x2-gen3 --sizes 1M,1G",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(topo.app, name="topo")


def _register_collective() -> None:
    """Add the commands past ``topo``, once: each command's module imports what it needs when it runs."""
    if not any(group.name == "collective" for group in app.registered_groups):
        from trnsim.cli import cluster, collective
        from trnsim.cli.calibrate import calibrate
        from trnsim.cli.compare import compare
        from trnsim.cli.faults import faults
        from trnsim.cli.layout import layout
        from trnsim.cli.measure_plan import measure_plan
        from trnsim.cli.plot import plot
        from trnsim.cli.report import report
        from trnsim.cli.schedule import app as schedule_app
        from trnsim.cli.sweep import sweep
        from trnsim.cli.typed import OrderedCommand
        from trnsim.cli.validate import validate

        app.add_typer(collective.app, name="collective")
        # the variants keep the order typed across --sku and --topology (A is the base of the ratios)
        for name, command in (("compare", compare), ("report", report), ("sweep", sweep), ("plot", plot)):
            app.command(name, cls=OrderedCommand)(command)
        app.command("calibrate")(calibrate)
        app.command("layout")(layout)
        app.command("faults")(faults)
        app.add_typer(cluster.app, name="cluster")
        app.command("validate")(validate)
        app.command("measure-plan")(measure_plan)
        app.add_typer(schedule_app, name="schedule")
        _reflow_help(app)
        _guard_files(app)


def _reflow(doc: str) -> str:
    """A docstring as --help should wrap it: each paragraph one line (the terminal wraps it), lists
    and indented blocks as written, example command lines one a line. Typer keeps a docstring's line
    breaks, which wrap raggedly."""
    import inspect

    paragraphs = []
    for paragraph in inspect.cleandoc(doc).split("\n\n"):
        lines = paragraph.split("\n")
        if all(line.strip().startswith("trnsim ") for line in lines):
            # examples: one command a line, flush left (typer would strip a common indent anyway)
            paragraphs.append("\n".join(line.strip() for line in lines))
        elif any(line.startswith(("-", "*", " ", "|")) for line in lines):
            paragraphs.append(paragraph)
        else:
            paragraphs.append(" ".join(line.strip() for line in lines))
    return "\n\n".join(paragraphs)


def _reflow_help(typer_app: typer.Typer) -> None:
    for command in typer_app.registered_commands:
        if command.callback is not None and command.callback.__doc__:
            command.callback.__doc__ = _reflow(command.callback.__doc__)
    for group in typer_app.registered_groups:
        _reflow_help(group.typer_instance)


def _guard_files(typer_app: typer.Typer) -> None:
    """Every command checks its output files against its inputs before it runs (:mod:`.files`)."""
    from trnsim.cli.files import guarded

    for command in typer_app.registered_commands:
        if command.callback is not None:
            command.callback = guarded(command.callback)
    for group in typer_app.registered_groups:
        _guard_files(group.typer_instance)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"trnsim {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of an error.")] = False,
    wide: Annotated[
        bool,
        typer.Option(
            "--wide",
            help="Print every column of a table, however wide (tables otherwise fit the terminal, or "
            "COLUMNS, or 80 columns, leaving columns out and saying which). Accepted anywhere on the line.",
        ),
    ] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Analyze Trainium scale-up topologies and model how fast collectives run on them."""


def _group_of(args: list[str]) -> typer.Typer | None:
    """The command group that ``args`` name with nothing after them (``[]``, ``["topo"]``), if any."""
    group = app
    for arg in args:
        group = next((g.typer_instance for g in group.registered_groups if g.name == arg), None)
        if group is None:
            return None
    return group


def _show_help_and_fail(args: list[str]) -> None:
    """A bare group command is incomplete usage: its help goes to stderr and the exit code is 2."""
    with contextlib.redirect_stdout(sys.stderr):  # typer's Rich help prints to stdout
        app(args=[*args, "--help"], prog_name="trnsim", standalone_mode=False)
    sys.exit(EXIT_USAGE)


def _fail(message: str, code: int, debug: bool, label: str = "error") -> None:
    """Exit with ``code``: the traceback of the error being handled with --debug, else one line."""
    try:
        if debug:
            traceback.print_exc()
        else:
            print_error(message, label)
    except OSError:  # stderr itself cannot be written (2>/dev/full): the exit code still tells
        pass
    sys.exit(code)


def _interrupted() -> None:
    """Ctrl-C: one line and exit 130, no traceback."""
    with contextlib.suppress(OSError):
        print("interrupted", file=sys.stderr)
    sys.exit(EXIT_INTERRUPTED)


def _inputs(args: list[str]) -> str:
    """The options a run was given, but how its output is written: what a result that cannot be
    printed (a NaN) may come from."""
    import shlex

    words, skip = [], False
    for arg in args:
        option = arg.split("=", 1)[0]
        if skip or option in ("--format", "-o", "--output"):
            skip = not skip and "=" not in arg
            continue
        if words or arg.startswith("-"):  # the command's name words come first
            words.append(shlex.quote(arg))
    return " ".join(words)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI: exit 0 when fine, 1 when a comparison fails its threshold, 2 on bad usage or input.

    Errors, the argument parser's and trnsim's own, become one red line on stderr (exit 2, or 1 for a
    failed threshold); ``--debug``, anywhere on the line, shows the traceback instead and keeps the
    exit code. A bare group command (``trnsim``, ``trnsim topo``) prints its help to stderr and exits 2.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after ``trnsim``; ``sys.argv[1:]`` by default.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if sys.stdout is None:  # started with stdout closed (`trnsim ... >&-`): nowhere to print results
        print_error("standard output is closed: nowhere to write the results")
        sys.exit(EXIT_USAGE)
    debug = "--debug" in argv
    # like --debug, anywhere on the line; the notes under a table too narrow name the options
    set_wide("--wide" in argv, "--wide", "--format json|csv|markdown")
    args = [arg for arg in argv if arg not in ("--debug", "--wide")]
    # --debug is accepted anywhere on the line, not only before the command; --wide is set above
    argv = ["--debug", *args] if debug else args
    try:
        _register_collective()
        if _group_of(args) is not None:
            _show_help_and_fail(args)
        code = app(args=argv, prog_name="trnsim", standalone_mode=False)
    except TrnsimError as exc:
        message = error_text(exc)
        if message == NON_FINITE and (given := _inputs(args)):
            message += f" (given: {given})"
        _fail(message, exc.exit_code, debug, "regression" if exc.exit_code == EXIT_THRESHOLD else "error")
    except BrokenPipeError:
        sys.exit(0)
    except KeyboardInterrupt:
        _interrupted()
    except SystemExit as exc:
        if exc.code == EXIT_THRESHOLD:
            # typer (a BrokenPipeError anywhere in a command or its --help) and rich (one in a table)
            # exit 1 when the reader of stdout went away (`trnsim ... | head`); trnsim's own exit 1,
            # a failed threshold, is raised by _fail, outside this try. A closed pipe is no failure.
            sys.exit(0)
        raise
    except MemoryError:
        _fail(
            "out of memory: the input is too large for this machine (see the limits in docs/reference/output.md: "
            "TRNSIM_MAX_* environment variables)",
            EXIT_USAGE,
            debug,
        )
    except OSError as exc:  # writing the output failed: a full disk, a closed or broken stdout
        _fail(f"cannot write the output: {exc.strerror or exc}", EXIT_USAGE, debug)
    except Exception as exc:
        if getattr(exc, "exit_code", None) is None or not hasattr(exc, "format_message"):
            _fail(
                f"internal error: {type(exc).__name__}: {exc} (run again with --debug for the traceback)",
                EXIT_USAGE,
                debug,
            )
        context = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError":
            # a group deeper than _group_of finds: the parser has printed its help already
            sys.exit(EXIT_USAGE)
        # the argument parser's own errors (unknown option, bad value): one line, with a pointer to --help
        command = context.command_path if context is not None else "trnsim"
        message = exc.format_message()
        option = getattr(exc, "option_name", None)
        if type(exc).__name__ == "NoSuchOption" and option:
            # the parser names the first letters of a cluster (-x of -xyz): name the word as given
            given = next((arg for arg in args if arg.startswith(option) and arg != option), None)
            message += f" (in {given!r})" if given else ""
        _fail(f"{message} (see: {command} --help)", EXIT_USAGE if exc.exit_code else 0, debug)
    if code == EXIT_INTERRUPTED:  # typer turns a Ctrl-C in a command into Exit(130); no command uses 130
        _interrupted()
    # typer returns the code of an explicit Exit (e.g. `topo validate` with a bad file; --help is 0)
    sys.exit(code if type(code) is int else 0)
