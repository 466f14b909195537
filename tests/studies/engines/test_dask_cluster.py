"""The Dask engine (trnsim.studies.engines.dask_cluster) on a local Dask cluster started here: the
same results as a local run in the same order, a worker killed mid-run losing and duplicating no
result, a scheduler that does not answer, and a task's own error."""

import os
import signal
import socket
import time

import pytest

from tests.studies.sweep_tasks import plain, sweep_tasks
from trnsim.errors import UsageError
from trnsim.model.backend import Selection
from trnsim.studies.engines import EngineOptions, run_ordered
from trnsim.studies.sweep import run_sweep

distributed = pytest.importorskip("distributed")


def _cluster(**config):
    """A small local cluster (2 worker processes, 1 thread each) as the engine starts one, whose
    workers keep no disk cache (a result must be worked out by the worker, not recalled)."""
    import dask

    from trnsim.studies.engines.dask_cluster import local_cluster

    with dask.config.set(config):
        return local_cluster(2, env={"TRNSIM_CACHE": "off"})


@pytest.fixture(scope="module")
def cluster():
    with _cluster() as started:
        yield started


@pytest.fixture(scope="module")
def impatient():
    """A cluster whose scheduler gives up on a task at the first worker it kills: what is left to
    the engine's own retries."""
    with _cluster(**{"distributed.scheduler.allowed-failures": 0}) as started:
        yield started


def on(cluster, **options) -> EngineOptions:
    return EngineOptions(engine="dask", scheduler=cluster.scheduler_address, **options)


def test_dask_gives_a_local_runs_rows_in_its_order(cluster, monkeypatch):
    monkeypatch.setenv("TRNSIM_CACHE", "off")
    tasks = sweep_tasks(["nl16", "nl32x2", "nl64"], algos=("auto", "nvls"))  # nvls applies nowhere: skipped
    done = []
    alone = plain(run_sweep(tasks, 1))
    apart = plain(run_sweep(tasks, on_done=done.append, engine=on(cluster)))
    assert apart == alone and done == tasks
    assert any("skipped" in rows[0] for rows in alone) and any("skipped" not in rows[0] for rows in alone)


def test_a_tasks_error_is_the_one_a_local_run_raises(cluster):
    """nl72x2 has racks, nl16 and nl64 (tori) none: the error is nl16's, as in one process, whichever
    worker finishes first."""
    tasks = sweep_tasks(["nl72x2", "nl16", "nl64"], ops=("allreduce",), selection=Selection(group="rack:0"))
    with pytest.raises(UsageError) as local:
        list(run_sweep(tasks, 1))
    with pytest.raises(UsageError) as remote:
        list(run_sweep(tasks, engine=on(cluster)))
    assert type(remote.value) is type(local.value) and str(remote.value) == str(local.value)
    assert "trn2-nl16 has no racks" in str(local.value)


def slow_square(task: tuple[int, float]) -> tuple[int, int]:
    n, pause = task
    time.sleep(pause)
    return n * n, os.getpid()


def kill_once(task: tuple[int, str]) -> int:
    """Task ``n``'s square; the first task to find no marker file kills its own worker first."""
    n, marker = task
    if n == 3:
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            pass
        else:
            os.kill(os.getpid(), signal.SIGKILL)
    return n * n


def kill_always(task: int) -> int:
    os.kill(os.getpid(), signal.SIGKILL)
    return task


@pytest.mark.parametrize("where", ["cluster", "impatient"])
def test_a_worker_killed_by_its_task_loses_and_duplicates_no_result(request, tmp_path, where):
    """On ``cluster`` Dask gives the lost task to another worker; on ``impatient`` its scheduler gives
    up and the engine submits the task again (and says so)."""
    marker = str(tmp_path / "killed")
    said = []
    tasks = [(n, marker) for n in range(8)]
    options = on(request.getfixturevalue(where), notice=said.append)
    done = []
    found = list(run_ordered(kill_once, tasks, options, done.append))
    assert os.path.exists(marker)  # a worker was killed
    assert found == [n * n for n in range(8)] and done == tasks
    assert (where == "impatient") == any(
        "task 4 failed" in line and "submitting it again" in line for line in said
    )


