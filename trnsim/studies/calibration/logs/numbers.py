"""Sizes, times and bandwidths as printed (text) or as JSON values: checked, with their limits and
the rounding their printed digits carry. Every message starts with ``where`` (``"path:line"``)."""

import math
import re

from trnsim.studies.calibration.logs.parsed import fail, quote

WHOLE = re.compile(r"[0-9]+")
MAX_SIZE = 1 << 50  # 1 PiB: far beyond any buffer


def parse_size(text: str, where: str) -> int:
    """A printed size: a whole number of bytes, 1 to :data:`MAX_SIZE`."""
    if not WHOLE.fullmatch(text):
        if text.startswith("-") and WHOLE.fullmatch(text[1:]):
            raise fail(where, f"size {text} is negative; expected a whole number of bytes > 0")
        raise fail(where, f"size {quote(text)} is not a whole number of bytes")
    if len(text) > 20 or int(text) > MAX_SIZE:
        shown = text if len(text) <= 40 else f"of {len(text):,} digits"
        raise fail(where, f"size {shown} is larger than {MAX_SIZE:,} bytes")
    if int(text) == 0:
        raise fail(where, "size 0: expected a size > 0 bytes")
    return int(text)


def parse_number(text: str, where: str, what: str) -> float:
    """A printed finite number; ``what`` names the column in the message."""
    try:
        value = float(text)
    except ValueError:
        raise fail(where, f"{what} {quote(text)} is not a number") from None
    if not math.isfinite(value):
        raise fail(where, f"{what} {quote(text)} is not a finite number")
    return value


def parse_bandwidth(text: str, where: str, what: str) -> float:
    """A printed bandwidth: a finite number >= 0."""
    value = parse_number(text, where, what)
    if value < 0:
        raise fail(where, f"{what} {text} is negative")
    return value


def half_unit(text: str) -> float:
    """Half a unit of the last printed digit: the rounding a printed number carries."""
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    try:
        shift = int(exponent) if exponent else 0
    except ValueError:
        shift = 0
    return 0.5 * 10.0 ** (shift - decimals)


def json_number(entry: dict, key: str, where: str, required: bool) -> float | None:
    """``entry[key]`` as a finite float; ``None`` when absent and not ``required``."""
    value = entry.get(key)
    if value is None:
        if required:
            raise fail(where, f"no {key!r}")
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fail(where, f"{key} {value!r} is not a number")
    if not math.isfinite(value):
        raise fail(where, f"{key} {value!r} is not a finite number")
    return float(value)


def json_size(value, where: str) -> int:
    """A JSON size: an integer (not a bool, not a float) checked as :func:`parse_size` checks text."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(where, f"size {value!r} is not a whole number of bytes")
    return parse_size(str(value), where)
