"""Rendering: user text is printed literally in every format, and the table fits the terminal."""

import csv
import io
import json
import math
import re

import numpy as np
import pytest

from trnsim.errors import UsageError
from trnsim.outputs.render import Column, Format, Table, emit

TRICKY = ["[/]", "[bold]x[/bold]", "tpu [v2]", ":smile:", "[latency.switch_ns=50]"]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Terminal(io.StringIO):
    """A stream that says it is a terminal, as stdout does in an interactive shell."""

    def isatty(self) -> bool:
        return True


def _render(tables, fmt=Format.table, stream=None) -> str:
    stream = stream if stream is not None else io.StringIO()
    emit({"rows": [row for table in tables for row in table.rows]}, tables, fmt, stream)
    return ANSI.sub("", stream.getvalue())


@pytest.fixture
def terminal(monkeypatch):
    """A fake terminal of a given width (Rich reads COLUMNS)."""

    def make(width: int) -> Terminal:
        monkeypatch.setenv("COLUMNS", str(width))
        monkeypatch.setenv("TERM", "xterm-256color")  # a dumb terminal would be 80 wide whatever COLUMNS says
        return Terminal()

    return make


def _tricky_table() -> Table:
    return Table(
        title=" ".join(TRICKY),
        columns=[Column("name", " ".join(TRICKY), align="left"), Column("value", "tpu [v2]", "{:.2f}")],
        rows=[{"name": text, "value": 1.5} for text in TRICKY],
        footer=[f"legend {text}" for text in TRICKY],
    )


@pytest.mark.parametrize("on_terminal", [False, True])
def test_table_prints_user_text_verbatim(terminal, on_terminal):
    out = _render([_tricky_table()], stream=terminal(200) if on_terminal else io.StringIO())
    lines = out.splitlines()
    assert lines[0] == " ".join(TRICKY)  # the title
    assert " ".join(TRICKY) in lines[2]  # the header
    for text in TRICKY:
        assert any(re.fullmatch(rf"│ {re.escape(text)} *│ +1\.50 │", line) for line in lines), text
        assert f"legend {text}" in lines
    assert "😄" not in out


def _cells(row: str) -> list[str]:
    """The cells of a Markdown table row, split on unescaped pipes and unescaped."""
    assert row.startswith("| ") and row.endswith(" |"), row
    cells, cell, i = [], "", 1
    while i < len(row):
        if row[i] == "\\":
            cell += row[i + 1]
            i += 2
            continue
        if row[i] == "|":
            cells.append(cell.strip())
            cell = ""
        else:
            cell += row[i]
        i += 1
    return cells


def test_markdown_escapes_user_text():
    texts = [*TRICKY, "a | b", "`code`", "*star* _under_", "<b>html</b>", "back\\slash", "#7 in line"]
    table = Table(
        title="tpu [v2] *not bold* | # title",
        columns=[
            Column("name", "name | [header]", align="left"),
            Column("bytes", "size (B)"),
            Column("ratio", "B/A", "{:.3f}x"),
        ],
        rows=[{"name": text, "bytes": 1073741824, "ratio": 1.0} for text in texts],
        footer=["# Avg bus bandwidth    : 1 GB/s", "- not a list", "1. not a list", "    not code", "`a|b`"],
    )
    out = _render([table], Format.markdown)
    lines = out.splitlines()
    assert lines[0] == r"**tpu \[v2\] \*not bold\* \| # title**"  # a "#" inside a line is no heading
    rows = [line for line in lines if line.startswith("| ")]
    assert _cells(rows[0]) == ["name | [header]", "size (B)", "B/A"]
    assert [_cells(row) for row in rows[1:]] == [[text, "1073741824", "1.000x"] for text in texts]
    # numbers are printed as they are, not escaped
    assert "| 1073741824 | 1.000x |" in rows[1]
    # footers: separate paragraphs, none a heading, list or code block
    paragraphs = out.split("\n\n")[2:]
    assert paragraphs == [
        "\\# Avg bus bandwidth    : 1 GB/s",
        "\\- not a list",
        "1\\. not a list",
        "not code",
        "\\`a\\|b\\`\n",
    ]
    assert not any(line.startswith(("#", "-", "    ")) for line in lines)


def test_markdown_keeps_footers_apart_between_tables():
    table = Table("t", [Column("n", "n")], [{"n": 1}], ["# one", "# two"])
    out = _render([table, table], Format.markdown)
    assert out.count("\n\n\\# one\n\n\\# two\n") == 2


