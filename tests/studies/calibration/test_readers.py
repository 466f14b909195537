"""The readers of nccl-tests and nccom-test output, against the files in examples/measurements."""

import json
import math
import re
from pathlib import Path

import pytest

from trnsim.errors import ConfigError, UsageError
from trnsim.studies.calibration.readers import MeasuredRow, Measurement, parse_measurement, read_measurement

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "measurements"
# measured runs are named after their reference id (n2-..., g4-...); other files (README, a manifest) are not runs
RUN = re.compile(r"^[a-z]\d+-.+\.(txt|json)$")
RUNS = sorted(path.name for path in EXAMPLES.iterdir() if RUN.match(path.name))

# file: tool, format, op, ranks, units the bandwidth columns hold, number of rows
EXPECTED = {
    "n2-allreduce-2r-gibs.txt": ("nccom-test", "text", "allreduce", 2, "GiB/s", 11),
    "n2-allreduce-2r-gbs.txt": ("nccom-test", "text", "allreduce", 2, "GB/s", 11),
    "n5-allgather-32r.txt": ("nccom-test", "text", "allgather", 32, "GB/s", 4),
    "n6-allgather-8r-stats.txt": ("nccom-test", "text", "allgather", 8, "GB/s", 4),
    "n8-allreduce-16r-algorithm.txt": ("nccom-test", "text", "allreduce", 16, "GB/s", 8),
    "n8-allreduce-16r-algorithm.json": ("nccom-test", "json", "allreduce", 16, "GB/s", 8),
    "n12-allgather-32r-profile.txt": ("nccom-test", "text", "allgather", 32, "GB/s", 1),
    "g4-allreduce-4r-ring.txt": ("nccl-tests", "text", "allreduce", 4, "GB/s", 24),
    "g4-allreduce-4r-ring.json": ("nccl-tests", "json", "allreduce", 4, "GB/s", 24),
    "g9-allreduce-8r-nvls.txt": ("nccl-tests", "text", "allreduce", 8, "GB/s", 24),
}
GIB_PER_GB = (1 << 30) / 1e9


def factor(op: str, ranks: int) -> float:
    return 2 * (ranks - 1) / ranks if op == "allreduce" else (ranks - 1) / ranks


def half_unit(token: str) -> float:
    """Half a unit of the last printed digit of a plain decimal number."""
    return 0.5 * 10.0 ** -len(token.partition(".")[2])


def test_every_run_in_the_folder_is_expected():
    assert set(RUNS) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_parses_with_its_tool_units_and_rows(name):
    tool, fmt, op, ranks, units, count = EXPECTED[name]
    m = read_measurement(EXAMPLES / name)
    assert isinstance(m, Measurement)
    assert (m.tool, m.format, m.ranks, m.printed_units, len(m.rows)) == (tool, fmt, ranks, units, count)
    assert m.path.endswith(name)
    assert m.source.startswith(("aws-neuron/aws-neuron-sdk", "Azure/AI-benchmarking-guide"))
    assert m.dtype in ("fp32", "float")
    for row in m.rows:
        assert isinstance(row, MeasuredRow)
        assert row.op == op
        assert row.size_bytes > 0 and row.time_us > 0
        assert math.isfinite(row.algbw_gbps) and math.isfinite(row.busbw_gbps)
        assert row.algbw_gbps == pytest.approx(row.size_bytes / row.time_us / 1e3, rel=1e-12)
        assert row.busbw_gbps == pytest.approx(row.algbw_gbps * factor(op, ranks), rel=1e-12)
    sizes = [row.size_bytes for row in m.rows]
    assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes)


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if n.endswith(".txt")))
def test_text_rows_point_at_their_lines(name):
    lines = (EXAMPLES / name).read_text().splitlines()
    m = read_measurement(EXAMPLES / name)
    for row in m.rows:
        tokens = lines[row.line - 1].split()
        assert int(tokens[0]) == row.size_bytes


def test_gib_and_gb_forms_of_n2_read_to_the_same_rows():
    gib = read_measurement(EXAMPLES / "n2-allreduce-2r-gibs.txt")
    gb = read_measurement(EXAMPLES / "n2-allreduce-2r-gbs.txt")
    assert (gib.printed_units, gb.printed_units) == ("GiB/s", "GB/s")
    assert len(gib.rows) == len(gb.rows) == 11
    for a, b in zip(gib.rows, gb.rows, strict=True):
        assert a.size_bytes == b.size_bytes
        assert a.time_us == pytest.approx(b.time_us, rel=0.005)
        assert a.algbw_gbps == pytest.approx(b.algbw_gbps, rel=0.005)
        assert a.busbw_gbps == pytest.approx(b.busbw_gbps, rel=0.005)


