"""The ``trnsim`` process: Ctrl-C and SIGTERM at any moment, worker processes, and outputs that
cannot be written. Each test runs trnsim as a process of its own, as a shell would."""

import importlib.util
import os
import signal
import subprocess
import sys
import time

import pytest

TRNSIM = [sys.executable, "-m", "trnsim"]
linux = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads /proc")


def _state(pid: int) -> str | None:
    """The process's state letter (``Z`` for a zombie), None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry))
    return found


def _handles_sigterm(pid: int) -> bool:
    """Whether the process has installed its own SIGTERM handler (trnsim does so first thing)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    except OSError:
        pass
    return False


def _wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.002)
    return False


@linux
@pytest.mark.parametrize("delay", [0.0, 0.01, 0.03, 0.1, 0.3])
def test_ctrl_c_at_any_moment_is_one_line_and_exit_130(delay):
    """From the moment trnsim's code runs (before typer, numpy or numba are imported) to the middle
    of the work. The few milliseconds before that are Python's own start-up."""
    process = subprocess.Popen(
        [*TRNSIM, "sweep", "--op", "allreduce", "--sizes", "1M,1G"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for(lambda: _handles_sigterm(process.pid) or process.poll() is not None, 5)
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert (process.returncode, err, out) == (130, "interrupted\n", "")


# the local pool, and a local Dask cluster (its nannies' worker processes, and multiprocessing's
# resource tracker, which frees their semaphores quietly once the run has left)
ENGINES = [[], pytest.param(["--engine", "dask"], marks=pytest.mark.skipif(
    importlib.util.find_spec("distributed") is None, reason="needs the dask extra"))]  # fmt: skip
# what a run on each engine says before it is stopped
SAID = {(): "", ("--engine", "dask"): "dask: a local cluster of 2 worker processes\n"}


def _said(err: str, engine, word: str) -> bool:
    """One line, ``word``, after what the engine says as it starts (if it had the time to say it)."""
    return err.endswith(f"{word}\n") and err[: -len(word) - 1] in ("", SAID[tuple(engine)])


def _sweep_with_workers(engine=(), **options) -> tuple[subprocess.Popen, list[int]]:
    process = subprocess.Popen(
        [*TRNSIM, "sweep", "--jobs", "2", "--sizes", "1M,1G", *engine],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TRNSIM_CACHE": "off"},  # the workers at work, not reading a cache
        **options,
    )
    # a local cluster's processes: multiprocessing's resource tracker and the 2 workers
    assert _wait_for(lambda: len(_children(process.pid)) >= (3 if engine else 2), 60), "no workers started"
    time.sleep(0.3 if not engine else 3)  # the workers are at work (Dask's start in a second or two)
    return process, _children(process.pid)


def _kill_left(workers: list[int]) -> None:
    """A failing test leaves no worker behind."""
    for pid in workers:
        if _state(pid) not in (None, "Z"):
            os.kill(pid, signal.SIGKILL)


@linux
@pytest.mark.parametrize("engine", ENGINES)
def test_sigterm_stops_a_sweeps_workers_too(engine):
    process, workers = _sweep_with_workers(engine)
    process.terminate()
    out, err = process.communicate(timeout=60)
    try:
        assert process.returncode == 128 + signal.SIGTERM and _said(err, engine, "terminated")
        assert _wait_for(lambda: all(_state(pid) in (None, "Z") for pid in workers), 10), [
            (pid, _state(pid)) for pid in workers
        ]
    finally:
        _kill_left(workers)


@linux
@pytest.mark.parametrize("engine", ENGINES)
def test_ctrl_c_in_a_terminal_stops_a_sweep_and_its_workers_with_one_line(engine):
    """A terminal sends SIGINT to every process of the job: the workers stay quiet, the sweep stops them."""
    process, workers = _sweep_with_workers(engine, start_new_session=True)
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=60)
    try:
        assert process.returncode == 130 and _said(err, engine, "interrupted")
        assert _wait_for(lambda: all(_state(pid) in (None, "Z") for pid in workers), 10)
    finally:
        _kill_left(workers)


def _run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE):
    return subprocess.run([*TRNSIM, *argv], stdout=stdout, stderr=stderr, text=True, timeout=120)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_an_output_that_cannot_be_written_exits_2_never_1():
    with open("/dev/full", "w") as full:
        bad_usage = _run(["topo", "show", "nl16", "--bogus"], stderr=full)
        both = _run(["topo", "show", "nl16"], stdout=full, stderr=full)
        note = _run(["topo", "export", "nl16", "-o", os.devnull], stderr=full)
        table = _run(["topo", "list"], stdout=full)
    assert (bad_usage.returncode, both.returncode, note.returncode) == (2, 2, 2)
    assert (
        table.returncode == 2 and table.stderr == "error: cannot write the output: No space left on device\n"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["topo", "list"],
        ["collective", "allreduce", "--help"],
        ["collective", "allreduce", "--sku", "nl16", "--sizes", "1M,1G"],
        ["collective", "allreduce", "--sku", "nl16", "--sizes", "1M,1G", "--format", "csv"],
        ["collective", "allreduce", "--sku", "nl16", "--sizes", "1M,1G", "--format", "json"],
    ],
)
def test_a_reader_that_goes_away_is_not_an_error(argv):
    """`trnsim ... | head -1`: the reader closes the pipe before trnsim writes (here before it even
    starts, so that every write fails); that is exit 0 and silence, never 1 (a failed threshold)."""
    read, write = os.pipe()
    os.close(read)
    try:
        result = _run(argv, stdout=write)
    finally:
        os.close(write)
    assert (result.returncode, result.stderr) == (0, "")


