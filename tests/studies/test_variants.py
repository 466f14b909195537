import os
from pathlib import Path

import pytest

from trnsim.errors import UsageError
from trnsim.studies.variants import Variant


def test_variant_syntax():
    assert Variant.parse("nl72x2") == Variant(sku="nl72x2")
    v = Variant.parse("nl72x2:set=latency.switch_ns=50:set=switched.cross_rack.lanes=8", common=("a.b=1",))
    assert v.sku == "nl72x2" and v.overrides == (
        "a.b=1",
        "latency.switch_ns=50",
        "switched.cross_rack.lanes=8",
    )
    assert Variant.parse("my.yaml", is_file=True).file.name == "my.yaml"
    with pytest.raises(UsageError):
        Variant.parse(":set=a=1")


CALIBRATION = "examples/measurements/calibrations/g4-allreduce-4r-ring.yaml"


def test_a_variant_applies_its_own_calibration_file():
    from trnsim.studies.calibration.files import calibration_edits

    v = Variant.parse(f"nvl72:set=latency.step_ns=900:calibration={CALIBRATION}")
    assert v.calibrations == [Path(CALIBRATION).resolve()]
    # the calibration is the base the --set edits refine, wherever it is written
    assert v.edits() == calibration_edits(CALIBRATION) + ["latency.step_ns=900"]
    topology = v.load()
    assert topology.spec.efficiency.classes["nvlink"] == pytest.approx(0.731746)
    assert topology.spec.latency.step_ns == 900  # the variant's later edit wins


def test_compare_runs_a_calibrated_variant_beside_the_file(cli):
    result = cli(
        "compare",
        "allreduce",
        "--sku",
        "nvl72",
        "--sku",
        f"nvl72:calibration={CALIBRATION}",
        "--sizes",
        "1G",
        "--runtime",
        "ideal",
        "--format",
        "json",
    )  # fmt: skip  the fitted NVLink efficiency is the fabric's: the ideal prices it
    assert result.code == 0, result.err
    import json

    values = json.loads(result.out)["rows"][0]["values"]
    calibrated = values["gb200-nvl72 [calibration=g4-allreduce-4r-ring.yaml]"]["busbw_gbps"]
    # the G4 fit (NVLink at 73% of raw rate) is slower at 1 GiB than the file's assumed 90%
    assert calibrated < 0.9 * values["gb200-nvl72"]["busbw_gbps"]
    missing = cli("compare", "allreduce", "--sku", "nvl72:calibration=nope.yaml", "--sizes", "1G")
    assert missing.code == 2 and "nope.yaml" in missing.err and "Traceback" not in missing.err
    both = cli(
        "compare", "allreduce", "--sku", f"nvl72:calibration={CALIBRATION}", "--calibration", CALIBRATION,
        "--sizes", "1G",
    )  # fmt: skip
    assert both.code == 2 and "not both" in both.err


def test_a_baseline_matches_a_calibrated_variant_from_any_folder(cli, tmp_path, monkeypatch):
    absolute = Path(CALIBRATION).resolve()
    saved = tmp_path / "b.json"
    first = cli("compare", "allreduce", "--sku", f"nvl72:calibration={absolute}", "--sizes", "1G",
                "--save-baseline", str(saved))  # fmt: skip
    assert first.code == 0, first.err
    monkeypatch.chdir(tmp_path)
    relative = os.path.relpath(absolute, tmp_path)
    again = cli("compare", "allreduce", "--sku", f"nvl72:calibration={relative}", "--sizes", "1G",
                "--baseline", str(saved))  # fmt: skip
    assert again.code == 0 and "1 rows compared" in again.err, again.err
