"""Single failures, blast radius, failure rates and stragglers (trnsim.studies.reliability)."""

import json

import pytest

from trnsim.model.engine import evaluate
from trnsim.studies.reliability import (
    RATES,
    ClassResult,
    FaultReport,
    Outcome,
    equivalence_classes,
    loss_summary,
    random_failures,
    reliability,
    single_failures,
    straggler,
)
from trnsim.topology import load_topology
from trnsim.topology.faults import Component, components

GIB = 1 << 30
DEFAULT_RATES = {name: value for name, (value, _) in RATES.items()}


def loader(sku, overrides=()):
    def load(faults, keep_largest=False):
        extra = [f"fail={text}" for text in faults]
        return load_topology(sku, overrides=list(overrides) + extra, keep_largest=keep_largest)

    return load


def sweep(sku, ops=("allreduce",), sizes=(GIB,), overrides=(), **options):
    topology = load_topology(sku, overrides=list(overrides))
    return single_failures(loader(sku, overrides), topology, list(ops), list(sizes), **options)


def by_kind(report):
    return {result.kind: result for result in report.classes}


@pytest.mark.parametrize(("sku", "lost"), [("trn2-nl64", 64), ("trn2-nl256-concept", 256)])
def test_one_failed_chip_takes_the_whole_torus_under_cuboid(sku, lost):
    report = sweep(sku, kinds=["chip"])
    chip = by_kind(report)["chip"]
    assert all(len(outcome.lost) == lost for outcome in chip.outcomes)
    assert chip.outcomes[0].busbw_gbps[("allreduce", GIB)] == 0.0


def test_a_failed_torus_link_loses_no_chip_and_costs_what_the_collective_measures():
    report = sweep("trn2-nl64", kinds=["link z"])
    link = by_kind(report)["link z"]
    assert link.lost_max == 0 and link.count == 64
    outcome = link.outcomes[0]
    # the sweep's figure is a plain run of the collective on the system without that link
    degraded = load_topology("trn2-nl64", overrides=[f"fail={outcome.component.spec}"])
    alone = evaluate(degraded, "allreduce", [GIB], degraded.chips).rows[0].busbw_gbps
    assert outcome.busbw_gbps[("allreduce", GIB)] == pytest.approx(alone, rel=1e-12)
    assert 0 < alone < report.healthy[("allreduce", GIB)]


@pytest.mark.parametrize(("policy", "lost"), [("chip", 1), ("node", 4), ("rack", 72)])
def test_the_blast_radius_of_a_chip_on_a_switched_fabric(policy, lost):
    report = sweep("trn3-nl72x2-gen1", kinds=["chip"], policy=policy)
    assert by_kind(report)["chip"].lost_max == lost


def test_spares_hide_switch_and_tray_failures_from_all_reduce_but_not_the_lane_after_them():
    report = sweep("trn3-nl72x2-gen1", kinds=["switch plane", "switch tray", "lanes beyond spares"])
    rows = {row["kind"]: row for row in loss_summary(report, ("allreduce", GIB))}
    assert rows["switch plane"]["worst_loss"] == pytest.approx(0.0, abs=1e-12)
    assert rows["switch tray"]["worst_loss"] == pytest.approx(0.0, abs=1e-12)
    assert rows["lanes beyond spares"]["worst_loss"] > 0.001


@pytest.mark.parametrize("overrides", [(), ("torus.axes.x.wrap=false",)])
def test_parts_that_look_alike_give_what_failing_each_one_gives(overrides):
    # brute force: every link of a 4x4 torus (and of a torus with one axis unwrapped, where links
    # are not all alike) failed in turn gives the same worst and mean as one per equivalence class
    fast = sweep("trn2-nl16", ops=("allreduce", "alltoall"), overrides=overrides, kinds=["link x", "link y"])
    every = sweep(
        "trn2-nl16",
        ops=("allreduce", "alltoall"),
        overrides=overrides,
        kinds=["link x", "link y"],
        exhaustive=True,
    )
    for key in fast.healthy:
        for a, b in zip(loss_summary(fast, key), loss_summary(every, key), strict=True):
            assert a["worst_loss"] == pytest.approx(b["worst_loss"], abs=1e-9)
            assert a["mean_loss"] == pytest.approx(b["mean_loss"], abs=1e-9)
    assert fast.evaluated < every.evaluated


