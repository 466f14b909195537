"""Sweep tasks and their rows as the sweep tests (one process, worker processes, Dask) build and
compare them."""

from trnsim.model.backend import Selection
from trnsim.studies.sweep import Task
from trnsim.studies.variants import Variant

SIZES = (1 << 10, 1 << 20)


def sweep_tasks(skus, ops=("allreduce", "alltoall"), algos=("auto",), selection=None) -> list[Task]:
    """Every SKU x op x algorithm at :data:`SIZES`, in that order."""
    return [
        Task(Variant(sku=s), (), op, algo, SIZES, selection or Selection())
        for s in skus
        for op in ops
        for algo in algos
    ]


def plain(results) -> list[list[dict]]:
    """Rows as comparable values (a skipped row holds the error itself)."""
    return [
        [{k: str(v) if k == "skipped" else v for k, v in row.items()} for row in rows] for rows in results
    ]
