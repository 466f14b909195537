"""``trnsim collective --export-schedule F --schedule-format`` and ``trnsim schedule check``: the
exported programs check correct, a wrong one exits 1, an unreadable one 2."""

import json
import xml.etree.ElementTree as ET

import pytest


@pytest.mark.parametrize(
    ("sku", "algo", "extra"),
    [("nl16", "ring", []), ("nl72x2", "multidim", ["--group", "0-15"])],
)
def test_export_then_check(cli, tmp_path, sku, algo, extra):
    path = tmp_path / f"{algo}.xml"  # the suffix picks msccl-xml
    run = cli(
        "collective",
        "allreduce",
        "--sku",
        sku,
        "--algo",
        algo,
        "--sizes",
        "1M",
        *extra,
        "--export-schedule",
        str(path),
    )
    assert run.code == 0, run.err
    root = ET.parse(path).getroot()
    assert root.get("name") == algo and root.get("coll") == "allreduce"
    result = cli("schedule", "check", str(path), "--format-out", "json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["format"] == "msccl-xml" and data["correct"] and data["ranks"] == int(root.get("ngpus"))
    # every rank of an all-reduce sends at least 2 (p - 1) / p of S
    p = data["ranks"]
    assert data["sent_share_of_size"]["min"] >= 2 * (p - 1) / p - 1e-9
    table = cli("schedule", "check", str(path), "--format", "msccl-xml")
    assert table.code == 0 and "correct: every rank ends with every block" in table.out


def test_a_wrong_program_exits_1_with_its_first_violation(cli, tmp_path):
    path = tmp_path / "ring.xml"
    cli(
        "collective",
        "allreduce",
        "--sku",
        "nl16",
        "--algo",
        "ring",
        "--sizes",
        "1M",
        "--export-schedule",
        str(path),
    )
    root = ET.parse(path).getroot()
    # drop the last transfer into gpu 1: its last receive and the matching last send
    recv_tb = next(tb for tb in root.findall("gpu")[1].findall("tb") if tb.get("recv") != "-1")
    recv_tb.remove(recv_tb.findall("step")[-1])
    sender = root.findall("gpu")[int(recv_tb.get("recv"))]
    send_tb = next(
        tb for tb in sender.findall("tb") if tb.get("send") == "1" and tb.get("chan") == recv_tb.get("chan")
    )
    send_tb.remove(send_tb.findall("step")[-1])
    wrong = tmp_path / "wrong.xml"
    wrong.write_bytes(ET.tostring(root))
    result = cli("schedule", "check", str(wrong))
    assert result.code == 1
    assert "wrong: incomplete: at the end, rank " in result.out and result.err.count("\n") == 1


def test_unreadable_files_and_inexpressible_programs_are_one_line_exit_2(cli, tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<algo")
    result = cli("schedule", "check", str(bad))
    assert result.code == 2 and result.err.count("\n") == 1 and "bad.xml" in result.err
    unknown = tmp_path / "x.bin"
    unknown.write_bytes(b"\x00\x01")
    assert cli("schedule", "check", str(unknown)).code == 2
    out = tmp_path / "nvls.xml"
    run = cli(
        "collective",
        "allreduce",
        "--sku",
        "hgx-h100",
        "--algo",
        "nvls",
        "--sizes",
        "1M",
        "--export-schedule",
        str(out),
    )
    assert run.code == 2 and "nvls reduces in the network" in run.err and run.err.count("\n") == 1
    assert not out.exists()
    fmt = cli(
        "collective", "allreduce", "--sku", "nl16", "--export-schedule", str(out), "--schedule-format", "nope"
    )
    assert fmt.code == 2 and "--schedule-format" in fmt.err


def test_json_export_stays_trnsims_own(cli, tmp_path):
    path = tmp_path / "s.json"
    assert (
        cli("collective", "allreduce", "--sku", "nl16", "--sizes", "1M", "--export-schedule", str(path)).code
        == 0
    )
    assert json.loads(path.read_text())["format"].startswith("trnsim-schedule")


def test_mscclpp_plan_exports_checks_and_costs_as_the_algorithm(cli, tmp_path):
    path = tmp_path / "r.json"
    args = ("collective", "allreduce", "--sku", "nl16", "--sizes", "1M,1G", "--format", "json")
    run = cli(
        *args[:-2], "--algo", "ring", "--export-schedule", str(path), "--schedule-format", "mscclpp-json"
    )
    assert run.code == 0, run.err
    checked = cli("schedule", "check", str(path), "--format-out", "json")
    assert checked.code == 0 and json.loads(checked.out)["format"] == "mscclpp-json"

    def busbw(*extra):
        result = cli(*args, *extra)
        assert result.code == 0, result.err
        data = json.loads(result.out)
        return [row["busbw_gbps"] for row in (data["rows"] if isinstance(data, dict) else data)]

    imported, ring = busbw("--schedule", str(path)), busbw("--algo", "ring", "--runtime", "ideal")
    assert all(abs(a - b) <= 1e-9 * b for a, b in zip(imported, ring, strict=True))


@pytest.mark.parametrize(
    ("args", "name", "ends"),
    [
        (["reduce", "--root", "3", "--algo", "chain"], "r.json", "the root (rank 3) ends with every block"),
        (
            ["broadcast", "--root", "5", "--algo", "tree"],
            "b.et",
            "every rank ends with every block of the root's (rank 5) buffer",
        ),
        (
            ["gather", "--root", "2", "--algo", "mesh"],
            "g.et",
            "every rank ends with the block every rank sent it",
        ),
        (
            ["allgatherv", "--counts", "COUNTS", "--algo", "ring"],
            "v.json",
            "every rank ends with every rank's block",
        ),
    ],
)
def test_the_new_ops_export_the_program_that_was_costed_and_it_checks(cli, tmp_path, args, name, ends):
    # the program is the costed plan's: its root, matrix or unequal blocks (an export once built it
    # for root 0, or failed with an internal error for gather and allgatherv)
    counts = tmp_path / "counts.txt"
    counts.write_text(" ".join(str(1 + i % 5) for i in range(16)))
    args = [str(counts) if a == "COUNTS" else a for a in args]
    path = tmp_path / name
    run = cli("collective", *args, "--sku", "nl16", "--sizes", "1M", "--export-schedule", str(path))
    assert run.code == 0, run.err
    read = tmp_path / name.replace(".et", ".0.et")
    result = cli("schedule", "check", str(read))
    assert result.code == 0 and f"correct: {ends}" in result.out, result.out + result.err
    if name.endswith(".json"):
        program = json.loads(path.read_text())["program"]
        assert isinstance(program, dict), program
    refused = cli(
        "collective", *args, "--sku", "nl16", "--sizes", "1M", "--export-schedule", str(tmp_path / "x.xml")
    )
    assert refused.code == 2 and refused.err.count("\n") == 1 and not (tmp_path / "x.xml").exists(), (
        refused.err
    )
