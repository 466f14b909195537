"""``trnsim calibrate`` from the command line: logs saved without their command line, and runs whose
ranks cannot map onto the system."""

from pathlib import Path

FOLDER = Path(__file__).resolve().parents[2] / "examples" / "measurements"
HEADER = "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong"


def _bare(tmp_path: Path, ranks: int = 8) -> Path:
    """A bare nccl-tests table (no comments, no command line) of an all-reduce on ``ranks`` GPUs."""
    factor = 2 * (ranks - 1) / ranks
    rows = []
    for size in (1 << 20, 1 << 24, 1 << 28, 1 << 30):
        time = 5 + size / 400e3  # us: 5 us plus 400 GB/s of algbw
        algbw = size / time / 1e3
        rows.append(f" {size} {size // 4} float sum -1 {time:.2f} {algbw:.2f} {algbw * factor:.2f} 0")
    path = tmp_path / "bare.txt"
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    return path


def test_a_bare_table_takes_op_and_ranks_from_options(cli, tmp_path):
    path = _bare(tmp_path)
    no_op = cli("calibrate", str(path), "--sku", "h100")
    assert no_op.code == 2 and "pass --op OP" in no_op.err
    no_ranks = cli("calibrate", str(path), "--sku", "h100", "--op", "allreduce")
    assert no_ranks.code == 2 and "pass --ranks RANKS" in no_ranks.err and "ranks=" in no_ranks.err
    fitted = cli(
        "calibrate",
        str(path),
        "--sku",
        "h100",
        "--op",
        "allreduce",
        "--ranks",
        "8",
        "--fit",
        "step_ns,efficiency",
    )
    assert fitted.code == 0, fitted.err
    assert "allreduce, 8 ranks, 4 sizes" in fitted.out
    wrong = cli("calibrate", str(path), "--sku", "h100", "--op", "allreduce", "--ranks", "4")
    assert wrong.code == 2 and "is the rank count right?" in wrong.err  # busbw says 8


def test_a_run_across_nodes_points_at_the_cluster_model(cli, tmp_path):
    path = _bare(tmp_path)
    result = cli("calibrate", str(path), "--sku", "h100", "--op", "allreduce", "--ranks", "8", "--nodes", "2")
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
    assert "spanned 2 nodes" in result.err and "trnsim cluster collective" in result.err


def test_cores_need_their_ranks_per_chip(cli):
    run = str(FOLDER / "n8-allreduce-16r-algorithm.txt")
    refused = cli("calibrate", run, "--sku", "trn2-nl16", "--algo", "measured")
    assert (
        refused.code == 2
        and "say how many of the run's 16 ranks share a chip with --ranks-per-chip" in refused.err
    )
    said = cli(
        "calibrate", run, "--sku", "trn2-nl16", "--algo", "measured", "--ranks-per-chip", "4",
        "--set", "chip.rank_gbps=870.4", "--fit", "collective_ns,step_ns,efficiency", "--format", "json",
    )  # fmt: skip
    assert said.code == 0, said.err
    assert "chip.ranks=4" in said.out  # kept in the calibration: it is part of what was fitted
    both = cli("calibrate", run, "--sku", "trn2-nl16", "--ranks-per-chip", "4", "--set", "chip.ranks=4")
    assert both.code == 2 and "give --ranks-per-chip or an edit of chip.ranks, not both" in both.err


def test_calibrate_fits_the_ideal_or_a_runtimes_own_parameters(cli, tmp_path):
    path = _bare(tmp_path)
    argv = ["calibrate", str(path), "--sku", "h100", "--op", "allreduce", "--ranks", "8"]
    assert cli(*argv, "--fit", "step_ns", "--runtime", "ideal").code == 0
    refused = cli(*argv, "--fit", "step_ns", "--runtime", "nccl")
    assert refused.code == 2 and "the nccl runtime's time does not depend on step_ns" in refused.err
    out = tmp_path / "nccl.yaml"
    fitted = cli(*argv, "--runtime", "nccl", "-o", str(out))  # default: the runtime's call_us
    assert fitted.code == 0, fitted.err
    assert "call_us" in fitted.out and "runtime: nccl" in out.read_text()
    again = cli("collective", "allreduce", "--sku", "h100", "--calibration", str(out), "--sizes", "1M")
    assert again.code == 0 and "runtime nccl" in again.out  # the calibration's runtime models the run
    assert cli(*argv, "--runtime", "mpi").code == 2


def test_a_curve_with_kinks_is_fitted_per_regime_and_the_file_keeps_one_fit(cli, tmp_path):
    """The published H200 NVLS run bends where NCCL changes protocol: each regime is fitted and
    shown, on stdout only; the calibration file holds the fit over every row, as before."""
    import json

    import yaml

    run = str(FOLDER / "g9-allreduce-8r-nvls.txt")
    argv = [
        "calibrate",
        run,
        "--sku",
        "hgx-h100",
        "--algo",
        "nvls",
        "--fit",
        "collective_ns,step_ns,efficiency",
    ]
    out = tmp_path / "g9.yaml"
    result = cli(*argv, "--loss", "soft_l1", "--format", "json", "-o", str(out))
    assert result.code == 0, result.err
    document = json.loads(result.out)
    regimes = document["regimes"]
    assert len(regimes) >= 2
    sizes = [row["bytes"] for row in document["rows"]]
    assert regimes[0]["min_bytes"] == sizes[0] and regimes[-1]["max_bytes"] == sizes[-1]
    assert sum(r["rows"] for r in regimes) == len(sizes)  # every row in one regime
    for before, after in zip(regimes, regimes[1:], strict=False):
        assert sizes.index(after["min_bytes"]) == sizes.index(before["max_bytes"]) + 1  # consecutive
    written = yaml.safe_load(out.read_text())
    assert "regimes" not in written and all(row["fitted"] for row in written["rows"])
    ranged = cli(*argv, "--fit-sizes", "64M:", "--format", "json")
    assert "regimes" not in json.loads(ranged.out)  # a range chosen: one regime, the user's
