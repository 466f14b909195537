"""One way to print results: a Rich table, JSON, CSV or Markdown.

Commands build a JSON payload (the machine contract) and a list of :class:`Table` views of it; this
module turns them into the format the user asked for. User text (titles, headers, cells, footers) is
always printed literally: never parsed as Rich markup or emoji, escaped in Markdown, and its control
characters shown as escapes in every text format (:func:`visible`).
"""

import csv
import json
import math
import numbers
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from trnsim.errors import UsageError

SCHEMA = "trnsim/1"

NON_FINITE = "the result contains a non-finite number (NaN or infinity); the inputs are out of range"


# the width a table is fitted to when the output is no terminal and COLUMNS is not set
DEFAULT_WIDTH = 80
# set by ``trnsim --wide`` (anywhere on the line): every column, whatever the width
_wide = False


def set_wide(wide: bool) -> None:
    """Print every column of a table whatever the width (``--wide``)."""
    global _wide
    _wide = wide


def table_width(terminal_width: int | None) -> int | None:
    """The width a table must fit: a terminal's (``terminal_width``); off a terminal (None) COLUMNS
    if set, else :data:`DEFAULT_WIDTH`; no limit (None) with ``--wide``."""
    import os

    if _wide:
        return None
    if terminal_width is not None:
        return terminal_width
    text = os.environ.get("COLUMNS", "").strip()
    return int(text) if text.isdigit() and int(text) >= 20 else DEFAULT_WIDTH


def available_width(stream=None) -> int | None:
    """The width a table printed to ``stream`` (stdout) must fit, as :func:`emit` finds it (None
    with ``--wide``): a command that would build more columns than can show builds fewer."""
    stream = stream or sys.stdout
    terminal = None
    if stream.isatty():
        from rich.console import Console

        terminal = Console(file=stream).width
    return table_width(terminal)


class Format(str, Enum):
    """Output formats every command accepts."""

    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"


@dataclass
class Column:
    """A column: the row key, its header and how to print a value (a format spec or a function).

    Parameters
    ----------
    key : str
        The row key (and the CSV header).
    header : str
        The header of the table and Markdown views.
    fmt : str or callable
        A ``str.format`` spec or a function turning a value into text.
    align : str
        ``"right"`` (numbers: never wrapped or cut in a table) or ``"left"``.
    short : str, optional
        A shorter header, used when the full headers do not fit the terminal.
    drop_priority : int, optional
        Columns that can be left out to fit the terminal, the highest first; ``None`` is always shown.
    """

    key: str
    header: str
    fmt: str | Callable[[Any], str] = "{}"
    align: str = "right"
    short: str | None = None
    drop_priority: int | None = None

    def text(self, value: Any) -> str:
        """The printed text of ``value``: ``-`` for ``None``; a NaN or infinity raises UsageError."""
        if value is None:
            return "-"
        _check_finite(value)
        return self.fmt(value) if callable(self.fmt) else self.fmt.format(value)


@dataclass
class Table:
    """A titled table of rows (dicts) with optional footer lines."""

    title: str | None
    columns: list[Column]
    rows: list[dict]
    footer: list[str] = field(default_factory=list)


# what a terminal acts on: C0 controls but tab and newline, DEL, C1 controls (CSI 0x9b among them)
# and the bidirectional overrides that reorder what a line shows
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    r"""``text`` with its control characters shown as escapes (``ESC`` as ``\x1b``): text from a
    file or the command line never clears the screen, moves the cursor or rings the bell.

    Examples
    --------
    >>> visible("a\x1b[2Jb")
    'a\\x1b[2Jb'
    """
    return _CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


