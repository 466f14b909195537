"""The ``trnsim`` console command: signals, warnings and the last word on the exit code, set up
before anything heavy is imported.

- Ctrl-C at any moment, even while Python is still importing numpy, prints ``interrupted`` and
  exits 130, with no traceback; SIGTERM (and SIGHUP) print ``terminated`` and exit 128 + the
  signal's number. Either stops the run where it lands, after removing the temporary files being
  written (outputs keep their old content) and stopping worker processes.
- A warning (matplotlib's, numba's) is one printable line on stderr.
- stdout and stderr are flushed here, while a failure can still set the exit code: a lost output
  exits 2, never 1 (the code of a failed threshold) nor Python's own 120.
- BLAS runs on one thread unless the user set its thread count (:func:`one_blas_thread_by_default`).
- The process leaves without tearing the interpreter down (:func:`_exit_now`): the exit handlers
  run and the streams are flushed, but freeing every module and array one by one is skipped.

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
        one_blas_thread_by_default()
        from trnsim.cli.app import main as run

        run()
        code = EXIT_OK
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else EXIT_OK if exc.code is None else EXIT_USAGE
    except KeyboardInterrupt:  # Ctrl-C before the handler was in place
        _leave(EXIT_INTERRUPTED, "interrupted")
    _exit_now(_flushed(code))


def _exit_now(code: int) -> None:
    """Leave with ``code`` as Python's own exit would, less the interpreter's teardown.

    Tearing down what a run imported and built (numpy, scipy, the topology's arrays) took 0.03-0.06 s
    of a 0.25 s catalog answer, for nothing: the process is gone the moment after. The exit handlers
    (``atexit``: multiprocessing's, temporary folders') still run and the streams are flushed again
    after them. A thread still running (a pool's, a Dask cluster's) is left to Python's own exit,
    which waits for it, as is a run under a profiler, tracer or debugger (``python -m cProfile -m
    trnsim`` prints its figures after the run returns), and everything when CPython lacks the
    handlers' runner.
    """
    import atexit
    import threading

    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)  # CPython's, there since 3.0
    if run_exit_handlers is None or threading.active_count() > 1 or _watched():
        sys.exit(code)
    try:
        run_exit_handlers()
    finally:
        os._exit(_flushed(code))


# what OpenBLAS (numpy's and scipy's wheels), OpenMP builds and MKL read for their thread count
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def one_blas_thread_by_default() -> None:
    """Have BLAS, when numpy loads it, run on one thread, unless one of :data:`BLAS_THREAD_VARIABLES`
    is set (the user's choice is kept).

    trnsim's matrix products are many and small (a pipeline's rounds times its links): OpenBLAS wakes
    a thread per core for each and spins them between calls, which cost more than it saved on a
    2-core machine (`faults nl72x2` 3.6 -> 2.7 s CPU, `collective allreduce --sku nl72x2` 1.15 ->
    0.77 s); only the 32,768-chip torus all-reduce ran sooner with two (5.9 against 7.1 s wall, for
    more CPU). ``OPENBLAS_NUM_THREADS=N trnsim ...`` gives N threads.
    """
    if not any(os.environ.get(name) for name in BLAS_THREAD_VARIABLES):
        os.environ["OPENBLAS_NUM_THREADS"] = "1"


def _install_handlers() -> None:
    import warnings

    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupt)
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        # nohup and friends set SIGHUP to be ignored: that choice is the user's to keep
        if number is not None and signal.getsignal(number) is signal.SIG_DFL:
            signal.signal(number, _terminate)
    warnings.showwarning = _warning


# A signal stops the process right where it lands, rather than by an exception: a KeyboardInterrupt
# raised inside importlib's lock callbacks is swallowed by CPython ("Exception ignored in
# _get_module_lock.cb") and the run goes on, or leaves a half-imported module behind for the next
# import to trip on. So the handler itself removes the temporary files being written (the outputs
# keep their old content), stops the workers, says one word and leaves.
def _interrupt(signum, frame) -> None:
    _leave(EXIT_INTERRUPTED, "interrupted")


def _terminate(signum, frame) -> None:
    _leave(Terminated(signum).exit_code, "terminated")


def _leave(code: int, what: str) -> None:
    """Stop now: no second interruption, no temporary file or worker left, one line, ``code``.
    ``os._exit`` also keeps CPython from turning a handled Ctrl-C into a SIGINT exit (-2)."""
    # the signal may land in the middle of an import: a module in sys.modules may lack the function
    # asked for, and an exception here would escape into the run (or be swallowed by importlib's
    # lock callbacks, and the run go on). Whatever fails, the process leaves.
    try:
        _stop(code, what)
        atomic = sys.modules.get("trnsim.atomic")
        discard = getattr(atomic, "discard_pending", None)
        if discard is not None:
            discard()
        # the signal may have landed inside a write to the same stream: what is out is out
        _flushed(code)
    except BaseException:  # noqa: BLE001 - nothing may stop the exit below
        pass
    os._exit(code)


def _watched() -> bool:
    """Whether a profiler, tracer, coverage tool or debugger is watching the run: the old hooks
    (``sys.setprofile``, ``sys.settrace``), the tools of ``sys.monitoring`` (Python 3.12+: cProfile's
    own), or pdb, which clears its tracer on ``continue`` and takes control back at the exit."""
    if sys.getprofile() is not None or sys.gettrace() is not None or "pdb" in sys.modules:
        return True
    monitoring = getattr(sys, "monitoring", None)
    return monitoring is not None and any(monitoring.get_tool(tool) is not None for tool in range(6))


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
    # a half-imported multiprocessing (the signal landed in its import) has started no worker yet
    active_children = getattr(sys.modules.get("multiprocessing"), "active_children", None)
    if active_children is None:
        return
    # no process starts from here on: a Dask nanny (a thread of this process) replaces a worker it
    # sees stopped, and the new one, half started when this process leaves, would print a traceback
    process = sys.modules.get("multiprocessing.process")
    if process is not None:
        process.BaseProcess.start = _no_more_processes
    children = active_children()
    for child in children:
        child.terminate()
    for child in children:
        child.join(timeout=5)


def _no_more_processes(self) -> None:
    raise RuntimeError("trnsim is stopping: no new process")


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
