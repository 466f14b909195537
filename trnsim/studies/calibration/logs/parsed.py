"""What a parser of tool output hands back, and the helpers every parser shares.

A parser (:mod:`.text`, :mod:`.json_reader`) reads rows as printed (:class:`Raw`) and the values
the file claims for the op and rank count (:class:`Claim`), without deciding anything; the checks
across rows and claims come after (:mod:`.agree`, :mod:`.bandwidth`).
"""

from dataclasses import dataclass, field

from trnsim.errors import ConfigError


@dataclass
class Raw:
    """A row as printed, with the rounding of its printed digits."""

    where: str  # "path:line" or "path:0: results[i]", the start of a message about this row
    line: int
    size: int
    time: float
    time_res: float  # half a unit of the last printed digit of the time (0 for JSON)
    algbw: float | None
    algbw_res: float
    busbw: float | None
    busbw_res: float
    dtype: str | None
    algorithm: str | None


@dataclass
class Claim:
    """A value for the op or rank count, with where it was found."""

    value: object
    line: int
    origin: str


@dataclass
class Parsed:
    """What a parser read from one file: its rows as printed and the claims it makes."""

    tool: str
    format: str
    raws: list[Raw]
    source: str
    ops: list[Claim]
    ranks: list[Claim]
    default_units: str
    anchor: int  # the line a "not stated" message points at (the header; 0 for JSON)
    nodes: list[Claim] = field(default_factory=list)  # hosts the run spanned, where the file says


def fail(where: str, what: str) -> ConfigError:
    """The one-line error ``"{where}: {what}"`` (``where`` is ``"path:line"`` or a JSON key path)."""
    return ConfigError(f"{where}: {what}")


def quote(text: str) -> str:
    """``repr(text)``, shortened when long: a message stays one readable line."""
    if len(text) <= 40:
        return repr(text)
    return f"{text[:16]!r}...{text[-8:]!r} ({len(text):,} characters)"


def check_rows(count: int, where: str) -> None:
    """Refuse a run of more rows than one run may have, as soon as the count passes the limit."""
    from trnsim import limits

    limits.SIZES.check(count, f"{where}: the run has at least")


def require_columns(columns: dict[str, int], where: str, tool: str) -> dict[str, int]:
    """``columns``, if the header has a time column and a bandwidth column; else the message
    names the tool."""
    if "time" not in columns:
        raise fail(where, f"the {tool} header has no time column")
    if "algbw" not in columns and "busbw" not in columns:
        raise fail(where, f"the {tool} header has neither an algbw nor a busbw column")
    return columns


def common_dtype(parsed: Parsed) -> str | None:
    """The data type every row that prints one shares (``None`` when no row does)."""
    dtype = None
    first_line = 0
    for raw in parsed.raws:
        if raw.dtype is None:
            continue
        if dtype is None:
            dtype, first_line = raw.dtype, raw.line
        elif raw.dtype != dtype:
            raise fail(
                raw.where, f"type {raw.dtype} here but {dtype} at line {first_line}; one data type per file"
            )
    return dtype
