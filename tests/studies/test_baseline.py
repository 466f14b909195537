"""Baselines: rows match on everything that defines them; malformed files are refused with a key path."""

import json

import pytest

from trnsim.errors import ConfigError
from trnsim.studies import baseline


def _row(value, **identity):
    row = {
        "variant": "a",
        "op": "alltoall",
        "group": "all",
        "algo": "auto",
        "dtype": "float",
        "alpha_us": None,
        "requested_bytes": 1024,
        "bytes": 1024,
        "busbw_gbps": value,
        "time_us": 100 / value,
        "efficiency": value / 200,
    }
    return {**row, **identity}


def test_save_load_check(tmp_path):
    path = tmp_path / "b.json"
    baseline.save(path, [_row(100.0)], [{"label": "a"}], {"command": "compare"})
    saved = baseline.load(path)
    result = baseline.check(saved, [_row(96.0)], "busbw", 0.05)
    assert not result.only_in_baseline and not result.only_in_run
    assert not result.checks[0].regressed and result.checks[0].change == pytest.approx(-0.04)
    assert baseline.check(saved, [_row(94.0)], "busbw", 0.05).regressions
    timed = baseline.check(saved, [_row(94.0)], "time", 0.05)  # time rose by 6.4%
    assert timed.regressions and timed.checks[0].change == pytest.approx(100 / 94 - 1.0)
    empty = baseline.check(saved, [], "busbw", 0.05)
    assert not empty.checks and len(empty.only_in_baseline) == 1


@pytest.mark.parametrize(
    "field, value",
    [("group", "first 2"), ("algo", "ring"), ("dtype", "bf16"), ("alpha_us", 0.0), ("variant", "a [x=1]")],
)
def test_rows_that_differ_in_any_identity_field_do_not_match(tmp_path, field, value):
    path = tmp_path / "b.json"
    baseline.save(path, [_row(100.0)], [], {})
    result = baseline.check(baseline.load(path), [_row(25.0, **{field: value})], "busbw", 0.05)
    assert not result.checks
    assert len(result.only_in_baseline) == 1 and len(result.only_in_run) == 1


def test_foreign_files_are_refused(tmp_path):
    path = tmp_path / "b.json"
    path.write_text('{"schema": "trnsim/2", "kind": "baseline", "rows": []}')
    with pytest.raises(ConfigError, match="not a trnsim/1 baseline"):
        baseline.load(path)


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"schema": "trnsim/1", "kind": "baseline", "rows": [ROW_NAN]}', "invalid JSON"),
        ("ROWS_OF(0)", r"rows\[0\].busbw_gbps: expected `float` >= 1e-09"),
        ("ROWS_OF(-3)", r"rows\[0\].busbw_gbps: expected `float` >= 1e-09"),
        ('{"schema": "trnsim/1", "kind": "baseline", "rows": [{"variant": 1}]}', r"rows\[0\].variant"),
        ('{"schema": "trnsim/1", "kind": "baseline", "rows": {}}', "rows: expected `array`"),
        ('{"schema": "trnsim/1", "kind": "baseline"', "invalid JSON"),
        ("[1, 2]", "not a trnsim/1 baseline"),
    ],
)
def test_malformed_baselines_are_refused_with_the_key_path(tmp_path, text, message):
    row = json.dumps(_row(100.0))
    text = text.replace("ROW_NAN", row.replace('"busbw_gbps": 100.0', '"busbw_gbps": NaN'))
    if text.startswith("ROWS_OF("):
        value = float(text[len("ROWS_OF(") : -1])
        bad = {**_row(100.0), "busbw_gbps": value}
        text = json.dumps({"schema": "trnsim/1", "kind": "baseline", "rows": [bad]})
    path = tmp_path / "b.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        baseline.load(path)


def test_tiny_metrics_duplicate_rows_and_deep_json_are_refused(tmp_path):
    path = tmp_path / "b.json"
    baseline.save(path, [_row(100.0)], [], {})
    document = json.loads(path.read_text())
    document["rows"][0]["time_us"] = 5e-324  # would make a relative change of +inf%
    path.write_text(json.dumps(document))
    with pytest.raises(ConfigError, match=r"rows\[0\].time_us: expected `float` >= 1e-09"):
        baseline.load(path)
    document["rows"] = [_row(100.0), _row(1000.0)]  # the same identity twice: one would shadow the other
    path.write_text(json.dumps(document))
    with pytest.raises(ConfigError, match=r"rows\[1\]: the same row as rows\[0\]"):
        baseline.load(path)
    path.write_text(
        '{"schema": "trnsim/1", "kind": "baseline", "rows": ' + "[" * 100_000 + "]" * 100_000 + "}"
    )
    with pytest.raises(ConfigError, match="nested too deeply"):
        baseline.load(path)
    path.write_text('{"schema": "trnsim/1", "kind": "other", "rows": []}')
    with pytest.raises(ConfigError, match="kind 'other'"):
        baseline.load(path)


def test_a_baseline_of_one_runtime_is_not_checked_against_another():
    """A variant's runtime is part of what a baseline holds; one without is the ideal's (as every
    baseline written before runtimes was)."""
    from trnsim.studies.baseline import runtime_mismatch

    saved = {"variants": [{"label": "hgx-h100", "runtime": "nccl"}, {"label": "nl16"}]}
    assert runtime_mismatch(saved, [{"label": "hgx-h100", "runtime": "nccl"}, {"label": "nl16"}]) is None
    assert runtime_mismatch(saved, [{"label": "nl16", "runtime": "ideal"}]) is None
    assert runtime_mismatch(saved, [{"label": "other", "runtime": "nccl"}]) is None  # not in the baseline
    why = runtime_mismatch(saved, [{"label": "hgx-h100"}])
    assert "saved under runtime nccl" in why and "models ideal" in why
    assert "saved under runtime ideal" in runtime_mismatch(saved, [{"label": "nl16", "runtime": "nccl"}])
