"""Reading published runs: units converted independently, every inconsistency refused with its key path."""

import math

import pytest

from trnsim.errors import ConfigError, UsageError
from trnsim.studies.validation import bundled_runs_dir, load_runs, parse_run

BASE = {
    "id": "T1",
    "title": "t",
    "source": "s",
    "tool": "nccl-tests",
    "system": "hgx-h100",
    "mapping": "m",
    "op": "allreduce",
    "ranks": 8,
    "conditions": "c",
    "measured": "busbw",
    "units": "GB/s",
    "statistic": "mean",
    "role": "predicted",
    "points": [["1M", 100.0]],
}


def run_of(**changes):
    return parse_run({**BASE, **changes}, "t1.yaml")


@pytest.mark.parametrize(
    "op, ranks, factor",
    [
        ("allreduce", 8, 2 * 7 / 8),
        ("allgather", 8, 7 / 8),
        ("reducescatter", 4, 3 / 4),
        ("alltoall", 2, 1 / 2),
    ],
)
def test_busbw_becomes_the_time_the_tool_printed(op, ranks, factor):
    # nccl-tests: busbw = algbw x factor, algbw = bytes / time; 1 MiB at 100 GB/s busbw
    run = run_of(op=op, ranks=ranks)
    ((nbytes, time_us),) = run.measured_us()
    assert nbytes == 1 << 20
    assert math.isclose(time_us, (1 << 20) * factor / 100e9 * 1e6, rel_tol=1e-12)


def test_gib_units_and_algbw_and_time():
    gib = run_of(measured="algbw", units="GiB/s", points=[[2048, 1.0]])
    assert math.isclose(gib.measured_us()[0][1], 2048 / (1 << 30) * 1e6, rel_tol=1e-12)
    timed = run_of(measured="time", units="us", points=[[8, 2.3], ["4K", 5.0]])
    assert timed.measured_us() == [(8, 2.3), (4096, 5.0)]


@pytest.mark.parametrize(
    "changes, keypath",
    [
        ({"units": "us"}, "units"),  # a bandwidth given in us
        ({"measured": "time"}, "units"),  # a time given in GB/s
        ({"ranks": 6, "ranks_per_chip": 4}, "ranks_per_chip"),
        ({"ranks": 8, "nodes": 3}, "nodes"),
        ({"role": "fitted"}, "fitted_to"),
        ({"role": "excluded"}, "excluded_because"),
        ({"points": []}, "points"),
        ({"points": [["1Gb", 3.0]]}, "points[0]"),
        ({"points": [[0, 3.0]]}, "points[0]"),
        ({"points": [["1K", -1.0]]}, "points[0][1]"),
        ({"op": "broadcastx"}, "op"),
        ({"extra": 1}, "(top level)"),
        ({"id": "bad id"}, "id"),
    ],
)
def test_inconsistent_runs_are_refused_with_their_key_path(changes, keypath):
    with pytest.raises(ConfigError) as caught:
        run_of(**changes)
    assert str(caught.value).startswith(f"t1.yaml: {keypath}")


def test_the_folder_is_read_whole_and_ids_are_unique(tmp_path):
    import yaml

    (tmp_path / "a.yaml").write_text(yaml.safe_dump(BASE))
    (tmp_path / "b.yaml").write_text(yaml.safe_dump({**BASE, "id": "T2"}))
    assert [run.id for run in load_runs(tmp_path)] == ["T1", "T2"]
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(BASE))
    with pytest.raises(ConfigError, match="also the id of"):
        load_runs(tmp_path)
    with pytest.raises(UsageError, match="expected a folder"):
        load_runs(tmp_path / "a.yaml")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UsageError, match="no published runs"):
        load_runs(empty)


def test_every_bundled_run_reads_and_names_a_catalog_system():
    from trnsim.spec.catalog import catalog_dir

    runs = load_runs(bundled_runs_dir())
    systems = {path.stem for path in catalog_dir().glob("*.yaml")}
    assert runs, "the bundled validation set is empty"
    for run in runs:
        assert run.system in systems, run.path
        assert run.source.strip() and run.conditions.strip(), run.path
