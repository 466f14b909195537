"""``trnsim measure-plan``: the commands print whole, the files land in -o, and the calibrate line it
prints reads a run of the predicted numbers back to the file's own parameters."""

import json
import shlex

import pytest


def _plan(cli, *args):
    result = cli("measure-plan", *args, "--format", "json")
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_the_printed_calibrate_line_reads_a_run_back_onto_the_same_group(cli, tmp_path, monkeypatch):
    plan = _plan(cli, "allgather", "--sku", "nl16", "--group", "0-7", "--sizes", "64K,1M,16M,256M")
    # a run that measured exactly the prediction, saved as nccom-test prints its table
    lines = ["size(B)    count(elems)    type    time:avg(us)    algbw(GB/s)    busbw(GB/s)    algorithm"]
    for row in plan["predicted"]:
        algbw = row["bytes"] / row["time_us"] / 1e3
        lines.append(
            f"{row['bytes']} {row['bytes'] // 4} fp32 {row['time_us']:.3f} {algbw:.3f} {row['busbw_gbps']:.3f} {row['algorithm']}"
        )
    (tmp_path / "OUTPUT.txt").write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(tmp_path)
    words = shlex.split(plan["calibrate"])
    assert words[:3] == ["trnsim", "calibrate", "OUTPUT.txt"]
    fitted = cli(*words[1:], "--format", "json")
    assert fitted.code == 0, fitted.err
    fit = json.loads(fitted.out)
    # the call cost the prediction used comes back (the run is the prediction)
    call = fit["parameters"]["call_us"]
    assert call["value"] == pytest.approx(call["before"], rel=1e-2)
    assert [r["algorithm"] for r in fit["rows"]] == [r["algorithm"] for r in plan["predicted"]]


def test_commands_print_whole_and_the_files_land_in_the_folder(cli, tmp_path):
    out = tmp_path / "plan"
    result = cli(
        "measure-plan", "allreduce", "--sku", "nl64", "--group", "0-31", "--sizes", "1G", "-o", str(out)
    )
    assert result.code == 0, result.err
    command = next(line for line in result.out.splitlines() if line.startswith("NEURON_RT_ROOT_COMM_ID"))
    assert command.endswith("all_reduce --hosts HOST0 HOST1")  # one line, not wrapped
    assert sorted(p.name for p in out.iterdir()) == ["prediction.json", "replica-groups.json", "run.sh"]
    assert command in (out / "run.sh").read_text().splitlines()
    groups = json.loads((out / "replica-groups.json").read_text())["replica_groups"]
    assert len(groups[0][0]) == 32
    assert json.loads((out / "prediction.json").read_text())["commands"] == [command]


def test_refusals_are_one_line_with_exit_2(cli, tmp_path):
    for args in (
        ("allreduce", "--sku", "tpu-v5p-4x4x8", "--sizes", "1G"),  # xla: no benchmark to write
        ("allreduce", "--sku", "nvl72", "--group", "0-5", "--sizes", "1G"),  # part of two nodes
        ("allreduce", "--sku", "nl16", "--runtime", "nccl", "--sizes", "1G"),  # no NCCL facts
    ):
        result = cli("measure-plan", *args)
        assert result.code == 2 and len(result.err.strip().splitlines()) == 1, (args, result.err)
    a_file = tmp_path / "x"
    a_file.write_text("keep")
    result = cli("measure-plan", "allreduce", "--sku", "nl16", "--sizes", "1G", "-o", str(a_file))
    assert result.code == 2 and a_file.read_text() == "keep"
