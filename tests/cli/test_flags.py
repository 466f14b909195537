"""The command line names every library parameter by the flag that sets it (trnsim.cli.flags)."""

from test_layers import _cli_flags

from trnsim.cli.flags import FLAGS, edits_text, error_text
from trnsim.errors import PARAMETERS, FileAsSkuError, ParameterError


def test_every_parameter_the_library_names_has_a_flag_and_every_flag_exists():
    assert set(FLAGS) == set(PARAMETERS)
    missing = {parameter: option for parameter, option in FLAGS.items() if option not in _cli_flags()}
    assert not missing, f"no command takes these options: {missing}"


def test_an_error_line_names_flags():
    error = ParameterError("must be >= 0, got -1.0", "alpha_us")
    assert str(error) == "alpha_us: must be >= 0, got -1.0"
    assert error_text(error) == "--alpha-us: must be >= 0, got -1.0"
    assert error_text(FileAsSkuError("x.yaml is a file")) == "x.yaml is a file with --topology"


def test_a_runs_edits_read_as_the_flags_that_gave_them():
    edits = ["latency.step_ns=5", "efficiency.default=0.9", "fail=cable:5", "calibration=fit.yaml"]
    assert edits_text(edits) == (
        "--set latency.step_ns=5, efficiency.default=0.9 --fail cable:5 --calibration fit.yaml"
    )