def test_bandwidth_is_recomputed_not_copied():
    # the 2023 page printed 14.36 (GiB/s) for 1 MiB in 68 us: 15.42 decimal GB/s
    row = next(
        r for r in read_measurement(EXAMPLES / "n2-allreduce-2r-gibs.txt").rows if r.size_bytes == 1 << 20
    )
    assert row.algbw_gbps == pytest.approx(15.42, abs=0.01)
    assert row.busbw_gbps == pytest.approx(15.42, abs=0.01)


@pytest.mark.parametrize(
    ("text", "json_"),
    [
        ("g4-allreduce-4r-ring.txt", "g4-allreduce-4r-ring.json"),
        ("n8-allreduce-16r-algorithm.txt", "n8-allreduce-16r-algorithm.json"),
    ],
)
def test_json_form_reads_like_the_text_form(text, json_):
    a, b = read_measurement(EXAMPLES / text), read_measurement(EXAMPLES / json_)
    assert (a.ranks, a.rows[0].op) == (b.ranks, b.rows[0].op)
    for x, y in zip(a.rows, b.rows, strict=True):
        assert (x.size_bytes, x.algorithm) == (y.size_bytes, y.algorithm)
        assert x.time_us == pytest.approx(y.time_us, rel=0.005)
        assert x.busbw_gbps == pytest.approx(y.busbw_gbps, rel=0.005)
    assert [r.line for r in b.rows] == list(range(len(b.rows)))


def test_algorithm_column_is_kept():
    m = read_measurement(EXAMPLES / "n8-allreduce-16r-algorithm.txt")
    assert [r.algorithm for r in m.rows] == ["mesh"] * 5 + ["rdh"] + ["kangaring"] * 2
    assert all(r.algorithm is None for r in read_measurement(EXAMPLES / "n5-allgather-32r.txt").rows)


def printed_busbw(name: str, m: Measurement) -> list[tuple[MeasuredRow, float, float]]:
    """Each row with the busbw its file prints and that number's rounding, read independently of the reader."""
    path = EXAMPLES / name
    if name.endswith(".json"):
        results = json.loads(path.read_text())["results"]
        if m.tool == "nccl-tests":
            return [(r, results[r.line]["out_of_place"]["bus_bw"], 0.0) for r in m.rows]
        return [(r, results[r.line]["busbw(GB/s)"], 0.0) for r in m.rows]
    lines = path.read_text().splitlines()
    header = next(
        line.lstrip("#").split() for line in lines if line.lstrip("#").split()[:1] in (["size"], ["size(B)"])
    )
    column = next(i for i, token in enumerate(header) if token.startswith("busbw"))
    out = []
    for r in m.rows:
        token = lines[r.line - 1].split()[column]
        out.append((r, float(token), half_unit(token)))
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recomputed_busbw_matches_the_printed_busbw(name):
    m = read_measurement(EXAMPLES / name)
    scale = GIB_PER_GB if m.printed_units == "GiB/s" else 1.0
    checked = 0
    for row, printed, rounding in printed_busbw(name, m):
        # 2 %, plus the rounding of the printed digits (0.00 and 0.01 carry no more than that)
        assert abs(row.busbw_gbps - printed * scale) <= 0.02 * row.busbw_gbps + rounding * scale, (
            row,
            printed,
        )
        checked += printed >= 1.0
    assert checked >= 1  # at least one row large enough for the 2 % to bite


# ----------------------------------------------------------------------------------------------
# malformed input: a ConfigError of one line "<path>:<line>: ..."

BASE = """\
# trnsim: op=allreduce ranks=2
nccom-test -r 2 allr
    size(B)    count(elems)    type    time(us)    algbw(GB/s)    busbw(GB/s)
    1048576          262144    fp32          68          14.36          14.36
    4194304         1048576    fp32         107          36.51          36.51
Avg bus bandwidth:      25.4350GB/s
"""
ROW4 = "    1048576          262144    fp32          68          14.36          14.36"
ROW5 = "    4194304         1048576    fp32         107          36.51          36.51"


def refused(text: str, line: int, *words: str, **kwargs) -> str:
    with pytest.raises(ConfigError) as info:
        parse_measurement(text, "bad.txt", **kwargs)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"bad.txt:{line}: "), message
    for word in words:
        assert word in message, message
    return message


def test_base_is_valid():
    m = parse_measurement(BASE)
    assert (m.ranks, m.printed_units, len(m.rows), m.rows[0].line) == (2, "GiB/s", 2, 4)


