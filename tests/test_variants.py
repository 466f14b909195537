import pytest

from trnsim.errors import UsageError
from trnsim.variants import Variant


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
    from trnsim.calibration.files import calibration_edits

    v = Variant.parse(f"nvl72:calibration={CALIBRATION}:set=latency.step_ns=900")
    assert v.overrides == (f"calibration={CALIBRATION}", "latency.step_ns=900")
    assert v.edits() == calibration_edits(CALIBRATION) + ["latency.step_ns=900"]
    topology = v.load()
    assert topology.spec.efficiency.classes["nvlink"] == pytest.approx(0.731746)
    assert topology.spec.latency.step_ns == 900  # the variant's later edit wins


def test_compare_runs_a_calibrated_variant_beside_the_file(cli):
    result = cli(
        "compare", "allreduce", "--sku", "nvl72", "--sku", f"nvl72:calibration={CALIBRATION}",
        "--sizes", "1G", "--format", "json",
    )  # fmt: skip
    assert result.code == 0, result.err
    import json

    values = json.loads(result.out)["rows"][0]["values"]
    calibrated = values[f"gb200-nvl72 [calibration={CALIBRATION}]"]["busbw_gbps"]
    # the G4 fit (NVLink at 73% of raw rate) is slower at 1 GiB than the file's assumed 90%
    assert calibrated < 0.9 * values["gb200-nvl72"]["busbw_gbps"]
    missing = cli("compare", "allreduce", "--sku", "nvl72:calibration=nope.yaml", "--sizes", "1G")
    assert missing.code == 2 and "nope.yaml" in missing.err and "Traceback" not in missing.err
