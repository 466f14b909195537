"""The ``trnsim`` root command; ``main()`` maps errors to exit codes in one place."""

import contextlib
import sys
import traceback
from typing import Annotated

import typer

from trnsim import __version__
from trnsim.cli.flags import error_text
from trnsim.cli.lazy import Entry, lazy_group, settings_of
from trnsim.cli.typed import OrderedCommand
from trnsim.errors import EXIT_INTERRUPTED, EXIT_THRESHOLD, EXIT_USAGE, TrnsimError
from trnsim.outputs.render import NON_FINITE, print_error, set_wide

app = typer.Typer(
    name="trnsim",
    help="Analyze Trainium scale-up topologies and model how fast collectives run on them.\n\nExamples:\n\n"
    "trnsim topo list\ntrnsim topo show nl72x2\ntrnsim collective allreduce --sku nl72x2\n"
    "trnsim compare alltoall --sku nl72x2 --sku trn3-nl72x2-gen3 --sizes 1M,1G",
    epilog="Environment: results that do not change between runs (a system's exact bounds, a command's "
    "output asked again) are kept in TRNSIM_CACHE_DIR (default $XDG_CACHE_HOME/trnsim or ~/.cache/trnsim; "
    "delete it to clear it); TRNSIM_CACHE=off keeps nothing. TRNSIM_MAX_* raise the limits. See "
    "docs/reference/output.md.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Every command, in the order --help lists them; each one's module is imported when it is named
# (trnsim.cli.lazy). The variants keep the order typed across --sku and --topology (A is the base of
# the ratios): those commands record it (OrderedCommand).
_ORDERED = {"cls": OrderedCommand}
COMMANDS = (
    Entry("compare", "trnsim.cli.compare:compare", _ORDERED),
    Entry("report", "trnsim.cli.report:report", _ORDERED),
    Entry("sweep", "trnsim.cli.sweep:sweep", _ORDERED),
    Entry("plot", "trnsim.cli.plot:plot", _ORDERED),
    Entry("design", "trnsim.cli.design:design", _ORDERED),
    Entry("calibrate", "trnsim.cli.calibrate:calibrate"),
    Entry("layout", "trnsim.cli.layout:layout"),
    Entry("faults", "trnsim.cli.faults:faults"),
    Entry("validate", "trnsim.cli.validate:validate"),
    Entry("measure-plan", "trnsim.cli.measure_plan:measure_plan"),
    Entry("topo", "trnsim.cli.topo:app"),
    Entry("collective", "trnsim.cli.collective:app"),
    Entry("cluster", "trnsim.cli.cluster:app"),
    Entry("schedule", "trnsim.cli.schedule:app"),
)


def command_tree():
    """The CLI as a click group whose commands are built (and their modules imported) when named.

    Walking all of it (``--help``, the docs, the tests: ``.commands.items()``) builds every command.
    """
    from typer.models import TyperInfo

    return lazy_group(TyperInfo(app), settings_of(app), COMMANDS, _prepare)


def _prepare(command) -> None:
    """Before a command is converted: its docstring reflowed for --help (once) and every command
    checking its output files against its inputs before it runs (:mod:`.files`)."""
    from trnsim.cli.files import guarded

    callback = command.callback
    if not getattr(callback, "__trnsim_reflowed__", False):
        if callback.__doc__:
            callback.__doc__ = _reflow(callback.__doc__)
        callback.__trnsim_reflowed__ = True  # guarded() copies it onto its wrapper
    command.callback = guarded(callback)


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


def _group_of(root, args: list[str]):
    """The command group that ``args`` name with nothing after them (``[]``, ``["topo"]``), if any."""
    command = root
    for arg in args:
        commands = getattr(command, "commands", None)
        if commands is None or arg not in commands:
            return None
        command = commands[arg]
    return command if getattr(command, "commands", None) is not None else None


def _show_help_and_fail(root, args: list[str]) -> None:
    """A bare group command is incomplete usage: its help goes to stderr and the exit code is 2."""
    with contextlib.redirect_stdout(sys.stderr):  # typer's Rich help prints to stdout
        root.main(args=[*args, "--help"], prog_name="trnsim", standalone_mode=False)
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
        root = command_tree()
        if _group_of(root, args) is not None:
            _show_help_and_fail(root, args)
        code = root.main(args=argv, prog_name="trnsim", standalone_mode=False)
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