@pytest.mark.parametrize(
    ("old", "new", "line", "words"),
    [
        (ROW5, ROW5.replace("107", "1o7"), 5, ("time", "'1o7'", "not a number")),
        (ROW4, ROW4.replace("14.36          14.36", "abc          14.36"), 4, ("algbw", "'abc'")),
        (ROW5, "    4194304         1048576    fp32         107", 5, ("columns", "found 4")),
        (ROW4, ROW4.replace("   68", "    0"), 4, ("time(us) 0", "> 0")),
        (ROW4, ROW4.replace("   68", "0.00 "), 4, ("> 0",)),
        (ROW4, ROW4.replace("   68", "  nan"), 4, ("finite",)),
        (ROW4, ROW4.replace("   68", "  inf"), 4, ("finite",)),
        (ROW4, ROW4.replace("    1048576", "   -1048576"), 4, ("negative",)),
        (ROW4, ROW4.replace("    1048576", "     1.5e6 "), 4, ("whole number",)),
        (ROW4, ROW4.replace("    1048576", "          0"), 4, ("size 0",)),
        (ROW4, ROW4.replace("14.36          14.36", "-1.00          14.36"), 4, ("negative",)),
        # GB/s in line 5 after GiB/s in line 4 (4194304 B / 107 us = 39.20 GB/s = 36.51 GiB/s)
        (ROW5, ROW5.replace("36.51          36.51", "39.20          39.20"), 5, ("GB/s", "GiB/s", "line 4")),
        (ROW5, ROW5.replace("36.51          36.51", "20.00          20.00"), 5, ("matches neither",)),
        (ROW5, ROW5.replace("36.51          36.51", "36.51          18.25"), 5, ("busbw", "rank count")),
        (ROW5, ROW5.replace("fp32", "bf16"), 5, ("type bf16", "line 4")),
        ("# trnsim: op=allreduce ranks=2", "# trnsim: op=hypercube ranks=2", 1, ("'hypercube'", "allreduce")),
        ("# trnsim: op=allreduce ranks=2", "# trnsim: op=allreduce ranks=two", 1, ("ranks", "'two'")),
        ("# trnsim: op=allreduce ranks=2", "# trnsim: op=allreduce ranks=1", 1, ("ranks 1",)),
        ("# trnsim: op=allreduce ranks=2", "# trnsim: op=allreduce hosts=2", 1, ("unknown key",)),
        (
            "# trnsim: op=allreduce ranks=2",
            "# trnsim: op=allgather ranks=2",
            2,
            ("op=allreduce here", "op=allgather"),
        ),
        ("# trnsim: op=allreduce ranks=2", "# trnsim: op=allreduce ranks=4", 2, ("ranks=2 here", "ranks=4")),
        ("nccom-test -r 2 allr", "nccom-test -r 2 permute", 2, ("op=permute here", "op=allreduce at line 1")),
        ("Avg bus bandwidth:      25.4350GB/s", "1 errors found - test failed", 6, ("not a number",)),
        (
            "Avg bus bandwidth:      25.4350GB/s",
            "    size(B)  type  time(us)  algbw(GB/s)",
            6,
            ("second table header",),
        ),
        ("Avg bus bandwidth:      25.4350GB/s", "# trnsim: op=allreduce", 6, ("before the data",)),
    ],
)
def test_malformed_text_is_refused_with_its_line(old, new, line, words):
    assert old in BASE
    refused(BASE.replace(old, new), line, *words)


@pytest.mark.parametrize("text", ["", "   \n\n", "\ufeff"])
def test_empty_file_is_refused(text):
    refused(text, 1, "empty")


def test_output_without_a_table_is_refused():
    refused("Neuron DKMS Driver is not running!\n", 1, "no table header")


def test_header_without_rows_is_refused():
    refused("\n".join(BASE.splitlines()[:3]) + "\n", 3, "no data rows")


def test_op_and_ranks_from_arguments_when_the_file_lacks_them():
    bare = "\n".join(BASE.splitlines()[2:]) + "\n"
    refused(bare, 1, "does not state the op", "# trnsim: op=")
    refused(bare, 1, "does not state the ranks", ranks=None, op="allr")
    m = parse_measurement(bare, op="all_reduce", ranks=2)
    assert (m.rows[0].op, m.ranks, [r.line for r in m.rows]) == ("allreduce", 2, [2, 3])


