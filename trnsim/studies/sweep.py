"""Sweeps: the cross product of variants x ops x algorithms, optionally over several processes or a
Dask cluster (:mod:`trnsim.studies.engines`)."""

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache

from trnsim.model.backend import Selection
from trnsim.studies.engines import EngineOptions, run_ordered
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
    tasks: list[Task],
    jobs: int = 1,
    on_done: Callable[[Task], None] | None = None,
    engine: EngineOptions | None = None,
) -> Iterator[list[dict]]:
    """Run tasks in order (``jobs`` > 1 spreads them over processes; ``engine`` says where, and then
    ``jobs`` is ignored), yielding each task's rows (:func:`trnsim.studies.engines.run_ordered`).

    Over workers, the tasks of one variant run together in one worker (:func:`units`): what a
    variant's first task builds (its topology's arrays, routers, bounds) serves the others, as it
    does in one process. The largest variants go first, each to the next free worker, so that no
    worker is left with a long one at the end; the rows still come out in the tasks' order, and an
    error is raised where the tasks' order reaches it, as one process would raise it.
    """
    engine = engine or EngineOptions(jobs=jobs)
    if engine.engine == "local" and (engine.jobs <= 1 or len(tasks) <= 1):
        yield from run_ordered(run_task, tasks, engine, on_done)
        return
    # the systems load here first (units() weighs them): one that cannot load is an error of its
    # first task, raised after the tasks before it, as one process would, without a worker for it
    # (nor a cluster reached when it is the first)
    failed = next(((i, error) for i, error in enumerate(map(_load_error, tasks)) if error is not None), None)
    ahead = tasks if failed is None else tasks[: failed[0]]
    yield from run_ordered(run_task, ahead, engine, on_done, units(ahead))
    if failed is not None:
        raise failed[1]


def _load_error(task: Task) -> Exception | None:
    """The error loading a task's system raises, None when it loads."""
    try:
        _topology(task.variant)
    except Exception as error:  # noqa: BLE001 - raised by run_sweep where the tasks' order reaches it
        return error
    return None


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
