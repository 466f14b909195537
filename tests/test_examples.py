"""The CI example runs as a user would run it: green against its baseline, red on a regression."""

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "examples" / "ci" / "compare-nl72x2.sh"


def _run(tmp_path, *extra):
    env = {**os.environ, "TRNSIM": f"{sys.executable} -m trnsim", "OUT": str(tmp_path / "artifacts")}
    return subprocess.run(["bash", str(SCRIPT), *extra], capture_output=True, text=True, env=env)


def test_example_passes_against_its_baseline(tmp_path):
    result = _run(tmp_path)
    assert result.returncode == 0, result.stderr
    table = (tmp_path / "artifacts" / "compare-alltoall.md").read_text()
    assert "| size (B) |" in table and "trn3-nl72x2-gen3" in table
    report = (tmp_path / "artifacts" / "report.html").read_text()
    assert report.startswith("<!DOCTYPE html>") and report.count("<svg") == 7  # chart + 2 per variant
    assert (tmp_path / "artifacts" / "compare-allreduce.md").exists()


def test_example_fails_on_a_regression(tmp_path):
    result = _run(tmp_path, "--set", "switched.cross_rack.lanes=8")
    assert result.returncode == 1
    assert "REGRESSION" in result.stderr
