"""``--jobs``, ``--engine`` and ``--scheduler`` on ``sweep`` and ``faults --random``
(trnsim.cli.engines): the same bytes on every engine, and one line for each way an engine cannot run."""

import json
import socket
import sys

import pytest

from tests.cli.imported import modules_imported_by

SWEEP = ["sweep", "--sku", "nl16", "--sku", "nl32x2", "--sku", "nl64", "--algo", "auto", "--algo", "ring",
         "--sizes", "1M,1G"]  # fmt: skip
FAULTS = ["faults", "nl32x2", "--op", "allreduce", "--random", "2", "--samples", "6", "--format", "json"]


@pytest.fixture(scope="module")
def scheduler():
    """A local Dask cluster's address (2 worker processes, 1 thread each), as the engine starts one."""
    pytest.importorskip("distributed")
    from trnsim.studies.engines.dask_cluster import local_cluster

    with local_cluster(2, env={"TRNSIM_CACHE": "off"}) as cluster:
        yield cluster.scheduler_address


@pytest.fixture
def no_cache(monkeypatch):
    """Every engine works the rows out (none recalled from the disk cache)."""
    monkeypatch.setenv("TRNSIM_CACHE", "off")


def test_a_sweep_writes_the_same_csv_on_one_process_two_and_dask(cli, tmp_path, scheduler, no_cache):
    ways = {
        "jobs1": ["--jobs", "1"],
        "jobs2": ["--jobs", "2"],
        "scheduler": ["--scheduler", scheduler],
        "embedded": ["--engine", "dask", "--jobs", "2"],
    }
    written, skipped = {}, 0
    for name, options in ways.items():
        result = cli(*SWEEP, "-o", str(tmp_path / f"{name}.csv"), *options)
        assert result.code == 0 and result.out == "", (name, result.err)
        written[name] = (tmp_path / f"{name}.csv").read_bytes()
        skipped = result.err.count("skipped: ")
        if name in ("scheduler", "embedded"):  # stderr is not a terminal here: plain lines
            assert "sweep: 24/24 done in " in result.err, result.err  # skus x ops x algos
        else:
            assert "done in" not in result.err
    assert skipped == 3  # ring does no alltoall, on each sku
    assert written["jobs1"].count(b"\n") == 1 + (24 - skipped) * 2  # a header, then each run at 2 sizes
    assert len(set(written.values())) == 1


def test_faults_random_draws_give_the_same_json_on_every_engine(cli, scheduler, no_cache):
    local = cli(*FAULTS)
    remote = cli(*FAULTS, "--scheduler", scheduler)
    assert local.code == remote.code == 0, remote.err
    assert remote.out == local.out
    assert len(json.loads(local.out)["systems"][0]["random"]) == 1  # one op at one size


def test_the_engine_options_do_not_key_a_faults_outcome(cli, scheduler):
    """A faults outcome kept on disk is replayed whatever engine is asked for: the engine changes
    where the draws run, not what they give."""
    first = cli(*FAULTS, "--jobs", "2")
    again = cli(*FAULTS, "--scheduler", scheduler)
    assert first.code == again.code == 0 and again.out == first.out
    assert "done in" not in again.err  # replayed: no draw ran


@pytest.fixture
def without_dask(monkeypatch):
    """As if Dask were not installed: importing it fails."""
    for name in ("distributed", "dask"):
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize("options", [["--engine", "dask"], ["--scheduler", "tcp://127.0.0.1:8786"]])
def test_dask_not_installed_is_one_line_saying_how_to_install_it(cli, without_dask, options):
    for command in (["sweep", "--sku", "nl16", "--sizes", "1M"], FAULTS):
        result = cli(*command, *options)
        assert result.code == 2 and result.out == ""
        (line,) = result.err.splitlines()
        assert line.startswith("error: --engine dask: needs Dask") and "pip install 'trnsim[dask]'" in line


def test_jobs_keep_working_without_dask(cli, without_dask, tmp_path):
    alone = cli("sweep", "--sku", "nl16", "--sku", "nl64", "--sizes", "1M", "-o", str(tmp_path / "a.csv"))
    apart = cli("sweep", "--sku", "nl16", "--sku", "nl64", "--sizes", "1M", "-o", str(tmp_path / "b.csv"),
                "--jobs", "2")  # fmt: skip
    assert alone.code == apart.code == 0, apart.err
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--engine", "ray"], "error: --engine 'ray': expected one of local, dask"),
        (["--engine", "local", "--scheduler", "tcp://h:8786"], "error: --scheduler: a scheduler is a Dask"),
        (
            ["--scheduler", "http://h:8786/x"],
            "error: --scheduler 'http://h:8786/x': expected a Dask scheduler's",
        ),
        (["--scheduler", "h"], "error: --scheduler 'h': expected a Dask scheduler's address"),
        (
            ["--scheduler", "tcp://h:8786", "--jobs", "4"],
            "error: --jobs 4: sets the workers of this machine's",
        ),
    ],
)
def test_bad_engine_options_are_one_line_before_any_work(cli, options, message):
    for command in (["sweep", "--sku", "nl16", "--sizes", "1M"], FAULTS):
        result = cli(*command, *options)
        assert result.code == 2 and result.out == ""
        (line,) = result.err.splitlines()
        assert line.startswith(message), line


def test_a_scheduler_that_does_not_answer_is_one_line_and_exit_2(cli, monkeypatch):
    pytest.importorskip("distributed")
    import time

    import trnsim.studies.engines as engines

    monkeypatch.setattr(engines, "CONNECT_TIMEOUT_S", 1.0)
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        result = cli("sweep", "--sku", "nl16", "--sizes", "1M", "--scheduler", address)
    assert time.monotonic() - started < 10
    assert result.code == 2 and result.out == ""
    (line,) = result.err.splitlines()
    assert line.startswith(f"error: --scheduler {address}: no Dask scheduler answered within 1 s"), line


@pytest.mark.parametrize(
    "line",
    [("topo", "list"), ("sweep", "--help"), ("sweep", "--sku", "nl16", "--sizes", "1M", "--jobs", "2"),
     ("faults", "nl16", "--op", "allreduce", "--random", "2", "--samples", "2", "--jobs", "2")],
    ids=" ".join,
)  # fmt: skip
def test_dask_is_imported_only_when_its_engine_runs(line, tmp_path):
    modules = modules_imported_by(line, tmp_path)
    assert not [name for name in modules if name.split(".")[0] in ("dask", "distributed")]


def test_a_local_dask_cluster_starts_no_more_workers_than_there_is_work(cli, no_cache):
    """As the local pool: one variant's tasks are one batch, so --jobs 4 starts one worker."""
    pytest.importorskip("distributed")
    result = cli(
        "sweep", "--sku", "nl16", "--op", "allreduce", "--sizes", "1M", "--engine", "dask", "--jobs", "4"
    )
    assert result.code == 0, result.err
    assert "dask: a local cluster of 1 worker process\n" in result.err
