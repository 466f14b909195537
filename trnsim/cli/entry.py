"""The ``trnsim`` console command: signals, warnings and the last word on the exit code, set up
before anything heavy is imported.

- Ctrl-C at any moment, even while Python is still importing numpy, prints ``interrupted`` and
  exits 130, with no traceback.
- SIGTERM (and SIGHUP) unwind the run like an error, so that temporary files are removed and worker
  processes stopped, and exit 128 + the signal's number.
- A warning (matplotlib's, numba's) is one printable line on stderr.
- stdout and stderr are flushed here, while a failure can still set the exit code: a lost output
  exits 2, never 1 (the code of a failed threshold) nor Python's own 120.

:func:`trnsim.cli.app.main` is the CLI itself (in-process callers and tests use it); this module only
wraps it for a process of its own.
"""

import os
import signal
import sys

from trnsim.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, Terminated


def main() -> None:
    """Run ``trnsim`` as a process: see the module's description."""
    try:
        _install_handlers()
        from trnsim.cli.app import main as run

        run()
        code = EXIT_OK
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else EXIT_OK if exc.code is None else EXIT_USAGE
    except KeyboardInterrupt:
        code = _stop(EXIT_INTERRUPTED, "interrupted")
    except Terminated as exc:
        code = _stop(exc.exit_code, "terminated")
    code = _flushed(code)
    if code == EXIT_INTERRUPTED:
        # CPython remembers a KeyboardInterrupt that left any exec() of a string (dataclasses and
        # namedtuples are made that way at import) and then, however it was handled, ends the
        # process by SIGINT (-2) instead of this code; the outputs are flushed, so leave directly
        os._exit(code)
    sys.exit(code)


def _install_handlers() -> None:
    import warnings

    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        # nohup and friends set SIGHUP to be ignored: that choice is the user's to keep
        if number is not None and signal.getsignal(number) is signal.SIG_DFL:
            signal.signal(number, _terminate)
    warnings.showwarning = _warning


def _terminate(signum, frame) -> None:
    raise Terminated(signum)


def _warning(message, category, filename, lineno, file=None, line=None) -> None:
    from trnsim.errors import printable

    _say(f"warning: {printable(str(message))}")


def _stop(code: int, what: str) -> int:
    """After Ctrl-C or SIGTERM: no second interruption, no worker left running, one line."""
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_IGN)
    _stop_children()
    _say(what)
    return code


def _stop_children() -> None:
    """Stop the worker processes a run started (``sweep --jobs``), if the run did not."""
    multiprocessing = sys.modules.get("multiprocessing")
    if multiprocessing is None:
        return
    children = multiprocessing.active_children()
    for child in children:
        child.terminate()
    for child in children:
        child.join(timeout=5)


def _say(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, AttributeError, ValueError):  # stderr full, closed or None: the code still tells
        _discard(sys.stderr)


def _flushed(code: int) -> int:
    """Flush stdout and stderr; an output that cannot be written makes a successful run exit 2."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except BrokenPipeError:  # the reader went away (`trnsim ... | head`): not an error of ours
            _discard(stream)
        except (OSError, ValueError) as exc:
            _discard(stream)
            if code == EXIT_OK:
                code = EXIT_USAGE
                if stream is sys.stdout:
                    _say(f"error: cannot write the output: {getattr(exc, 'strerror', None) or exc}")
    return code


def _discard(stream) -> None:
    """Point a failed stream's file at the null device, so that Python's own flush at exit succeeds
    (and neither prints an "Exception ignored" nor turns the exit code into 120)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, AttributeError, ValueError):
        pass
