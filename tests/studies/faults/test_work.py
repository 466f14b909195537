"""The work a fault study needs, refused past the limit (trnsim.studies.faults.work)."""

import pytest

from studies.faults.common import GIB, loader, sweep
from trnsim.studies.faults import single_failures
from trnsim.topology import load_topology
from trnsim.topology.faults import components


@pytest.mark.parametrize("sku", ["trn2-nl16", "trn2-nl64", "trn3-nl32x2-gen1"])
def test_refinement_work_counts_the_rounds_every_part_takes(sku):
    """The rounds are measured on one part per kind: on the catalog's symmetric fabrics every part of
    a kind takes as many (checked part by part)."""
    from trnsim.studies.faults import Refiner, refinement_work

    topology = load_topology(sku)
    parts = components(topology)
    refiner = Refiner(topology)
    brute = sum(refiner.key(part)[1] for part in parts) * (len(topology.nodes) + 2 * len(topology.links))
    assert refinement_work(topology, parts)[0] == brute


@pytest.mark.parametrize("exhaustive", [False, True])
def test_a_sweep_over_the_limit_is_refused_before_any_run(monkeypatch, exhaustive):
    """A 16x16x16 torus swept for 285 s, --exhaustive on a 256-chip torus over 300 s: both now refused."""
    import trnsim.model.engine
    from trnsim.errors import UsageError

    topology = load_topology("trn2-nl64")
    monkeypatch.setattr(trnsim.model.engine, "evaluate", lambda *a, **k: pytest.fail("ran before the check"))
    monkeypatch.setenv("TRNSIM_MAX_FAULTS_WORK", "1000")
    what = "runs 2 ops on 64 ranks" if exhaustive else "tells 256 parts apart"
    with pytest.raises(UsageError, match=f"{what}.*TRNSIM_MAX_FAULTS_WORK"):
        single_failures(
            loader("trn2-nl64"), topology, ["allreduce", "alltoall"], [GIB], exhaustive=exhaustive
        )


def test_the_sweep_counts_one_run_per_distinct_failure_that_leaves_chips(monkeypatch):
    from trnsim.errors import UsageError
    from trnsim.studies.faults import RUN_OVERHEAD, refinement_work

    topology = load_topology("trn2-nl64")  # cuboid: a failed chip takes the torus, so it is not run
    refine = refinement_work(topology, components(topology))[0]
    per_run = topology.n_ranks * (len(topology.nodes) + 2 * len(topology.links)) + RUN_OVERHEAD
    report = sweep("trn2-nl64")
    runs = 1 + report.evaluated  # the healthy system and each distinct failure run
    monkeypatch.setenv("TRNSIM_MAX_FAULTS_WORK", str(refine + runs * per_run))
    sweep("trn2-nl64")
    monkeypatch.setenv("TRNSIM_MAX_FAULTS_WORK", str(refine + runs * per_run - 1))
    with pytest.raises(UsageError, match="TRNSIM_MAX_FAULTS_WORK"):
        sweep("trn2-nl64")
