"""Which runtime prices each system of a study (trnsim.studies.runtimes), and the studies that use it."""

from pathlib import Path

import pytest
import yaml

from trnsim.errors import NotApplicableError, ParameterError
from trnsim.model.backend import ManyGroups, OneGroup, Selection
from trnsim.model.runtimes.nccl import predict
from trnsim.model.runtimes.nccl_chunking import nvls_fill_us
from trnsim.model.runtimes.nccl_domain import nccl_system_of
from trnsim.studies.runtimes import ideal_only, known_runtime, priced, study_runtime, uniform_rows
from trnsim.studies.variants import Variant, run_variants
from trnsim.topology import load_topology

SIZES = [4096, 1 << 20, 1 << 30]


def nccl_default_file(tmp_path: Path) -> Path:
    """hgx-h100 under another name, as a file outside the catalog (it names nccl as its default)."""
    spec = yaml.safe_load(Path("topologies/hgx-h100.yaml").read_text())
    spec["name"], spec["aliases"] = "h100-nccl-default", []
    spec["runtime"]["default"] = "nccl"
    path = tmp_path / "h100-nccl-default.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_the_runtime_is_the_one_given_else_the_files_default(tmp_path):
    h100 = load_topology("hgx-h100")
    assert study_runtime(h100, OneGroup(h100, h100.chips), None) == h100.spec.runtime.default
    assert study_runtime(h100, OneGroup(h100, h100.chips), "NCCL") == "nccl"
    assert study_runtime(h100, OneGroup(h100, h100.chips), "ideal") == "ideal"
    own = load_topology(None, nccl_default_file(tmp_path))
    assert study_runtime(own, OneGroup(own, own.chips), None) == "nccl"
    assert study_runtime(own, OneGroup(own, own.chips), "ideal") == "ideal"


def test_what_a_runtime_cannot_price_is_refused_naming_it():
    h100 = load_topology("hgx-h100")
    halves = [h100.chips[:4], h100.chips[4:]]
    with pytest.raises(NotApplicableError, match="one group on one system"):
        study_runtime(h100, ManyGroups(h100, halves), "nccl")
    assert study_runtime(h100, ManyGroups(h100, halves), "ideal") == "ideal"  # ideal models it all
    skewed = Selection(skew="2:4").backend(h100)
    with pytest.raises(NotApplicableError, match="uniform traffic"):
        study_runtime(h100, skewed, "nccl")
    nl16 = load_topology("nl16")
    with pytest.raises(NotApplicableError, match="runtime.nccl"):  # no NCCL facts in a Trainium file
        study_runtime(nl16, OneGroup(nl16, nl16.chips), "nccl")
    with pytest.raises(ParameterError):
        study_runtime(nl16, OneGroup(nl16, nl16.chips), "mpi")
    with pytest.raises(ParameterError):
        known_runtime("mpi")
    assert known_runtime(None) is None and known_runtime(" Ideal ") == "ideal"


def test_ideal_only_refuses_any_other_runtime(tmp_path):
    h100 = load_topology("hgx-h100")
    ideal_only(h100, "ideal", "groups at once")
    with pytest.raises(NotApplicableError, match="groups at once"):
        ideal_only(h100, "nccl", "groups at once")
    # a file's default is not asked for: it gives way to the ideal (issue 25), a named one refuses
    own = load_topology(None, nccl_default_file(tmp_path))
    assert own.spec.runtime.default == "nccl"
    ideal_only(own, None, "groups at once")
    with pytest.raises(NotApplicableError, match="groups at once"):
        ideal_only(own, "nccl", "groups at once")


def test_priced_ideal_is_the_evaluation_itself():
    nl16 = load_topology("nl16")
    ideal = OneGroup(nl16, nl16.chips).evaluate("allreduce", SIZES)
    assert priced(nl16, ideal, "ideal") is ideal


