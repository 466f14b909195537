"""The local engine (trnsim.studies.engines.local): tasks here or over worker processes, their results
in the tasks' order, and workers that run BLAS on one thread."""

import os

import pytest

from trnsim.errors import UsageError
from trnsim.studies.engines import EngineOptions, run_ordered


def square(n: int) -> int:
    if n < 0:
        raise UsageError(f"task {n} refuses")
    return n * n


def pid_of(n: int) -> int:
    return os.getpid()


@pytest.mark.parametrize("jobs", [1, 2])
def test_results_come_in_the_tasks_order_with_progress_in_that_order(jobs):
    tasks = list(range(9))
    done = []
    batches = [[7, 8], [0, 3], [1, 2, 4, 5, 6]]  # the largest is not first: the order stays the tasks'
    found = list(run_ordered(square, tasks, EngineOptions(jobs=jobs), done.append, batches))
    assert found == [n * n for n in tasks] and done == tasks


def test_a_batch_runs_in_one_worker_and_the_batches_spread():
    batches = [[0, 1, 2], [3, 4, 5]]
    pids = list(run_ordered(pid_of, list(range(6)), EngineOptions(jobs=2), batches=batches))
    assert len(set(pids[:3])) == 1 and len(set(pids[3:])) == 1 and os.getpid() not in pids


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_first_error_in_the_tasks_order_is_raised_after_the_results_before_it(jobs):
    tasks = [1, 2, -3, 4, -5]
    found = []
    with pytest.raises(UsageError, match="task -3 refuses"):
        for result in run_ordered(square, tasks, EngineOptions(jobs=jobs), batches=[[3, 4], [0, 1, 2]]):
            found.append(result)
    assert found == [1, 4]


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads /proc")
def test_a_worker_runs_blas_on_one_thread():
    """Told through each loaded OpenBLAS's own call (read back with its getter), and through the
    environment for those a worker loads later. In a process of its own: the change is for good."""
    import subprocess
    import sys

    code = (
        "import ctypes, os, numpy\n"
        "from trnsim.studies.engines.local import one_blas_thread\n"
        "told = one_blas_thread()\n"
        "names = ('scipy_openblas_get_num_threads64_', 'scipy_openblas_get_num_threads',\n"
        "         'openblas_get_num_threads64_', 'openblas_get_num_threads')\n"
        "for path in told:\n"
        "    lib = ctypes.CDLL(path)\n"
        "    print(next(getattr(lib, n) for n in names if hasattr(lib, n))())\n"
        "loaded = any('openblas' in line.lower() for line in open('/proc/self/maps'))\n"
        "print(os.environ['OPENBLAS_NUM_THREADS'], len(told), loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    *counts, last = done.stdout.split("\n")[:-1]
    threads, told, loaded = last.split()
    assert threads == "1" and all(count == "1" for count in counts) and int(told) == len(counts)
    assert int(told) >= 1 or loaded == "False"  # numpy's OpenBLAS (the wheels') is always told