def test_arguments_must_agree_with_the_file():
    refused(BASE, 1, "op=allreduce here", "op=allgather was given", op="allgather")
    refused(BASE, 1, "ranks=2 here", "ranks=3 was given", ranks=3)
    refused(BASE, 0, "'hypercube'", op="hypercube")
    refused(BASE, 0, "ranks", ranks=2.0)
    assert parse_measurement(BASE, op="allr", ranks=2).ranks == 2


def test_wrong_rank_count_shows_in_busbw():
    text = (
        (EXAMPLES / "n5-allgather-32r.txt")
        .read_text()
        .replace("ranks=32", "ranks=8")
        .replace("-r 32", "-r 8")
    )
    refused(text, 7, "busbw", "8 ranks", "rank count")


def test_nccl_tests_op_and_ranks_come_from_the_tool_lines():
    text = (EXAMPLES / "g4-allreduce-4r-ring.txt").read_text().replace("# trnsim: op=allreduce ranks=4\n", "")
    m = parse_measurement(text)
    assert (m.rows[0].op, m.ranks) == ("allreduce", 4)
    refused(text.replace("starting: all_reduce_perf", "starting: hypercube_perf"), 9, "'hypercube_perf'")
    refused(text, 12, "ranks=4 here", "device lines", "ranks=8 was given", ranks=8)
    first_row = next(i for i, line in enumerate(text.splitlines(), 1) if line.split()[:1] == ["1024"])
    three = text.replace("#  Rank  3 Group", "#  Rank  2 Group")  # 3 distinct ranks: busbw no longer fits
    refused(three, first_row, "busbw", "3 ranks")


def test_nccl_tests_row_errors_name_their_line():
    lines = (EXAMPLES / "g9-allreduce-8r-nvls.txt").read_text().splitlines()
    number = next(i for i, line in enumerate(lines, 1) if line.split()[:1] == ["65536"])
    lines[number - 1] = " ".join(lines[number - 1].split()[:7])  # cut after the out-of-place algbw
    refused("\n".join(lines) + "\n", number, "columns", "found 7")


def test_nccl_tests_command_line_names_the_op():
    text = (EXAMPLES / "g9-allreduce-8r-nvls.txt").read_text().replace("# trnsim: op=allreduce ranks=8\n", "")
    header = next(
        i for i, line in enumerate(text.splitlines(), 1) if line.lstrip("#").split()[:1] == ["size"]
    )
    refused(text, header, "does not state the op")
    with_command = "mpirun -np 8 ./build/all_reduce_perf -b 1K -e 8G -f 2 -g 1\n" + text
    assert parse_measurement(with_command).rows[0].op == "allreduce"
    assert parse_measurement(text, op="allreduce").ranks == 8


def test_units_of_a_file_too_small_to_tell_follow_the_tool():
    old = "    size(B)  count(elems)  type  time(us)  algbw(GB/s)  busbw(GB/s)\n    8  2  fp32  520  0.00  0.00\n"
    new = old.replace("time(us)", "time:avg(us)")
    assert parse_measurement(old, op="allr", ranks=2).printed_units == "GiB/s"
    assert parse_measurement(new, op="allr", ranks=2).printed_units == "GB/s"


# ---------------------------------------------------------------------------------------------- JSON


def nccom_json(**entry) -> str:
    base = {
        "size(B)": 1048576,
        "count(elems)": 262144,
        "type": "fp32",
        "algbw(GB/s)": 15.42,
        "busbw(GB/s)": 15.42,
        "time:avg(us)": 68.0,
    }
    base.update(entry)
    return json.dumps({"trnsim": {"op": "allreduce", "ranks": 2}, "results": [base]}, indent=4)


def test_nccom_json_entry():
    m = parse_measurement(nccom_json())
    assert (m.tool, m.format, m.printed_units, m.rows[0].line) == ("nccom-test", "json", "GB/s", 0)


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"time:avg(us)": 0}, ("results[0]", "> 0")),
        ({"time:avg(us)": "68"}, ("results[0]", "not a number")),
        ({"size(B)": -4}, ("results[0]", "negative")),
        ({"size(B)": 1.5}, ("results[0]", "whole number")),
        ({"algbw(GB/s)": 20.0, "busbw(GB/s)": 20.0}, ("results[0]", "matches neither")),
        ({"busbw(GB/s)": 7.71}, ("results[0]", "busbw", "rank count")),
        ({"algbw(GB/s)": None, "busbw(GB/s)": None}, ("results[0]", "neither")),
    ],
)
def test_malformed_json_entries_are_refused(entry, words):
    message = refused(nccom_json(**entry), 0, *words)
    assert "results[0]" in message