@pytest.mark.parametrize("half_imported", ["multiprocessing", "trnsim.atomic"])
def test_a_signal_landing_in_an_import_still_leaves_with_its_code(monkeypatch, capsys, half_imported):
    """A Ctrl-C inside ``import multiprocessing`` (or trnsim.atomic) finds the module in sys.modules
    without its functions yet: the handler must still leave, not raise into the run (where importlib
    swallowed the error and the run went on to exit 0)."""
    import multiprocessing
    import multiprocessing.process
    import types

    from trnsim.cli import entry

    # the handler stops new processes for good (the process leaves): this one gets its start back
    monkeypatch.setattr(
        multiprocessing.process.BaseProcess, "start", multiprocessing.process.BaseProcess.start
    )
    monkeypatch.setitem(sys.modules, half_imported, types.ModuleType(half_imported))
    monkeypatch.setattr(entry.signal, "signal", lambda *args: None)  # keep the test process's handlers
    left = []
    monkeypatch.setattr(entry.os, "_exit", lambda code: left.append(code))
    entry._leave(130, "interrupted")
    assert left == [130]
    assert capsys.readouterr().err == "interrupted\n"
    if half_imported != "multiprocessing":  # a Dask nanny replacing a stopped worker starts nothing
        with pytest.raises(RuntimeError, match="stopping"):
            multiprocessing.Process(target=print).start()


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads /proc")
@pytest.mark.parametrize(("given", "threads"), [({}, "1"), ({"OPENBLAS_NUM_THREADS": "2"}, "2")])
def test_blas_runs_on_one_thread_unless_the_user_said_otherwise(given, threads):
    """Read back from numpy's own OpenBLAS, loaded after the entry's default is in place."""
    code = (
        "import ctypes\n"
        "from trnsim.cli.entry import one_blas_thread_by_default\n"
        "one_blas_thread_by_default()\n"
        "import numpy\n"
        "paths = {l.split()[-1] for l in open('/proc/self/maps') if 'openblas' in l.lower() and '/' in l}\n"
        "names = ('scipy_openblas_get_num_threads64_', 'scipy_openblas_get_num_threads',\n"
        "         'openblas_get_num_threads64_', 'openblas_get_num_threads')\n"
        "for path in sorted(paths):\n"
        "    lib = ctypes.CDLL(path)\n"
        "    print(next(getattr(lib, n) for n in names if hasattr(lib, n))())\n"
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    }
    done = subprocess.run(
        [sys.executable, "-c", code], env={**env, **given}, capture_output=True, text=True, check=True
    )
    counts = done.stdout.split()
    assert counts and set(counts) == {threads}


