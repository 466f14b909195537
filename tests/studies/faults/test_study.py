"""One system's whole fault study (trnsim.studies.faults.study): what ``trnsim faults`` shows is the
sweep's, the rates', the stragglers' and the draws' own figures, counted in physical chips."""

import pytest

from studies.faults.common import DEFAULT_RATES, GIB
from trnsim.studies.faults import (
    StudyOptions,
    draw_summary,
    loader,
    random_failures,
    reliability,
    run_study,
    single_failures,
    straggler,
)
from trnsim.studies.variants import Variant


def test_a_study_is_its_parts_and_counts_chips_not_ranks():
    variant = Variant.parse("trn2-nl16", common=("chip.ranks=2", "chip.rank_gbps=500"))
    topology, load = variant.load(), loader(variant)
    options = StudyOptions(
        ["allreduce"], [1 << 20, GIB], policy="node", domains=10, random=2, samples=3, seed=5
    )
    study = run_study(load, topology, options)
    report = single_failures(load, topology, ["allreduce"], [1 << 20, GIB], "node")
    assert study.keys == [("allreduce", 1 << 20), ("allreduce", GIB)]
    assert study.key == ("allreduce", GIB)  # the first op at its largest size
    rel = reliability(report, DEFAULT_RATES, options.mttr_h)
    # 32 ranks on 16 chips: the study counts what is out of service in chips
    assert study.report.chips == 16
    assert study.summary["chips_out"] == pytest.approx(rel.chips_out / 2)
    assert 0 < study.summary["chips_out"] <= 16
    assert sum(row["chips_out"] for row in study.rates_by_class) >= study.summary["chips_out"] - 1e-12
    assert study.summary["availability"] == pytest.approx(rel.availability)
    lag = straggler(report, DEFAULT_RATES, options.mttr_h, study.key, 10)
    assert study.straggler == lag
    assert study.summary["expected_slowdown"] == pytest.approx(lag["expected_slowdown"])
    draws = random_failures(load, topology, ["allreduce"], [1 << 20, GIB], 2, 3, 5, DEFAULT_RATES, "node")
    assert study.draws == draw_summary(report, draws, study.keys)


def test_the_loader_builds_the_healthy_system_once_and_keeps_the_variants_own_failures(monkeypatch):
    import trnsim.topology.load as load_module
    from trnsim.topology.load import load_topology

    variant = Variant.parse("nl16:set=latency.step_ns=1000:fail=chip:5")
    cases = [["chip:1"], ["link:2,3"], []]
    expected = [
        load_topology("nl16", None, [*variant.edits(), *(f"fail={t}" for t in case)]) for case in cases
    ]
    built = []
    real = load_module.load_healthy
    monkeypatch.setattr(load_module, "load_healthy", lambda *args: built.append(args) or real(*args))
    load = loader(variant)
    for failures, want in zip(cases, expected, strict=True):
        got = load(failures)
        assert (got.chips, got.links, got.overrides, got.faults) == (
            want.chips,
            want.links,
            want.overrides,
            want.faults,
        )
    assert len(built) == 1 and "chip:5" in load([]).faults


def test_a_loader_sent_to_a_worker_leaves_its_built_system_behind():
    import pickle

    load = loader(Variant.parse("nl16"))
    assert len(load(["chip:1"]).chips) == 15 and load._healthy
    copy = pickle.loads(pickle.dumps(load))
    assert copy == load and copy._healthy == [] and len(copy(["chip:1"]).chips) == 15
