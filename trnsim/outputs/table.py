"""What a command prints, before it is printed: a table's columns and rows, and the output formats.

:mod:`trnsim.outputs.render` turns these into the format the user asked for.
"""

import math
import numbers
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from trnsim.errors import UsageError

SCHEMA = "trnsim/1"

NON_FINITE = "the result contains a non-finite number (NaN or infinity); the inputs are out of range"


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
        check_finite(value)
        return self.fmt(value) if callable(self.fmt) else self.fmt.format(value)


@dataclass(frozen=True)
class Scaled:
    """A column format: the value times ``factor`` in ``spec`` (``Scaled(100, "{:.1f}")`` shows 0.873
    as 87.3). A value, not a function, so that a table can be kept on disk (:mod:`trnsim.cli.outcome`)."""

    factor: float
    spec: str

    def __call__(self, value: Any) -> str:
        return self.spec.format(self.factor * value)


PERCENT = Scaled(100, "{:.1f}")  # a share as a percentage with one decimal, no sign


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


def check_finite(value: Any) -> None:
    """Raise UsageError for a NaN or infinity, also inside lists, tuples, sets and dicts."""
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        if not math.isfinite(value):
            raise UsageError(NON_FINITE)
    elif isinstance(value, dict):
        for item in value.values():
            check_finite(item)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            check_finite(item)
