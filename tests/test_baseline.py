import pytest

from trnsim import baseline
from trnsim.errors import ConfigError


def _rows(value):
    return [
        {
            "variant": "a",
            "op": "alltoall",
            "bytes": 1024,
            "busbw_gbps": value,
            "time_us": 100 / value,
            "efficiency": value / 200,
        }
    ]


def test_save_load_check(tmp_path):
    path = tmp_path / "b.json"
    baseline.save(path, _rows(100.0), [{"label": "a"}], {"command": "compare"})
    saved = baseline.load(path)
    checks, missing = baseline.check(saved, _rows(96.0), "busbw", 0.05)
    assert not missing and not checks[0].regressed and checks[0].change == pytest.approx(-0.04)
    checks, _ = baseline.check(saved, _rows(94.0), "busbw", 0.05)
    assert checks[0].regressed
    checks, _ = baseline.check(saved, _rows(94.0), "time", 0.05)  # time rose by 6.4%
    assert checks[0].regressed and checks[0].change == pytest.approx((100 / 94 - 1.0) / 1.0)
    checks, missing = baseline.check(saved, [], "busbw", 0.05)
    assert not checks and len(missing) == 1


def test_foreign_files_are_refused(tmp_path):
    path = tmp_path / "b.json"
    path.write_text('{"schema": "trnsim/2", "kind": "baseline", "rows": []}')
    with pytest.raises(ConfigError, match="not a trnsim/1 baseline"):
        baseline.load(path)
