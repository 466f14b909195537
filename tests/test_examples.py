"""The CI example runs as a user would run it: green against its baseline, red on a regression."""

import json
import math
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
    assert "changed since the baseline" not in result.stderr and "not produced" not in result.stderr
    table = (tmp_path / "artifacts" / "compare-alltoall.md").read_text()
    assert "| size (B) |" in table and "trn3-nl72x2-gen3" in table
    report = (tmp_path / "artifacts" / "report.html").read_text()
    assert report.startswith("<!DOCTYPE html>") and report.count("<svg") == 7  # chart + 2 per variant
    assert (tmp_path / "artifacts" / "compare-allreduce.md").exists()


def test_example_fails_on_a_regression(tmp_path):
    result = _run(tmp_path, "--set", "switched.cross_rack.lanes=8")
    assert result.returncode == 1
    assert "REGRESSION" in result.stderr


REGENERATE = "UPDATE_BASELINES=1 examples/ci/compare-nl72x2.sh"
# float noise of a different machine or summation order, far below any change of the model
RELATIVE = 1e-9


def _differences(committed: dict, fresh: dict) -> list[str]:
    """What differs between two baselines, beyond when they were written: variants (topology files
    by their hash), rows (the model's results) and the run's settings."""
    from trnsim.studies.baseline import describe_key, row_key

    found = [
        f"{key}: {committed.get(key)!r} -> {fresh.get(key)!r}"
        for key in sorted(set(committed) | set(fresh))
        if key not in ("created", "rows", "variants") and committed.get(key) != fresh.get(key)
    ]
    for kind, identity, describe in (
        ("variants", lambda v: v.get("label"), str),
        ("rows", row_key, describe_key),
    ):
        old = {identity(item): item for item in committed.get(kind, [])}
        new = {identity(item): item for item in fresh.get(kind, [])}
        found += [f"{kind}: only in the committed file: {describe(key)}" for key in old.keys() - new.keys()]
        found += [f"{kind}: not in the committed file: {describe(key)}" for key in new.keys() - old.keys()]
        for key in old.keys() & new.keys():
            for field in sorted(set(old[key]) | set(new[key])):
                before, after = old[key].get(field), new[key].get(field)
                if isinstance(before, float) and isinstance(after, float):
                    same = math.isclose(before, after, rel_tol=RELATIVE)
                else:
                    same = before == after
                if not same:
                    found.append(f"{kind}: {describe(key)}: {field} {before!r} -> {after!r}")
    return found


def test_the_committed_baselines_are_what_the_script_regenerates(tmp_path):
    # the documented command, writing into a scratch folder: any change to a catalog file the
    # baselines name (its hash) or to the model (a value) shows here, not as a note in a CI log
    fresh = tmp_path / "baselines"
    env = {
        **os.environ,
        "TRNSIM": f"{sys.executable} -m trnsim",
        "UPDATE_BASELINES": "1",
        "BASELINES": str(fresh),
    }
    result = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    committed = sorted(path.name for path in SCRIPT.parent.glob("baseline-*.json"))
    assert committed == sorted(path.name for path in fresh.iterdir()) and committed
    stale = {
        name: _differences(
            json.loads((SCRIPT.parent / name).read_text()), json.loads((fresh / name).read_text())
        )
        for name in committed
    }
    stale = {name: found for name, found in stale.items() if found}
    assert not stale, (
        f"examples/ci baselines are out of date: regenerate them with `{REGENERATE}` and commit "
        "examples/ci/baseline-*.json; "
        + "; ".join(f"{name}: {found[0]} (and {len(found) - 1} more)" for name, found in stale.items())
    )