def test_csv_stays_plain():
    out = _render([_tricky_table()], Format.csv)
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["name", "value"]
    assert rows[1:] == [[text, "1.5"] for text in TRICKY]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, np.float64("nan"), np.float32("inf")])
@pytest.mark.parametrize("fmt", list(Format))
def test_non_finite_numbers_are_refused(bad, fmt):
    table = Table("t", [Column("bytes", "size (B)"), Column("busbw", "busbw", "{:.2f}")], [])
    table.rows = [{"bytes": 1, "busbw": 1.0}, {"bytes": 2, "busbw": bad}]
    stream = io.StringIO()
    with pytest.raises(UsageError, match=r"non-finite number \(NaN or infinity\)"):
        emit({"rows": table.rows}, [table], fmt, stream)
    assert stream.getvalue() == ""  # nothing half-written


def test_json_is_strict_and_otherwise_unchanged():
    out = _render([Table("t", [Column("x", "x")], [{"x": np.int64(3)}, {"x": 0.5}])], Format.json)
    assert json.loads(out) == {"schema": "trnsim/1", "rows": [{"x": 3}, {"x": 0.5}]}


# a results table shaped like `trnsim collective`'s: its headers and keys are the ones the README
# documents (test_the_table_here_has_the_documented_columns holds them to it); the formats, short
# headers and drop priorities are this test's inputs to the renderer
COLLECTIVE_COLUMNS = [
    Column("bytes", "size (B)"),
    Column("count", "count", drop_priority=3),
    Column("type", "type", align="left", drop_priority=2),
    Column("time_us", "time (us)", "{:.2f}"),
    Column("algbw_gbps", "algbw (GB/s)", "{:.2f}", short="algbw", drop_priority=4),
    Column("busbw_gbps", "busbw (GB/s)", "{:.2f}", short="busbw"),
    Column("algorithm", "algorithm", align="left", short="algo"),
    Column("bound_busbw_gbps", "bound busbw", "{:.2f}", short="bound"),
    Column("efficiency", "eff %", lambda v: f"{100 * v:.1f}"),
    Column("max_hops", "max hops", short="hops", drop_priority=1),
    Column("bottleneck", "bottleneck", align="left"),
]
COLLECTIVE_ROWS = [
    {
        "bytes": 1073741824,
        "count": 268435456,
        "type": "float",
        "time_us": 4085.90,
        "algbw_gbps": 262.79,
        "busbw_gbps": 521.93,
        "algorithm": "hierarchical",
        "bound_busbw_gbps": 1152.00,
        "efficiency": 0.453,
        "max_hops": 3,
        "bottleneck": "backplane",
    },
    {
        "bytes": 1024,
        "count": 256,
        "type": "float",
        "time_us": 6.25,
        "algbw_gbps": 0.16,
        "busbw_gbps": 0.31,
        "algorithm": "mesh",
        "bound_busbw_gbps": 1.19,
        "efficiency": 0.259,
        "max_hops": 3,
        "bottleneck": "x",
    },
]


def _collective() -> Table:
    title = "trn2-nl16 allreduce: 16 ranks (group all), alpha 1.5 us/step, algorithm auto; bandwidth bound limited by injection"
    return Table(
        title,
        COLLECTIVE_COLUMNS,
        [dict(row) for row in COLLECTIVE_ROWS],
        ["# Avg bus bandwidth : 253.2 GB/s"],
    )


