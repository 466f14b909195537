"""Sweeps over processes: a variant's tasks run together, the largest variants first, and the rows and
errors come out as one process gives them, in the tasks' order."""

import pytest

from tests.studies.sweep_tasks import SIZES, plain, sweep_tasks
from trnsim.errors import UsageError
from trnsim.model.backend import Selection
from trnsim.studies.sweep import Task, run_sweep, units
from trnsim.studies.variants import Variant
from trnsim.topology.load import load_topology


def test_units_gather_a_variants_tasks_and_put_the_largest_first():
    tasks = sweep_tasks(["nl16", "nl72x2", "nl64"], ops=("allreduce", "alltoall", "allgather"))
    tasks.append(Task(Variant(sku="nl16"), (), "reducescatter", "auto", SIZES))  # nl16 again, at the end
    found = units(tasks)
    assert sorted(i for unit in found for i in unit) == list(range(len(tasks)))
    for unit in found:
        assert unit == sorted(unit) and len({tasks[i].variant for i in unit}) == 1
    # the size: links and ranks (what routing and bounds grow with) times the variant's tasks
    size = {}
    for sku in ("nl16", "nl72x2", "nl64"):
        topology = load_topology(sku)
        size[sku] = (len(topology.links) + topology.n_ranks) * sum(t.variant.sku == sku for t in tasks)
    assert [tasks[unit[0]].variant.sku for unit in found] == sorted(size, key=size.get, reverse=True)


def test_two_workers_give_one_processs_rows_in_its_order():
    tasks = sweep_tasks(
        ["nl16", "nl32x2", "nl64"], algos=("auto", "nvls")
    )  # nvls applies nowhere here: skipped
    done = []
    alone = plain(run_sweep(tasks, 1))
    apart = plain(run_sweep(tasks, 2, done.append))
    assert apart == alone and done == tasks
    assert any("skipped" in rows[0] for rows in alone) and any("skipped" not in rows[0] for rows in alone)


def test_two_workers_raise_the_error_one_process_meets_first():
    """nl72x2 has racks; nl16 and nl64 (tori) have none: one process stops at nl16's task, and so do
    two workers, whichever of nl16's and nl64's tasks finishes first."""
    tasks = sweep_tasks(["nl72x2", "nl16", "nl64"], ops=("allreduce",), selection=Selection(group="rack:0"))
    for jobs in (1, 2):
        with pytest.raises(UsageError, match="trn2-nl16 has no racks"):
            list(run_sweep(tasks, jobs))


def test_a_system_that_cannot_load_is_its_first_tasks_error_on_every_engine(tmp_path):
    """One process runs the tasks before it, then raises; two workers do the same, and with the
    system first no engine is started at all (a scheduler that would not answer is never reached)."""
    from trnsim.errors import TrnsimError
    from trnsim.studies.engines import EngineOptions

    missing = Variant(file=str(tmp_path / "missing.yaml"))
    good = sweep_tasks(["nl16"], ops=("allreduce",))
    tasks = good + [Task(missing, (), "allreduce", "auto", SIZES)] + sweep_tasks(["nl64"], ops=("allreduce",))
    found = {}
    for jobs in (1, 2):
        rows = []
        with pytest.raises(TrnsimError) as error:
            rows.extend(run_sweep(tasks, jobs))
        found[jobs] = (plain(rows), str(error.value))
    assert found[1] == found[2] and len(found[1][0]) == 1 and "missing.yaml" in found[1][1]
    nowhere = EngineOptions(engine="dask", scheduler="tcp://127.0.0.1:9", connect_timeout_s=30.0)
    with pytest.raises(TrnsimError) as error:
        list(run_sweep(tasks[1:], engine=nowhere))
    assert str(error.value) == found[1][1]