def test_equivalence_classes_count_every_part_once():
    topology = load_topology("trn3-nl72x2-gen1")
    parts = components(topology)
    classes = equivalence_classes(topology, parts)
    assert sum(len(alike) for alike in classes) == len(parts)
    assert len(classes) == len({part.kind for part in parts})  # the catalog's fabric is that symmetric


def synthetic(outcomes_by_kind, chips=10):
    classes = [
        ClassResult(kind, sum(o.weight for o in outcomes), outcomes) for kind, outcomes in outcomes_by_kind
    ]
    return FaultReport("x", chips, "chip", {("allreduce", 1): 100.0}, classes, 0)


def test_failure_rates_add_up():
    chip = Component("chip", "chip:0", rate="chip")
    link = Component("link a", "link:0,1", rate="copper link")
    report = synthetic(
        [
            ("chip", [Outcome(chip, 10, ["c"], {("allreduce", 1): 50.0})]),
            ("link a", [Outcome(link, 40, [], {("allreduce", 1): 80.0})]),
        ]
    )
    rates = {"chip": 1000.0, "copper link": 4000.0}
    result = reliability(report, rates, mttr_h=10.0)
    assert result.failures_per_year == pytest.approx(10 * 8766 / 1000 + 40 * 8766 / 4000)
    u = 10 / (1000 + 10)  # a chip is down MTTR / (MTTF + MTTR) of the time
    assert result.chips_out == pytest.approx(10 * u)  # each chip lost only by its own failure
    assert result.availability == pytest.approx(1 - u)
    assert result.p_degraded == pytest.approx(1 - (1 - u) ** 10 * (1 - 10 / 4010) ** 40)


def test_harsh_rates_keep_every_share_between_zero_and_one():
    chip = Component("chip", "chip:0", rate="chip")
    report = synthetic([("chip", [Outcome(chip, 10, list("abcdefghij"), {("allreduce", 1): 0.0})])])
    for mttf in (1.0, 100.0, 1e6):
        result = reliability(report, {"chip": mttf}, mttr_h=1e5)
        assert 0 <= result.chips_out <= 10 and 0 <= result.availability <= 1
        lag = straggler(report, {"chip": mttf}, 1e5, ("allreduce", 1), 1000)
        assert 0 <= lag["p_some_down"] <= 1 and lag["expected_slowdown"] >= 1


def test_a_job_over_many_domains_waits_for_its_slowest():
    link = Component("link a", "link:0,1", rate="copper link")
    report = synthetic([("link a", [Outcome(link, 5, [], {("allreduce", 1): 50.0})])])
    rates = {"copper link": 1000.0}
    u = 10 / (1000 + 10)
    none, one = (1 - u) ** 5, 5 * u * (1 - u) ** 4  # no link down; exactly one (two or more: a spare)
    for domains in (1, 10, 100):
        result = straggler(report, rates, 10.0, ("allreduce", 1), domains)
        # slowdown 2 (busbw halves) unless every domain is healthy
        healthy = none / (none + one)
        assert result["expected_slowdown"] == pytest.approx(1 + (1 - healthy**domains))
        assert result["p_some_down"] == pytest.approx(1 - (none + one) ** domains)


def test_random_failures_are_reproducible_and_drawn_by_rate():
    topology = load_topology("trn3-nl32x2-gen1")
    load = loader("trn3-nl32x2-gen1")
    one = random_failures(load, topology, ["allreduce"], [GIB], 2, 4, 7, DEFAULT_RATES)
    two = random_failures(load, topology, ["allreduce"], [GIB], 2, 4, 7, DEFAULT_RATES)
    assert [o.note for o in one] == [o.note for o in two]
    assert all(len(o.note.split("; ")) == 2 for o in one)
    # chips fail a thousand times as often as copper links: they dominate the draws
    assert sum(o.note.count("chip:") for o in one) >= 6


