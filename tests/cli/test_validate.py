"""``trnsim validate`` from the command line: exit codes, the gate, and predictions that agree
with ``trnsim collective`` on the same system."""

import json

import pytest
import yaml

RUN = {
    "id": "X1",
    "title": "a run",
    "source": "a source",
    "tool": "nccl-tests",
    "system": "hgx-h100",
    "mapping": "m",
    "op": "allgather",
    "ranks": 8,
    "conditions": "c",
    "measured": "time",
    "units": "us",
    "statistic": "mean",
    "role": "predicted",
    "points": [["1M", 40.0], ["1G", 2000.0]],
}


def write(folder, **changes):
    folder.mkdir(exist_ok=True)
    (folder / "x1.yaml").write_text(yaml.safe_dump({**RUN, **changes}))
    return folder


def test_predictions_are_the_collective_commands_and_the_gate_decides_the_exit_code(cli, tmp_path):
    folder = write(tmp_path / "runs")
    result = cli("validate", "--runs", str(folder), "--format", "json")
    data = json.loads(result.out)
    single = json.loads(
        cli(
            "collective",
            "allgather",
            "--sku",
            "hgx-h100",
            "--ranks",
            "8",
            "--sizes",
            "1M,1G",
            "--format",
            "json",
        ).out
    )
    for row, alone in zip(data["rows"], single["rows"], strict=True):
        assert row["predicted_us"] == alone["time_us"]
        assert row["error"] == pytest.approx(row["predicted_us"] / row["measured_us"] - 1, rel=1e-12)
    # the exit code is the gate's: 1 when a predicted row is outside, and the line names the worst
    outside = [row for row in data["rows"] if abs(row["error"]) > row["tolerance"]]
    assert data["failed"] == len(outside)
    assert result.code == (1 if outside else 0)
    if outside:
        assert "outside their tolerance" in result.err


def test_a_recorded_tolerance_or_a_fitted_role_passes(cli, tmp_path):
    wide = write(tmp_path / "wide", tolerance_pct={"1M": 999, "1G": 999})
    assert cli("validate", "--runs", str(wide)).code == 0
    fitted = write(tmp_path / "fitted", role="fitted", fitted_to="nothing, a test")
    result = cli("validate", "--runs", str(fitted))
    assert result.code == 0, result.err
    assert "fitted" in result.out


def test_bad_input_is_one_line_and_exit_2(cli, tmp_path):
    bad = write(tmp_path / "bad", units="us", measured="busbw")
    result = cli("validate", "--runs", str(bad))
    assert result.code == 2 and result.err.count("\n") == 1 and "x1.yaml: units" in result.err
    assert cli("validate", "--runs", str(tmp_path / "missing")).code == 2
    assert cli("validate", "--role", "maybe").code == 2
    unknown = write(tmp_path / "unknown", system="no-such-system")
    result = cli("validate", "--runs", str(unknown))
    assert result.code == 2 and "x1.yaml" in result.err and "no-such-system" in result.err
    across = write(tmp_path / "across", ranks=8, nodes=2)  # 4 GPUs a node: not a whole HGX board
    result = cli("validate", "--runs", str(across), "--wide")
    assert result.code == 0 and "a cluster node is the whole hgx-h100" in result.out  # listed, not fatal


def test_summary_leaves_out_the_rows_table_but_not_the_json_rows(cli, tmp_path):
    folder = write(tmp_path / "runs", tolerance_pct={"1M": 999, "1G": 999})
    full = cli("validate", "--runs", str(folder), "--wide")
    short = cli("validate", "--runs", str(folder), "--summary", "--wide")
    assert "Predicted against measured" in full.out and "Predicted against measured" not in short.out
    assert "Geometric-mean error" in short.out
    data = json.loads(cli("validate", "--runs", str(folder), "--summary", "--format", "json").out)
    assert len(data["rows"]) == 2


def test_the_bundled_validation_holds_its_gates(cli):
    # CI's gate: a change that moves a predicted row beyond its recorded tolerance fails here
    result = cli("validate", "--format", "json")
    data = json.loads(result.out)
    assert result.code == 0, result.err
    assert data["failed"] == 0
    roles = {run["role"] for run in data["runs"]}
    assert roles == {"predicted", "fitted", "excluded"}
    # every fitted run says what was fitted, every excluded one why
    for run in data["runs"]:
        assert run["role"] != "fitted" or run["fitted_to"].strip()
        assert run["role"] != "excluded" or run["excluded_because"].strip()
    # the targets on what is predicted: from 256 MiB within 15% unless a tolerance is recorded
    for row in data["rows"]:
        if row["role"] == "predicted" and row["error"] is not None:
            assert abs(row["error"]) <= row["tolerance"] + 1e-9