def emit(payload: dict, tables: list[Table], fmt: Format, stream=None) -> None:
    """Print ``payload`` (JSON) or ``tables`` (table, CSV, Markdown) to ``stream`` (stdout).

    Parameters
    ----------
    payload : dict
        The JSON document (without ``schema``, which is added here).
    tables : list of Table
        The views printed by the table, CSV and Markdown formats.
    fmt : Format
        The output format.
    stream : file, optional
        Where to write; stdout by default.

    Raises
    ------
    UsageError
        When the output would hold a NaN or an infinity (nothing is written then).
    """
    stream = stream or sys.stdout
    if fmt == Format.json:
        try:
            text = json.dumps({"schema": SCHEMA, **payload}, indent=2, default=_json_default, allow_nan=False)
        except ValueError as exc:
            if "Out of range float" not in str(exc):  # e.g. a circular reference: a bug, not an input
                raise
            raise UsageError(NON_FINITE) from None
        stream.write(text + "\n")
    elif fmt == Format.csv:
        _emit_csv(tables, stream)
    elif fmt == Format.markdown:
        _emit_markdown(tables, stream)
    else:
        _emit_rich(tables, stream)


def _check_finite(value: Any) -> None:
    """Raise UsageError for a NaN or infinity, also inside lists, tuples, sets and dicts."""
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        if not math.isfinite(value):
            raise UsageError(NON_FINITE)
    elif isinstance(value, dict):
        for item in value.values():
            _check_finite(item)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _check_finite(item)


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"cannot serialise {type(value).__name__}")


def _emit_csv(tables: list[Table], stream) -> None:
    # CSV stays plain (the csv module quotes what needs it); check every value before writing any
    for table in tables:
        for row in table.rows:
            for column in table.columns:
                _check_finite(row.get(column.key))
    writer = csv.writer(stream, lineterminator="\n")
    for i, table in enumerate(tables):
        if len(tables) > 1:
            if i:
                stream.write("\n")
            stream.write(f"# {visible(table.title or '')}\n")
        writer.writerow([c.key for c in table.columns])
        for row in table.rows:
            writer.writerow([csv_cell(row.get(c.key)) for c in table.columns])


def csv_cell(value):
    """A value as one CSV cell: nothing for None, ``key=value;...`` for a mapping (link shares)."""
    if value is None:
        return ""
    if isinstance(value, dict):
        return visible(";".join(f"{key}={item}" for key, item in value.items()))
    return visible(value) if isinstance(value, str) else value


# CommonMark lets any ASCII punctuation be backslash-escaped; these are the ones that start inline
# markup (emphasis, code, links, HTML, entities, strikethrough) or end a table cell.
_MD_INLINE = re.compile(r"([\\|`*_\[\]<>&~])")
# at the start of a paragraph: a bullet ("- x", "+ x", "---") or an ordered list ("1. x", "2) x")
_MD_BULLET = re.compile(r"[-+](?=\s|$|-)")
_MD_ORDERED = re.compile(r"(\d{1,9})([.)])(?=\s|$)")


def _md(text: str, paragraph: bool = False) -> str:
    """``text`` escaped so Markdown renders it literally, on one line.

    Numbers (``1073741824``, ``1.000x``, ``-0.5``) are left as they are. A ``paragraph`` (a footer
    line) also loses its leading spaces (four make a code block) and has a list marker escaped.
    """
    text = visible(" ".join(text.splitlines()))
    if paragraph:
        text = text.lstrip()
    text = _MD_INLINE.sub(r"\\\1", text)
    if text.startswith("#"):  # a heading where a line starts; harmless inside a cell
        return "\\" + text
    if paragraph:
        if _MD_BULLET.match(text):
            return "\\" + text
        ordered = _MD_ORDERED.match(text)
        if ordered:  # escape the "." or ")" after the digits, so the number itself stays readable
            return f"{ordered[1]}\\{ordered[2]}{text[ordered.end() :]}"
    return text


def _emit_markdown(tables: list[Table], stream) -> None:
    # build everything first: a NaN in the last row must not leave half a document behind
    lines: list[str] = []
    for i, table in enumerate(tables):
        if i:
            lines.append("")
        if table.title:
            lines += [f"**{_md(table.title)}**", ""]
        lines.append("| " + " | ".join(_md(c.header) for c in table.columns) + " |")
        lines.append("|" + "|".join("---:" if c.align == "right" else "---" for c in table.columns) + "|")
        for row in table.rows:
            lines.append("| " + " | ".join(_md(c.text(row.get(c.key))) for c in table.columns) + " |")
        for footer in table.footer:
            # each footer line is its own paragraph, so none can turn into a heading or a list
            for part in footer.splitlines() or [""]:
                lines += ["", _md(part, paragraph=True)]
    stream.write("".join(line + "\n" for line in lines))