_EXIT_CHILD = (
    "import atexit, sys, threading, time\n"
    "from trnsim.cli import entry\n"
    "atexit.register(lambda: print('handler ran', flush=True))\n"
    "if sys.argv[1] == 'thread':  # a thread of the run's, still busy when the command is done\n"
    "    threading.Thread(target=lambda: (time.sleep(0.3), print('thread done', flush=True))).start()\n"
    "sys.argv = ['trnsim', *sys.argv[2:]]\n"
    "entry.main()\n"
)


@pytest.mark.parametrize(
    ("case", "argv", "code"),
    [
        ("plain", ["topo", "show", "nl16", "--format", "json"], 0),
        ("plain", ["topo", "show", "no-such-sku"], 2),
        ("thread", ["topo", "show", "nl16", "--format", "json"], 0),
    ],
)
def test_leaving_skips_the_teardown_but_not_the_exit_handlers_nor_a_running_thread(case, argv, code):
    """The exit code, the whole output, then the exit handlers' lines; a thread still running is
    waited for (Python's own exit), as it was before the teardown was skipped."""
    done = subprocess.run(
        [sys.executable, "-c", _EXIT_CHILD, case, *argv], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == code, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "handler ran"
    if code == 0:
        import json

        shown = json.loads("\n".join(line for line in lines if line not in ("handler ran", "thread done")))
        assert shown["name"] == "trn2-nl16"
    assert ("thread done" in lines) == (case == "thread")


def test_a_profiled_run_still_returns_to_its_profiler():
    """`python -m cProfile -m trnsim ...` prints its figures after the run: it must get there."""
    done = subprocess.run(
        [sys.executable, "-m", "cProfile", "-s", "ncalls", "-m", "trnsim", "topo", "show", "no-such-sku"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "function calls" in done.stdout and done.stderr.startswith("error: unknown SKU"), done.stderr


def test_pdb_gets_control_back_at_the_exit():
    """pdb clears its tracer on `continue`; at the exit it must still say how the program ended."""
    done = subprocess.run(
        [sys.executable, "-m", "pdb", "-m", "trnsim", "--version"],
        input="c\nq\n", capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "The program exited via sys.exit()" in done.stdout, done.stdout[-500:]


@pytest.mark.parametrize("tools", [{}, {2: "cProfile"}, {0: "a debugger"}])
def test_a_tool_of_sys_monitoring_counts_as_watching(monkeypatch, tools):
    """From Python 3.12 cProfile, coverage and debuggers hook in through sys.monitoring, which
    sys.getprofile() does not show."""
    from trnsim.cli import entry

    class Monitoring:
        @staticmethod
        def get_tool(tool):
            return tools.get(tool)

    monkeypatch.setattr(sys, "monitoring", Monitoring, raising=False)
    monkeypatch.setattr(sys, "getprofile", lambda: None)
    monkeypatch.setattr(sys, "gettrace", lambda: None)
    monkeypatch.delitem(sys.modules, "pdb", raising=False)
    assert entry._watched() == bool(tools)


def test_a_regression_still_fails_when_the_reader_goes_away(tmp_path):
    """`trnsim sweep --baseline b.json | head -1` in CI: the table's reader leaves, the check still
    runs and exits 1 (a table larger than stdout's buffer used to end the run at exit 0)."""
    import json

    saved, raised = tmp_path / "b.json", tmp_path / "raised.json"
    argv = ["sweep", "--sku", "nl16", "--op", "allreduce", "--format", "csv"]
    assert _run([*argv, "--save-baseline", str(saved)]).returncode == 0
    document = json.loads(saved.read_text())
    for row in document["rows"]:  # every row 50% better than this run will be
        row["busbw_gbps"] *= 1.5
    raised.write_text(json.dumps(document))
    read, write = os.pipe()
    os.close(read)
    try:
        result = _run([*argv, "--baseline", str(raised)], stdout=write)
    finally:
        os.close(write)
    assert result.returncode == 1 and "regression:" in result.stderr