def test_json_units_are_voted_like_text():
    gib = nccom_json(**{"algbw(GB/s)": 14.36, "busbw(GB/s)": 14.36})
    assert parse_measurement(gib).printed_units == "GiB/s"
    doc = json.loads(gib)
    doc["results"].append(json.loads(nccom_json())["results"][0])
    refused(json.dumps(doc), 0, "results[1]", "GB/s here", "GiB/s at results[0]")


def test_json_syntax_errors_name_the_line():
    text = nccom_json().replace('"type": "fp32",', '"type": "fp32"')
    refused(text, 11, "not valid JSON")  # the missing comma is found on the next line
    refused(nccom_json().replace("68.0", "NaN"), 0, "NaN")
    refused('{"results": []}', 0, "empty")
    refused('{"results": [{"what": 1}]}', 0, "results[0]")
    refused("[1, 2]", 1, "'results'")
    refused(nccom_json().replace('"ranks": 2', '"ranks": 2, "host": "x"'), 0, "unknown key 'host'")


def test_nccl_json_ranks_come_from_config():
    doc = json.loads((EXAMPLES / "g4-allreduce-4r-ring.json").read_text())
    assert "op" not in doc["trnsim"] and "ranks" not in doc["trnsim"]
    doc["config"]["ngpus"] = 8  # 8 ranks: the published busbw no longer fits 2(r-1)/r
    refused(json.dumps(doc), 0, "results[0]", "busbw", "8 ranks")
    doc["config"]["ngpus"] = 4
    doc["args"][0] = "./build/hypercube_perf"
    refused(json.dumps(doc), 0, "args[0]", "'hypercube'")
    del doc["args"]
    refused(json.dumps(doc), 0, "does not state the op")
    assert parse_measurement(json.dumps(doc), op="allreduce").ranks == 4


def test_read_measurement_refuses_a_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        read_measurement(tmp_path / "missing.txt")
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(ConfigError, match=r"empty\.txt:1: "):
        read_measurement(tmp_path / "empty.txt")


def _text_with_rows(rows: int) -> str:
    lines = (EXAMPLES / "g4-allreduce-4r-ring.txt").read_text().splitlines()
    data = [line for line in lines if line.strip() and not line.startswith("#")]
    header = [line for line in lines if line.startswith("#")]
    return "\n".join(header + [data[0]] * rows) + "\n"


def test_a_run_with_too_many_rows_is_refused_at_the_first_row_past_the_limit(monkeypatch):
    """A 10^6-row log was parsed whole (71 s, 931 MiB) before the fit refused its row count."""
    import trnsim.studies.calibration.logs.text as text_reader

    monkeypatch.setenv("TRNSIM_MAX_SIZES", "50")
    parsed = []
    original = text_reader.text_row
    monkeypatch.setattr(text_reader, "text_row", lambda *args: parsed.append(1) or original(*args))
    text = _text_with_rows(10_000)
    first_row = 1 + next(i for i, line in enumerate(text.splitlines()) if not line.startswith("#"))
    with pytest.raises(UsageError, match=rf"run.txt:{first_row + 50}: the run has at least 51 message sizes"):
        parse_measurement(text, "run.txt")
    assert len(parsed) == 51
    document = json.loads((EXAMPLES / "g4-allreduce-4r-ring.json").read_text())
    document["results"] *= 3  # 72 entries
    with pytest.raises(UsageError, match="run.json:0: the run has at least 72 message sizes"):
        parse_measurement(json.dumps(document), "run.json")


@pytest.mark.parametrize("where", ["rank", "ranks", "json", "time"])
def test_a_five_thousand_digit_number_is_one_clear_line(where):
    """Python refuses int() past 4,300 digits with a ValueError that surfaced as 'internal error'."""
    digits = "1" * 5000
    if where == "json":
        text = (
            (EXAMPLES / "g4-allreduce-4r-ring.json").read_text().replace('"size":1024,', f'"size":{digits},')
        )
        expected = "run:1: JSON: a number of 5,000 digits"
    else:
        text = (EXAMPLES / "g4-allreduce-4r-ring.txt").read_text()
        old, new = {
            "rank": ("#  Rank  1 Group", f"#  Rank  {digits} Group"),
            "ranks": ("ranks=4", f"ranks={digits}"),
            "time": ("-1    15.36", f"-1    {digits}"),
        }[where]
        assert old in text
        line = 1 + text[: text.index(old)].count("\n")
        text = text.replace(old, new, 1)
        expected = f"run:{line}: "
    with pytest.raises(ConfigError) as error:
        parse_measurement(text, "run")
    message = str(error.value)
    assert message.startswith(expected) and "\n" not in message and len(message) < 200