def test_a_worker_killed_from_outside_while_tasks_are_pending_loses_no_result(cluster):
    client = distributed.Client(cluster.scheduler_address, set_as_default=False)
    try:
        pids = set(client.run(os.getpid).values())
    finally:
        client.close()
    tasks = [(n, 0.2) for n in range(12)]
    killed = []

    def kill_after_the_first(task):
        if not killed:  # the other worker is in the middle of its task, the rest are pending
            victim = min(pids)
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    found = list(run_ordered(slow_square, tasks, on(cluster), kill_after_the_first))
    assert [square for square, _ in found] == [n * n for n, _ in tasks]
    assert killed and _gone(killed[0])  # it was killed, and the run went on without it


def _gone(pid: int) -> bool:
    """Whether the process has ended (gone, or a zombie left for its parent to collect)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_a_task_that_kills_every_worker_stops_after_the_retries_with_one_line(impatient):
    said = []
    started = time.monotonic()
    with pytest.raises(UsageError) as error:
        list(run_ordered(kill_always, [1], on(impatient, retries=1, notice=said.append)))
    text = str(error.value)
    assert "task 1 failed on 2 tries" in text and "\n" not in text
    (retried,) = [line for line in said if "submitting it again" in line]
    assert "its worker died" in retried and "retry 1 of 1" in retried
    assert time.monotonic() - started < 60


@pytest.fixture
def silent_port():
    """A port that accepts connections and never says a word (a scheduler that hangs)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


@pytest.mark.parametrize("kind", ["silent", "closed"])
def test_a_scheduler_that_does_not_answer_is_one_line_within_the_timeout(silent_port, kind):
    if kind == "closed":
        with socket.socket() as probe:  # a port nobody listens on
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
    else:
        port = silent_port
    options = EngineOptions(engine="dask", scheduler=f"tcp://127.0.0.1:{port}", connect_timeout_s=1.0)
    started = time.monotonic()
    with pytest.raises(UsageError) as error:
        list(run_ordered(slow_square, [(1, 0.0)], options))
    assert time.monotonic() - started < 10
    text = str(error.value)
    assert text.startswith(f"scheduler tcp://127.0.0.1:{port}: no Dask scheduler answered within 1 s (")
    assert "\n" not in text


class _Scheduler:
    """A client whose scheduler reports the workers given, one set per look (an error: gone)."""

    def __init__(self, *looks):
        self.looks = list(looks)

    def nthreads(self):
        look = self.looks.pop(0)
        if isinstance(look, Exception):
            raise look
        return dict.fromkeys(look, 1)


def test_the_watch_says_a_lost_worker_and_stops_a_run_left_without_any(monkeypatch):
    from trnsim.studies.engines import dask_cluster

    clock = iter(range(0, 1000, 2))  # each look 2 s after the one before
    monkeypatch.setattr(dask_cluster.time, "monotonic", lambda: next(clock))
    said = []
    options = EngineOptions(engine="dask", connect_timeout_s=3.0, notice=said.append)
    watch = dask_cluster._Watch(_Scheduler({"a", "b"}, {"b"}, set(), set(), set()), options)
    watch.check()
    assert said == ["dask: lost worker a; Dask gives its tasks to the others"]
    watch.check()  # none left: waited for...
    watch.check()  # ...2 s: not yet 3
    with pytest.raises(UsageError, match="the Dask cluster has had no worker for 3 s"):
        watch.check()


def test_the_watch_stops_a_run_whose_scheduler_is_gone_with_one_line(monkeypatch):
    from trnsim.studies.engines import dask_cluster

    clock = iter(range(0, 1000, 2))
    monkeypatch.setattr(dask_cluster.time, "monotonic", lambda: next(clock))
    watch = dask_cluster._Watch(_Scheduler({"a"}, OSError("Timed out\nmore")), EngineOptions(engine="dask"))
    with pytest.raises(UsageError) as error:
        watch.check()
    assert str(error.value) == "engine dask: lost the Dask scheduler (OSError: Timed out)"