def _body(out: str) -> list[list[str]]:
    """The table's data rows, split into cells."""
    return [
        [cell.strip() for cell in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")
    ]


def _docs(page: str) -> str:
    from pathlib import Path

    return (Path(__file__).resolve().parents[2] / "docs" / page).read_text()


def test_the_table_here_has_the_documented_columns():
    """The documented `trnsim collective` table (the user guide) and its JSON row fields (the output
    reference) name these columns."""
    text = _docs("guide/collective.md")
    line = next(line for line in text.splitlines() if line.startswith("| size (B) | count |"))
    assert [c.header for c in COLLECTIVE_COLUMNS] == [cell.strip() for cell in line.strip("|").split("|")]
    text = _docs("reference/output.md")
    fields = text[text.index("`collective`: `sku`") :]
    fields = fields[fields.index("`rows` (each with") : fields.index("); its CSV")]
    assert {c.key for c in COLLECTIVE_COLUMNS} <= set(re.findall(r"`(\w+)`", fields))


def test_table_fits_an_80_column_terminal(terminal, monkeypatch):
    from trnsim.outputs import terminal as shown_on

    # as the command line names how to see every column (trnsim.cli.app)
    monkeypatch.setattr(shown_on, "_see_wide", "--wide")
    monkeypatch.setattr(shown_on, "_see_unwrapped", "--format json|csv|markdown")
    out = _render([_collective()], stream=terminal(80))
    assert max(len(line) for line in out.splitlines()) <= 80
    note = " ".join(out.split("not shown to fit 80 columns: ")[1].split())
    dropped = note.split(";")[0].split(", ")
    # only columns that may go, the highest drop priority first: a column goes only with every
    # column of a higher priority, and they are named in the table's order
    priority = {c.header: c.drop_priority for c in COLLECTIVE_COLUMNS}
    assert dropped and all(priority[name] is not None for name in dropped)
    lowest = min(priority[name] for name in dropped)
    assert set(dropped) == {h for h, q in priority.items() if q is not None and q >= lowest}
    assert dropped == [c.header for c in COLLECTIVE_COLUMNS if c.header in dropped]
    shown = [c for c in COLLECTIVE_COLUMNS if c.header not in dropped]
    # every shown value is printed whole, in one cell of one line: no number cut, no word wrapped
    assert _body(out) == [[c.text(row[c.key]) for c in shown] for row in COLLECTIVE_ROWS]
    assert "--wide" in note and "--format json|csv|markdown" in note and "COLUMNS" in note
    assert "# Avg bus bandwidth : 253.2 GB/s" in out


def test_short_headers_come_before_dropping_columns(terminal):
    columns = [
        Column("bw", "bandwidth", short="bw"),
        Column("util", "utilisation", short="util"),
        Column("limit", "bottleneck", align="left", drop_priority=1),
    ]
    table = Table(None, columns, [{"bw": 1.5, "util": 0.5, "limit": "x"}])
    assert _headers(_render([table], stream=terminal(40))) == ["bandwidth", "utilisation", "bottleneck"]
    out = _render([table], stream=terminal(35))
    assert _headers(out) == ["bw", "util", "bottleneck"] and "not shown" not in out
    out = _render([table], stream=terminal(20))
    assert _headers(out) == ["bw", "util"] and "not shown to fit 20 columns: bottleneck;" in " ".join(
        out.split()
    )
    assert max(len(line) for line in out.splitlines()) <= 20


def _headers(out: str) -> list[str]:
    """The header cells (joined over the lines a wrapped header takes)."""
    lines = [
        [cell.strip() for cell in line.split("┃")[1:-1]] for line in out.splitlines() if line.startswith("┃")
    ]
    return [" ".join(filter(None, parts)) for parts in zip(*lines, strict=True)]


def test_wide_terminal_shows_everything(terminal):
    out = _render([_collective()], stream=terminal(200))
    assert "not shown" not in out
    assert _headers(out) == [c.header for c in COLLECTIVE_COLUMNS]
    assert max(len(line) for line in out.splitlines()) < 150
    assert _body(out) == [[c.text(row[c.key]) for c in COLLECTIVE_COLUMNS] for row in COLLECTIVE_ROWS]


def _wide_table() -> Table:
    columns = [Column(f"c{i}", f"column number {i}", "{:.3f}", drop_priority=1) for i in range(40)]
    row = {f"c{i}": 123456.789 + i for i in range(40)}
    title, footer = " ".join(["wide"] * 60), " ".join(["footer"] * 60)
    return Table(title, columns, [row], [footer])


@pytest.mark.parametrize(("columns", "width"), [(None, 80), ("120", 120), ("x", 80)])
def test_off_a_terminal_the_width_is_columns_or_80(monkeypatch, columns, width):
    # a pipe or a file reads as a terminal of COLUMNS (80 if unset or not a number) would
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    out = _render([_wide_table()])
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= width
    shown = _body(out)[0]
    assert shown == [f"{123456.789 + i:.3f}" for i in range(len(shown))] and len(shown) < 40
    note = " ".join(out.split(f"not shown to fit {width} columns: ")[1].split())
    assert note.startswith(f"column number {len(shown)}, ") and f"({40 - len(shown)} columns)" in note


def test_wide_keeps_every_column_and_line_whole(monkeypatch):
    from trnsim.outputs import render, terminal

    monkeypatch.setattr(terminal, "_wide", False)
    render.set_wide(True)
    try:
        out = _render([_wide_table()])
    finally:
        render.set_wide(False)
    assert _body(out) == [[f"{123456.789 + i:.3f}" for i in range(40)]]
    assert "not shown" not in out
    lines = out.splitlines()
    table = _wide_table()
    assert lines[0] == table.title and lines[-1] == table.footer[0]  # not wrapped
    assert len(lines[1]) > 200


def test_a_table_too_wide_even_narrowest_is_not_cut(terminal):
    columns = [Column(f"c{i}", f"n{i}") for i in range(8)]  # nothing can be dropped
    row = {f"c{i}": 10**12 + i for i in range(8)}
    out = _render([Table(None, columns, [row])], stream=terminal(40))
    assert _body(out) == [[str(10**12 + i) for i in range(8)]]
    assert "not shown" not in out


def test_text_columns_wrap_between_words_only(terminal):
    columns = [
        Column("n", "size (B)"),
        Column("why", "why it is limited", align="left"),
        Column("m", "bound busbw", "{:.2f}"),
    ]
    why = "the cross rack switch uplinks are oversubscribed four to one"
    out = _render([Table(None, columns, [{"n": 1073741824, "why": why, "m": 1152.0}])], stream=terminal(45))
    assert max(len(line) for line in out.splitlines()) <= 45
    words = " ".join(line.split("│")[2].strip() for line in out.splitlines() if line.startswith("│"))
    assert words.split() == why.split()
    assert "1073741824" in out and "1152.00" in out


def test_column_api_is_backwards_compatible():
    column = Column("k", "h", "{:.1f}", "left")
    assert (column.short, column.drop_priority) == (None, None)
    assert column.text(2.25) == "2.2" and column.text(None) == "-"


CONTROL = ["\x1b[2J\x1b[H", "bell\x07", "csi\x9b31m", "back\rover", "rtl\u202eevil", "nul\x00"]


@pytest.mark.parametrize("fmt", [Format.table, Format.csv, Format.markdown])
def test_control_characters_in_user_text_are_shown_not_acted_on(fmt, terminal):
    """An escape code in a description or file name cleared the screen in topo show."""
    from trnsim.outputs.render import visible

    table = Table(
        "title " + CONTROL[0],
        [Column("text", "text", align="left")],
        [{"text": text} for text in CONTROL],
        ["footer " + CONTROL[1]],
    )
    out = _render([table], fmt, terminal(200) if fmt == Format.table else None)
    # nothing a terminal acts on is left, and each text is there in its escaped form
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]", out)
    for text in CONTROL:
        shown = visible(" ".join(text.splitlines()) if fmt == Format.markdown else text)
        assert "\\" in shown or "\r" in text  # an escape such as \x1b stands for each control character
        if fmt == Format.markdown:  # and Markdown escapes the backslash and the bracket again
            shown = shown.replace("\\", "\\\\").replace("[", "\\[")
        assert shown in out


def test_error_lines_show_control_characters_escaped(capsys):
    from trnsim.outputs.render import print_error

    print_error("file \x1b[2Jname.yaml: bad")
    err = capsys.readouterr().err
    assert "\x1b[2J" not in err and "file \\x1b[2Jname.yaml: bad" in ANSI.sub("", err)


@pytest.mark.parametrize("width", [20, 40, 60, 80, 120])
def test_the_width_note_is_true_at_every_width(terminal, width):
    """The note says a table fits only when it does; when even its essential columns (whose words
    and numbers are never cut) are wider, it says that, with the width printed."""
    for table in (_collective(), Table("kv", [Column("k", "property", align="left"), Column("v", "value", align="left")],
                                       [{"k": "file", "v": "/a/very/long/path/that/is/one/word.yaml"}])):  # fmt: skip
        out = _render([table], stream=terminal(width))
        printed = max(len(line) for line in out.splitlines() if line[:1] in "┏┃│└")
        note = " ".join(out.split())
        if printed > width:
            assert (
                f"cannot fit {width} columns even with only the essential columns (this table is {printed} wide"
                in note
            )
            assert "not shown to fit" not in note
        else:
            assert "cannot fit" not in note
