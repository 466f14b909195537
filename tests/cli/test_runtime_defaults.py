"""What prices a run when no --runtime is given: the file's default, the ideal where the default does
not model what was asked (a named algorithm), and a calibration's own runtime."""

import json


def _json(cli, *args):
    result = cli(*args, "--format", "json")
    assert result.code == 0, result.err
    return json.loads(result.out), result.err


def test_a_named_algorithm_is_trnsims_schedule_so_the_default_gives_way(cli):
    args = ("collective", "allreduce", "--sku", "nl16", "--sizes", "1M", "--algo", "ring")
    default, err = _json(cli, *args)
    ideal, _ = _json(cli, *args, "--runtime", "ideal")
    assert default["runtime"] == "ideal" and default["rows"] == ideal["rows"]
    assert err.count("note:") == 1 and "--algo ring" in err
    refused = cli(*args, "--runtime", "neuron")
    assert refused.code == 2 and "--algo ring" in refused.err
    # compare and sweep alike: every variant's rows are the ideal's
    data, _ = _json(
        cli, "compare", "allreduce", "--sku", "nl16", "--sku", "h100", "--sizes", "1M", "--algo", "ring"
    )
    assert {variant.get("runtime", "ideal") for variant in data["variants"]} == {"ideal"}


def test_a_calibrated_variant_is_priced_by_what_its_calibration_was_fitted_against(cli):
    g4 = "examples/measurements/calibrations/g4-allreduce-4r-ring.yaml"  # an ideal-model fit
    data, _ = _json(cli, "compare", "allreduce", "--sku", "nvl72", "--sku", f"nvl72:calibration={g4}",
                    "--sizes", "1G")  # fmt: skip
    runtimes = [variant.get("runtime", "ideal") for variant in data["variants"]]
    assert runtimes == ["nccl", "ideal"]
