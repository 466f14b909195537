"""Tables on a terminal: Rich tables fitted to the width (columns dropped by priority, headers
shortened, text wrapped) and the width itself (the terminal's, COLUMNS, or none with ``--wide``)."""

import io
import numbers
import sys
from dataclasses import dataclass
from typing import Any

from trnsim.outputs.table import Column, Table, visible

# the width a table is fitted to when the output is no terminal and COLUMNS is not set
DEFAULT_WIDTH = 80
# set by ``trnsim --wide`` (anywhere on the line): every column, whatever the width
_wide = False
# how a caller shows every column and every line whole, for the notes under a table that does not fit
# (the command line sets its options' names: set_wide)
_see_wide, _see_unwrapped = "the wide output", "the JSON, CSV or Markdown format"


def set_wide(wide: bool, see_wide: str | None = None, see_unwrapped: str | None = None) -> None:
    """Print every column of a table whatever the width (``wide``); ``see_wide`` and
    ``see_unwrapped`` say how the caller asks for every column and for unwrapped output, in the
    note under a table that does not fit."""
    global _wide, _see_wide, _see_unwrapped
    _wide = wide
    _see_wide = see_wide or _see_wide
    _see_unwrapped = see_unwrapped or _see_unwrapped


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


def plain_key(stream) -> tuple | None:
    """What a table printed to ``stream`` off a terminal depends on besides the tables: the width
    it is fitted to, the notes' wording and the stream's encoding (which box characters print).
    None on a terminal, where the console styles the text: :func:`plain_text` is for the others."""
    if stream.isatty():
        return None
    return table_width(None), _see_wide, _see_unwrapped, getattr(stream, "encoding", None)


def plain_text(tables: list[Table], encoding: str | None) -> str:
    """The text :func:`emit_rich` writes off a terminal whose stream has ``encoding``, as a string
    (to keep it: :mod:`trnsim.cli.outcome`)."""
    stream = _Plain(encoding)
    emit_rich(tables, stream)
    return stream.getvalue()


class _Plain(io.StringIO):
    """A file off a terminal with the encoding of the stream the text is for."""

    def __init__(self, encoding: str | None):
        super().__init__()
        self._encoding = encoding

    @property
    def encoding(self) -> str | None:
        return self._encoding

    def isatty(self) -> bool:
        return False


def emit_rich(tables: list[Table], stream) -> None:
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
                    f"; not shown: {names}); see every column with {_see_wide}, "
                    if names
                    else "; its words and numbers are never cut); see it unwrapped with "
                )
                + f"{_see_unwrapped} or a larger COLUMNS"
            )
        elif fit.dropped:
            footer.append(
                f"not shown to fit {available} columns: {names}; see every column with {_see_wide}, "
                f"{_see_unwrapped} or a larger COLUMNS"
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
