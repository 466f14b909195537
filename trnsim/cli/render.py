"""One way to print results: a Rich table, JSON, CSV or Markdown.

Commands build a JSON payload (the machine contract) and a list of :class:`Table` views of it; this
module turns them into the format the user asked for.
"""

import csv
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

SCHEMA = "trnsim/1"


class Format(str, Enum):
    """Output formats every command accepts."""

    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"


@dataclass
class Column:
    """A column: the row key, its header and how to print a value (a format spec or a function)."""

    key: str
    header: str
    fmt: str | Callable[[Any], str] = "{}"
    align: str = "right"

    def text(self, value: Any) -> str:
        if value is None:
            return "-"
        return self.fmt(value) if callable(self.fmt) else self.fmt.format(value)


@dataclass
class Table:
    """A titled table of rows (dicts) with optional footer lines."""

    title: str | None
    columns: list[Column]
    rows: list[dict]
    footer: list[str] = field(default_factory=list)


def emit(payload: dict, tables: list[Table], fmt: Format, stream=None) -> None:
    """Print ``payload`` (JSON) or ``tables`` (table, CSV, Markdown) to ``stream`` (stdout)."""
    stream = stream or sys.stdout
    if fmt == Format.json:
        stream.write(json.dumps({"schema": SCHEMA, **payload}, indent=2, default=_json_default) + "\n")
    elif fmt == Format.csv:
        _emit_csv(tables, stream)
    elif fmt == Format.markdown:
        _emit_markdown(tables, stream)
    else:
        _emit_rich(tables, stream)


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"cannot serialise {type(value).__name__}")


def _emit_csv(tables: list[Table], stream) -> None:
    writer = csv.writer(stream, lineterminator="\n")
    for i, table in enumerate(tables):
        if len(tables) > 1:
            if i:
                stream.write("\n")
            stream.write(f"# {table.title}\n")
        writer.writerow([c.key for c in table.columns])
        for row in table.rows:
            writer.writerow(["" if row.get(c.key) is None else row.get(c.key) for c in table.columns])


def _emit_markdown(tables: list[Table], stream) -> None:
    for i, table in enumerate(tables):
        if i:
            stream.write("\n")
        if table.title:
            stream.write(f"**{table.title}**\n\n")
        stream.write("| " + " | ".join(c.header for c in table.columns) + " |\n")
        stream.write("|" + "|".join("---:" if c.align == "right" else "---" for c in table.columns) + "|\n")
        for row in table.rows:
            stream.write("| " + " | ".join(c.text(row.get(c.key)) for c in table.columns) + " |\n")
        for line in table.footer:
            stream.write(f"\n{line}\n")


def _emit_rich(tables: list[Table], stream) -> None:
    from rich.console import Console
    from rich.table import Table as RichTable
    from rich.text import Text

    terminal = stream.isatty()
    # off a terminal there is no colour to show: skip Rich's colour and highlighting work
    console = Console(
        file=stream,
        width=None if terminal else 200,
        color_system="auto" if terminal else None,
        highlight=terminal,
        emoji=False,
    )
    for i, table in enumerate(tables):
        if i:
            console.print()
        view = RichTable(title=table.title, title_justify="left", title_style="bold")
        for column in table.columns:
            # numbers are never cut: a too-wide table wraps its headers and text columns instead
            widest = max((len(column.text(row.get(column.key))) for row in table.rows), default=0)
            numeric = column.align == "right"
            view.add_column(
                column.header, justify=column.align, overflow="fold", min_width=widest if numeric else None
            )
        for row in table.rows:
            # Text cells skip markup and emoji parsing: values are data, not Rich markup
            view.add_row(*(Text(column.text(row.get(column.key))) for column in table.columns))
        console.print(view)
        for line in table.footer:
            console.print(line, highlight=False)


def kv_table(title: str, items: list[tuple[str, Any]]) -> Table:
    """A two-column property table."""
    return Table(
        title=title,
        columns=[Column("property", "property", align="left"), Column("value", "value", align="left")],
        rows=[{"property": k, "value": v} for k, v in items],
    )
