"""Sweeps: the cross product of variants x ops x algorithms, optionally over several processes."""

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cache

from trnsim.model.backend import Selection
from trnsim.studies.runtimes import priced, study_runtime
from trnsim.studies.variants import Variant, label_form, label_of


@dataclass(frozen=True)
class Task:
    """One evaluation of a sweep: a variant, an op, an algorithm, the sizes, and who runs it how
    (:class:`~trnsim.model.backend.Selection`, the same for every task of a sweep)."""

    variant: Variant
    common: tuple[str, ...]
    op: str
    algo: str
    sizes: tuple[int, ...]
    selection: Selection = Selection()
    dtype: str = "float"
    runtime: str | None = None  # None: each system's own default (:mod:`trnsim.studies.runtimes`)


@cache
def _topology(variant: Variant):
    return variant.load()


def run_task(task: Task) -> list[dict]:
    """Evaluate one task; rows are flat dicts ready for CSV or JSON. When the algorithm does not apply,
    one row ``{"skipped": error}`` (the :class:`~trnsim.errors.UsageError` saying why, which the
    caller shows in its own terms): a sweep skips such combinations and says so, and those a runtime
    cannot price. A runtime's rows carry ``runtime``, ``runtime_model`` and the ideal's figures
    (``ideal_busbw_gbps``...).

    A task's rows are kept on disk between runs (:mod:`trnsim.cache`), keyed by the task and its
    system file's bytes; a task that reads another file (a calibration, a traffic matrix, counts)
    and one that is skipped are worked out every time."""
    from trnsim import cache

    key = _key(task)
    rows = cache.MISSING if key is None else cache.recall("sweep", key)
    if rows is cache.MISSING:
        rows = _run_task(task)
        if key is not None and not any("skipped" in row for row in rows):
            cache.remember("sweep", key, rows)
    return rows


def _key(task: Task) -> str | None:
    """What a task's rows depend on, or None when it reads a file the key does not hold."""
    from trnsim.cache import Unkeyable, digest, enabled
    from trnsim.spec.names import system_bytes, system_file

    variant, chosen = task.variant, task.selection
    if (
        not enabled()
        or variant.calibrations
        or chosen.traffic_file is not None
        or chosen.counts_file is not None
    ):
        return None
    path = system_file(variant.sku, variant.file)
    content = system_bytes(path)
    if content is None:
        return None
    fields = (variant.sku, variant.file, variant.overrides, task.common, task.op, task.algo, task.sizes)
    where = (str(path), os.path.realpath(path))  # the path as given and where it leads
    try:
        return digest("sweep task", fields, chosen, task.dtype, task.runtime, where, content)
    except Unkeyable:  # an edit of undecodable bytes: the task is not kept
        return None


def _run_task(task: Task) -> list[dict]:
    from trnsim.errors import NotApplicableError, UsageError
    from trnsim.topology.groups import group_label

    topology = _topology(task.variant)
    chosen, costing = task.selection, task.selection.costing
    try:
        backend = chosen.backend(topology)
    except UsageError as reason:
        if chosen.groups is None:
            raise
        return [{"skipped": reason.within(topology.name)}]  # a spec one system lacks (racks on a torus)
    try:
        runtime = study_runtime(topology, backend, task.runtime, task.algo, task.op)
        result = priced(topology, backend.evaluate(task.op, list(task.sizes), task.algo, task.dtype), runtime)
    except NotApplicableError as reason:
        return [{"skipped": reason}]
    head = {
        "variant": label_of(topology, tuple(map(label_form, task.variant.overrides[len(task.common) :]))),
        "overrides": ", ".join(task.variant.overrides),
        "sku": topology.name,
        "op": task.op,
        "algo": task.algo,
        **({"runtime": runtime, "runtime_model": result.runtime_model} if runtime != "ideal" else {}),
        "group": group_label(chosen.group, chosen.ranks, chosen.groups),
        "ranks": result.ranks,
        "dtype": task.dtype.strip().lower(),
        "alpha_us": costing.alpha_us,
        "max_chunks": costing.max_chunks,
        "min_chunk_bytes": costing.min_chunk_bytes,
        "file": str(topology.path),
    }
    return [{**head, **row.as_dict()} for row in result.rows]


