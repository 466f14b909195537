"""The local engine: tasks in this process, or over worker processes on this machine.

Over processes, each batch runs in one worker (what a batch's first task builds serves the others, as
it does in one process), the batches in the order given (the largest first), each to the next free
worker; the results still come out in the tasks' order. A worker runs BLAS on one thread and leaves
signals to the parent, which stops the workers on an error, Ctrl-C, SIGTERM, or when the caller stops
reading.
"""

import os
from collections.abc import Callable, Iterator


def run_local(
    function: Callable, tasks: list, jobs: int, progress: Callable | None, batches: list[list[int]]
) -> Iterator:
    """See :func:`trnsim.studies.engines.run_ordered` (the local engine's part of it)."""
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            result = function(task)
            if progress:
                progress(task)
            yield result
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from trnsim.studies.engines import in_order, run_batch

    before = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(batches)), initializer=_worker_start)
    try:
        submitted = {pool.submit(run_batch, function, [tasks[i] for i in batch]): batch for batch in batches}
        yield from in_order(tasks, _as_done(submitted), progress)
    except BaseException:  # an error, Ctrl-C, SIGTERM, or the caller stopped reading: stop the workers
        pool.shutdown(wait=False, cancel_futures=True)
        workers = [child for child in multiprocessing.active_children() if child not in before]
        for worker in workers:
            worker.terminate()  # waiting for their running tasks could take minutes
        for worker in workers:
            worker.join(timeout=5)
        raise
    pool.shutdown()


def _as_done(submitted: dict) -> Iterator[tuple[list[int], list]]:
    """(batch, its results) as each batch finishes."""
    from concurrent.futures import as_completed

    for future in as_completed(submitted):
        yield submitted[future], future.result()


def _worker_start() -> None:
    """A worker leaves Ctrl-C to the parent, which stops it (a terminal sends SIGINT to every process
    of the job: the workers would each print a traceback), and dies at once on SIGTERM (the parent's
    handler, inherited when the worker is forked, would unwind a task instead)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    prepare_worker()


_prepared = False


def prepare_worker() -> None:
    """Once per worker process: BLAS on one thread (:func:`one_blas_thread`), since the workers
    already fill the cores. Called by every batch; the local pool calls it as a worker starts."""
    global _prepared
    if not _prepared:
        one_blas_thread()
        _prepared = True


# the calls OpenBLAS builds export to set their thread count (numpy's and scipy's wheels rename theirs)
_BLAS_THREADS = (
    "scipy_openblas_set_num_threads64_",
    "scipy_openblas_set_num_threads",
    "openblas_set_num_threads64_",
    "openblas_set_num_threads",
)


def one_blas_thread() -> list[str]:
    """Run BLAS on one thread in this process; returns the libraries told so.

    OpenBLAS starts a thread per core and spins them between calls: in a sweep's worker they contend
    with the other workers for the same cores (two workers on two cores used 1.7 cores each and ran
    no faster than one). Those loaded already (numpy's) are told through their own call; those loaded
    later (scipy's) read ``OPENBLAS_NUM_THREADS``. Best effort: elsewhere than Linux, or with another
    BLAS, nothing is changed.
    """
    import ctypes

    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"
    told = []
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower() and "/" in line}
    except OSError:
        return told
    for path in sorted(paths):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        call = next((getattr(library, name) for name in _BLAS_THREADS if hasattr(library, name)), None)
        if call is not None:
            call(1)
            told.append(path)
    return told