# Rich's box table: one space of padding each side of a cell and a border between and around columns
def _frame(n_columns: int) -> int:
    return 3 * n_columns + 1


def _span(text: str, whole: bool) -> tuple[int, int]:
    """The (narrowest, widest) a cell can be printed: a whole value or its longest word, its longest line."""
    from rich.cells import cell_len

    widest = max((cell_len(line) for line in text.splitlines()), default=0)
    if whole:
        return widest, widest
    return max((cell_len(word) for word in text.split()), default=0), widest


@dataclass
class _Fit:
    """How a table is printed: which columns, with which headers and content widths."""

    shown: list[int]
    headers: list[str]
    widths: list[int]
    dropped: list[int]

    @property
    def width(self) -> int:
        return sum(self.widths) + _frame(len(self.widths))


def _fit(columns: list[Column], cells: list[list[tuple[int, int]]], available: int | None) -> _Fit:
    """Choose headers, columns and widths so the table fits ``available`` characters (None: no limit).

    Full headers and every column when they fit; else short headers; else columns left out by
    ``drop_priority`` (highest first), retrying the full headers after each. A column is never
    narrower than its longest word or its widest number; if even that does not fit, the table is
    printed wider than ``available``.
    """

    from functools import cache

    @cache  # each column measured once per header choice: a wide matrix tries many drops
    def measure(index: int, short: bool) -> tuple[int, int, str]:
        column = columns[index]
        header = column.short if short and column.short else column.header
        low, high = _span(header, whole=False)  # headers wrap between words only
        for cell_low, cell_high in cells[index]:
            low, high = max(low, cell_low), max(high, cell_high)
        return max(low, 1), max(high, 1), header

    def attempt(dropped: list[int], short: bool) -> tuple[_Fit, list[int]]:
        """The table at its widest without the ``dropped`` columns, and each shown column's minimum."""
        shown = [i for i in range(len(columns)) if i not in dropped]
        measured = [measure(i, short) for i in shown]
        fit = _Fit(shown, [header for _, _, header in measured], [high for _, high, _ in measured], dropped)
        return fit, [low for low, _, _ in measured]

    full, _ = attempt([], False)
    if available is None or full.width <= available:
        return full
    # dropping the last column left would print nothing: keep at least one
    order = sorted(
        (i for i, c in enumerate(columns) if c.drop_priority is not None),
        key=lambda i: (-columns[i].drop_priority, -i),
    )[: len(columns) - 1]
    for count in range(len(order) + 1):
        for short in (False, True):
            fit, lows = attempt(order[:count], short)
            budget = available - _frame(len(lows))
            if sum(lows) <= budget:
                fit.widths = _shrink(lows, fit.widths, budget)
                return fit
    fit.widths = lows  # nothing fits: the narrowest table, wider than the terminal, but nothing cut
    return fit


def _shrink(lows: list[int], highs: list[int], budget: int) -> list[int]:
    """Widths within [low, high] summing to at most ``budget``, taking from the widest columns first."""
    if sum(highs) <= budget:
        return list(highs)

    def capped(cap: int) -> list[int]:
        return [max(low, min(high, cap)) for low, high in zip(lows, highs, strict=True)]

    # the largest common cap that fits (sum(lows) <= budget, so cap 0 always does)
    lo, hi = 0, max(highs)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if sum(capped(mid)) <= budget else (lo, mid - 1)
    widths = capped(lo)
    spare = budget - sum(widths)
    for i, high in enumerate(highs):
        if spare and widths[i] == lo < high:
            widths[i] += 1
            spare -= 1
    return widths