def test_variants_are_priced_by_nccls_tuner_with_the_ideal_beside():
    """Each row's time is NCCL's predicted time at that size (asked of the tuner directly), its busbw
    nccl-tests' formula on that time, and its ideal figures the ideal run's."""
    nccl_run, ideal_run = (
        run_variants([Variant.parse("hgx-h100")], "allreduce", SIZES, runtime=name)[0]
        for name in ("nccl", "ideal")
    )
    assert (nccl_run.runtime, ideal_run.runtime) == ("nccl", "ideal")
    assert ideal_run.runtime_model is None and "NCCL" in nccl_run.runtime_model
    topology = nccl_run.topology
    system = nccl_system_of(topology, topology.chips)
    ranks = len(topology.chips)
    for row, ideal in zip(nccl_run.evaluation.rows, ideal_run.evaluation.rows, strict=True):
        pick = predict(system, "allreduce", row.bytes).pick
        # NVLS adds its pipeline fill: two chunk times of a share over 16 CTAs per channel
        nvls = pick.algorithm == "nvls"
        fill = nvls_fill_us(row.bytes, 16 * system.nvls.n_channels, pick.model_bw_gbps) if nvls else 0.0
        time_us = pick.time_us + fill
        assert row.time_us == pytest.approx(time_us, rel=1e-12)
        assert row.algorithm == f"{pick.algorithm}/{pick.protocol}"
        expected = 2 * (ranks - 1) / ranks * row.bytes / (time_us * 1e3)
        assert row.busbw_gbps == pytest.approx(expected, rel=1e-12)
        assert (row.ideal_busbw_gbps, row.ideal_algorithm) == (ideal.busbw_gbps, ideal.algorithm)


def test_each_system_runs_its_own_default_without_a_runtime(tmp_path):
    """A file, an NVIDIA peer, a Trainium and the one ideal file of the catalog side by side: each is
    priced by its own file's default, exactly as that runtime asked for by name prices it alone."""
    path = nccl_default_file(tmp_path)
    variants = [Variant.parse(str(path), is_file=True), *(Variant.parse(s) for s in ("nl16", "ualink-72"))]
    results = run_variants(variants, "allreduce", SIZES)
    assert [r.runtime for r in results] == ["nccl", "neuron", "ideal"]
    for variant, result in zip(variants, results, strict=True):
        assert result.runtime == result.topology.spec.runtime.default
        alone = run_variants([variant], "allreduce", SIZES, runtime=result.runtime)[0]
        assert [r.as_dict() for r in result.evaluation.rows] == [r.as_dict() for r in alone.evaluation.rows]


def test_a_study_is_refused_before_any_work_when_one_variant_cannot_be_priced(monkeypatch):
    """nl16 has no NCCL facts: the comparison is refused before hgx-h100 (listed first) runs."""
    ran = []
    real = OneGroup.evaluate

    def counted(self, *args, **kwargs):
        ran.append(self.topology.name)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(OneGroup, "evaluate", counted)
    with pytest.raises(NotApplicableError, match="variant nl16"):
        run_variants([Variant.parse("hgx-h100"), Variant.parse("nl16")], "allreduce", SIZES, runtime="nccl")
    assert ran == []


def test_uniform_rows_leave_all_ideal_rows_alone_and_fill_the_ideals_in_a_mixed_sweep():
    ideal = [{"variant": "a", "time_us": 2.0, "busbw_gbps": 5.0, "algorithm": "ring"}]
    assert uniform_rows(ideal) is ideal
    runtime_row = {
        "variant": "b",
        "runtime": "nccl",
        "runtime_model": "NCCL",
        "time_us": 4.0,
        "busbw_gbps": 3.0,
        "algorithm": "ring/ll",
        "ideal_time_us": 1.0,
        "ideal_busbw_gbps": 9.0,
        "ideal_algorithm": "mesh",
    }
    out = uniform_rows(ideal + [runtime_row])
    assert [list(row) for row in out] == [list(runtime_row)] * 2
    assert out[0]["runtime"] == "ideal" and out[0]["runtime_model"] is None
    assert (out[0]["ideal_time_us"], out[0]["ideal_busbw_gbps"], out[0]["ideal_algorithm"]) == (
        2.0,
        5.0,
        "ring",
    )
    assert out[1] == runtime_row
