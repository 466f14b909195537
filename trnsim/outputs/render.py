"""One way to print results: a Rich table, JSON, CSV or Markdown.

Commands build a JSON payload (the machine contract) and a list of :class:`Table` views of it; this
module turns them into the format the user asked for. User text (titles, headers, cells, footers) is
always printed literally: never parsed as Rich markup or emoji, escaped in Markdown, and its control
characters shown as escapes in every text format (:func:`visible`). The parts: the table and format
types (:mod:`trnsim.outputs.table`), the terminal (:mod:`trnsim.outputs.terminal`), CSV and
Markdown (:mod:`trnsim.outputs.plain`).
"""

import json
import sys
from typing import Any

from trnsim.errors import UsageError
from trnsim.outputs.plain import csv_cell, emit_csv, emit_markdown
from trnsim.outputs.table import NON_FINITE, PERCENT, SCHEMA, Column, Format, Scaled, Table, visible
from trnsim.outputs.terminal import available_width, emit_rich, set_wide, table_width

__all__ = [
    "NON_FINITE",
    "PERCENT",
    "SCHEMA",
    "Column",
    "Format",
    "Scaled",
    "Table",
    "available_width",
    "csv_cell",
    "emit",
    "kv_table",
    "print_error",
    "set_wide",
    "table_width",
    "tied",
    "visible",
]


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
    try:
        _emit(payload, tables, fmt, stream)
    except BrokenPipeError:
        # the reader went away (`trnsim ... | head`): the run goes on to what decides its exit code
        # (a baseline check that finds a regression still exits 1), the rest of stdout to nowhere
        _nowhere(stream)


def _nowhere(stream) -> None:
    """Point ``stream``'s file at the null device: what is still buffered, and any later write, goes
    there without error."""
    import os

    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, stream.fileno())
    finally:
        os.close(null)


def _emit(payload: dict, tables: list[Table], fmt: Format, stream) -> None:
    if fmt == Format.json:
        try:
            text = json.dumps({"schema": SCHEMA, **payload}, indent=2, default=_json_default, allow_nan=False)
        except ValueError as exc:
            if "Out of range float" not in str(exc):  # e.g. a circular reference: a bug, not an input
                raise
            raise UsageError(NON_FINITE) from None
        stream.write(text + "\n")
    elif fmt == Format.csv:
        emit_csv(tables, stream)
    elif fmt == Format.markdown:
        emit_markdown(tables, stream)
    else:
        emit_rich(tables, stream)


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"cannot serialise {type(value).__name__}")


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