def _emit_rich(tables: list[Table], stream) -> None:
    from rich.cells import cell_len
    from rich.console import Console
    from rich.table import Table as RichTable
    from rich.text import Text

    terminal = stream.isatty()
    # markup, emoji and highlighting off: every string printed here is data, shown as it is
    console = Console(
        file=stream,
        color_system="auto" if terminal else None,
        highlight=False,
        markup=False,
        emoji=False,
    )
    # a terminal's width; off a terminal COLUMNS or 80, so a pipe or a file reads as a terminal does
    available = table_width(console.width if terminal else None)
    views = []
    for table in tables:  # every cell is formatted (and checked) before anything is printed
        texts = [
            [visible(column.text(row.get(column.key))) for column in table.columns] for row in table.rows
        ]
        cells = [
            [_span(texts[r][c], _whole(column, row.get(column.key))) for r, row in enumerate(table.rows)]
            for c, column in enumerate(table.columns)
        ]
        fit = _fit(table.columns, cells, available)
        footer = [visible(line) for line in table.footer]
        names = ""
        if fit.dropped:
            headers = [table.columns[c].header for c in sorted(fit.dropped)]
            names = ", ".join(headers)
            if len(headers) > 6:  # a matrix's columns: name the first and the last
                names = f"{', '.join(headers[:3])}, ..., {headers[-1]} ({len(headers)} columns)"
        if available is not None and fit.width > available:
            # words and numbers are never cut: the table stays wider than asked, and says so
            footer.append(
                f"cannot fit {available} columns even with only the essential columns (this table is "
                f"{fit.width} wide"
                + (
                    f"; not shown: {names}); see every column with --wide, "
                    if names
                    else "; its words and numbers are never cut); see it unwrapped with "
                )
                + "--format json|csv|markdown or a larger COLUMNS"
            )
        elif fit.dropped:
            footer.append(
                f"not shown to fit {available} columns: {names}; see every column with --wide, "
                "--format json|csv|markdown or a larger COLUMNS"
            )
        views.append((table, texts, fit, footer))

    for i, (table, texts, fit, footer) in enumerate(views):
        # never narrower than the table (nothing cropped); with --wide no line is wrapped either
        title = visible(table.title or "")
        lines = [line for text in [title, *footer] for line in text.splitlines()]
        console.width = max(available or max(map(cell_len, lines), default=0), fit.width)
        if i:
            console.print()
        if title:
            console.print(Text(title, style="bold"))
        view = RichTable()
        for c, header, width in zip(fit.shown, fit.headers, fit.widths, strict=True):
            view.add_column(Text(header), justify=table.columns[c].align, width=width, overflow="fold")
        for row in texts:
            view.add_row(*(Text(row[c]) for c in fit.shown))
        console.print(view)
        for line in footer:
            console.print(Text(line))


def _whole(column: Column, value: Any) -> bool:
    """Whether a cell is a number, printed whole: right-aligned columns hold formatted numbers."""
    return column.align == "right" or (isinstance(value, numbers.Number) and not isinstance(value, bool))


def tied(classes: str) -> str:
    """A bottleneck of tied link classes (``backplane=pcb=xrack``) as a table shows it, with room
    to wrap in a narrow column (``backplane = pcb = xrack``); JSON and CSV keep the compact form."""
    return classes.replace("=", " = ")


def kv_table(title: str, items: list[tuple[str, Any]]) -> Table:
    """A two-column property table."""
    return Table(
        title=title,
        columns=[Column("property", "property", align="left"), Column("value", "value", align="left")],
        rows=[{"property": k, "value": v} for k, v in items],
    )


def print_error(message: str, label: str = "error") -> None:
    """Print ``label: message`` as one line on stderr, the label in red.

    The message is printed as plain text: user input in it (a SKU, a file name, a ``--set`` value)
    is never read as Rich markup or emoji, whatever brackets or colons it holds.

    Parameters
    ----------
    message : str
        What went wrong; its line breaks become spaces.
    label : str
        ``error``, or ``regression`` for a failed threshold.
    """
    from rich.console import Console
    from rich.text import Text

    console = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
    # one line whatever the text holds (a file name or --set value may carry a newline)
    console.print(Text.assemble((f"{label}:", "red"), " ", visible(" ".join(message.splitlines()))))