def test_faults_on_the_command_line(cli):
    result = cli("faults", "nl64", "nl72x2", "--op", "allreduce", "--domains", "10", "--format", "json")
    assert result.code == 0, result.err
    systems = {s["system"]: s for s in json.loads(result.out)["systems"]}
    nl64 = {row["kind"]: row for row in systems["trn2-nl64"]["classes"]}
    assert nl64["chip"]["chips_lost_max"] == 64 and nl64["link z"]["chips_lost_max"] == 0
    assert (
        systems["trn2-nl64"]["reliability"]["availability"]
        < systems["trn3-nl72x2-gen1"]["reliability"]["availability"]
    )
    assert systems["trn3-nl72x2-gen1"]["straggler"]["expected_slowdown"] >= 1.0
    fit = cli("faults", "nl16", "--op", "allreduce", "--failure-rate", "chip=1e4", "--format", "json")
    assert json.loads(fit.out)["rates_mttf_h"]["chip"] == pytest.approx(1e5)  # 10^9 h / 10^4 failures
    for bad in (
        ("--blast-radius", "x"),
        ("--mttf", "chip"),
        ("--mttf", "chip=-1"),
        ("--kind", "nope"),
        ("--failure-rate", "chip=0"),
    ):
        failed = cli("faults", "nl16", *bad)
        assert failed.code == 2 and "Traceback" not in failed.err
    assert cli("faults").code == 2
    tiny = cli("faults", "nl16", "--sizes", "1")
    assert tiny.code == 2 and "--sizes 1" in tiny.err


def test_failed_chips_are_sampled_and_agree_with_failing_each():
    # a failed chip changes the survivors' rank order: several chips per class are evaluated, and
    # on NL32x2 their mean is within a few points of failing every chip in turn
    fast = sweep("trn3-nl32x2-gen1", kinds=["chip"], policy="chip")
    every = sweep("trn3-nl32x2-gen1", kinds=["chip"], policy="chip", exhaustive=True)
    (a,) = loss_summary(fast, ("allreduce", GIB))
    (b,) = loss_summary(every, ("allreduce", GIB))
    assert len(fast.classes[0].outcomes) == 6 and b["distinct"] == 64
    assert a["mean_loss"] == pytest.approx(b["mean_loss"], abs=0.05)
    assert a["worst_loss"] <= b["worst_loss"] + 1e-12


def test_cuboid_is_a_torus_policy_and_a_cut_off_chip_takes_the_torus():
    from trnsim.errors import UsageError

    with pytest.raises(UsageError, match="for tori"):
        sweep("trn3-nl32x2-gen1", kinds=["chip"], policy="cuboid")
    # x0.y0 keeps one link; failing it cuts the chip off, and a torus job needs every chip
    base = ("fail=link:0,1", "fail=link:0,3", "fail=link:0,4")
    report = sweep("trn2-nl16", overrides=base, kinds=["link x"])
    cut = [o for o in report.classes[0].outcomes if "x0.y0" in o.component.spec.split(":")[1].split(",")]
    assert cut and all(len(o.lost) == 16 and o.busbw_gbps[("allreduce", GIB)] == 0 for o in cut)


def test_a_failure_that_leaves_no_two_chips_connected_loses_the_domain():
    # NVL72 has one switch plane: failing it cuts every GPU off alone (it used to divide by zero)
    (plane,) = sweep("gb200-nvl72", kinds=["plane"]).classes
    assert plane.lost_max == 72 and plane.outcomes[0].busbw_gbps[("allreduce", GIB)] == 0.0


@pytest.mark.parametrize("sku", ["trn2-nl16", "trn2-nl64", "trn3-nl32x2-gen1"])
def test_refinement_work_counts_the_rounds_every_part_takes(sku):
    """The rounds are measured on one part per kind: on the catalog's symmetric fabrics every part of
    a kind takes as many (checked part by part)."""
    from trnsim.studies.reliability import _Refiner, refinement_work

    topology = load_topology(sku)
    parts = components(topology)
    refiner = _Refiner(topology)
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
    from trnsim.studies.reliability import RUN_OVERHEAD, refinement_work

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


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mttr", "nan"], "error: --mttr nan is not a finite number"),  # the option's range let nan through
        (["--sizes", "-1G"], "error: --sizes: size '-1G' is negative"),
        (["--sizes", ""], "error: --sizes needs at least one size"),  # was run silently at 1 GiB
    ],
)
def test_bad_faults_options_are_named(cli, args, message):
    result = cli("faults", "nl16", *args)
    assert result.code == 2 and result.err.strip().splitlines()[0].startswith(message), result.err
    assert len(result.err.strip().splitlines()) == 1