def run_sweep(
    tasks: list[Task], jobs: int = 1, on_done: Callable[[Task], None] | None = None
) -> Iterator[list[dict]]:
    """Run tasks in order (``jobs`` > 1 spreads them over processes), yielding each task's rows.

    Over processes, the tasks of one variant run together in one worker (:func:`units`): what a
    variant's first task builds (its topology's arrays, routers, bounds) serves the others, as it
    does in one process. The largest variants go first, each to the next free worker, so that no
    worker is left with a long one at the end; the rows still come out in the tasks' order, and an
    error is raised where the tasks' order reaches it, as one process would raise it.
    """
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            rows = run_task(task)
            if on_done:
                on_done(task)
            yield rows
        return
    import multiprocessing

    batches = units(tasks)
    before = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(batches)), initializer=_worker_start)
    try:
        yield from _in_order(
            tasks, [(batch, pool.submit(run_tasks, [tasks[i] for i in batch])) for batch in batches], on_done
        )
    except BaseException:  # an error, Ctrl-C, SIGTERM, or the caller stopped reading: stop the workers
        pool.shutdown(wait=False, cancel_futures=True)
        workers = [child for child in multiprocessing.active_children() if child not in before]
        for worker in workers:
            worker.terminate()  # waiting for their running tasks could take minutes
        for worker in workers:
            worker.join(timeout=5)
        raise
    pool.shutdown()


def _in_order(tasks: list[Task], submitted: list, on_done) -> Iterator[list[dict]]:
    """Each task's rows in the tasks' order, as the batches holding them finish."""
    from concurrent.futures import FIRST_COMPLETED, wait

    found: dict[int, list[dict] | BaseException] = {}
    pending, ready = {future: batch for batch, future in submitted}, 0
    while ready < len(tasks):
        while ready not in found:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                found.update(zip(pending.pop(future), future.result(), strict=False))
        rows = found.pop(ready)
        if isinstance(rows, BaseException):
            raise rows
        if on_done:
            on_done(tasks[ready])
        yield rows
        ready += 1


def run_tasks(tasks: list[Task]) -> list[list[dict] | Exception]:
    """Each task's rows, in order, up to the first that raises: that one's error ends the list."""
    out: list[list[dict] | Exception] = []
    for task in tasks:
        try:
            out.append(run_task(task))
        except Exception as error:  # raised in the parent when the tasks' order reaches it
            out.append(error)
            break
    return out


def units(tasks: list[Task]) -> list[list[int]]:
    """The tasks' indices by variant, each variant's in order, the largest variants first.

    A variant's size is its topology's links and ranks (what routing and bounds grow with) times
    its task count; the topologies load here, in the parent, and forked workers inherit them.
    """
    by_variant: dict[Variant, list[int]] = {}
    for i, task in enumerate(tasks):
        by_variant.setdefault(task.variant, []).append(i)

    def size(batch: list[int]) -> int:
        try:
            topology = _topology(tasks[batch[0]].variant)
        except Exception:  # its task raises the error, where the tasks' order reaches it
            return 0
        return (len(topology.links) + topology.n_ranks) * len(batch)

    return sorted(by_variant.values(), key=size, reverse=True)


def _worker_start() -> None:
    """A worker leaves Ctrl-C to the sweep, which stops it (a terminal sends SIGINT to every process
    of the job: the workers would each print a traceback), and dies at once on SIGTERM (the parent's
    handler, inherited when the worker is forked, would unwind a task instead). It runs BLAS on one
    thread (:func:`one_blas_thread`): the workers already fill the cores."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    one_blas_thread()


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
