"""Parse and format sizes, bandwidths and times.

Conventions: GB/s means 10**9 bytes per second per direction. Sizes are bytes; on input the binary
suffixes K/M/G/T/P (as nccl-tests reads them), KiB/MiB/GiB/TiB/PiB, and the decimal KB/MB/GB/TB/PB are
accepted, up to :data:`MAX_SIZE` (1 PiB); a lowercase b after a prefix (Gb, kb, Kib) means bits and is
refused.
"""

import math
import re

from trnsim.errors import UsageError

GB = 1e9
# the largest message size accepted (1 PiB): far beyond any buffer, small enough that no time overflows
MAX_SIZE = 1 << 50

_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gib": 1 << 30,
    "t": 1 << 40,
    "tib": 1 << 40,
    "p": 1 << 50,
    "pib": 1 << 50,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "pb": 10**15,
}
_SIZE_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


def parse_size(text: str | int) -> int:
    """Parse a size such as ``"64KiB"``, ``"1M"`` or ``"4096"`` into bytes.

    Parameters
    ----------
    text : str or int
        The size; ``K``, ``M``, ``G`` and ``KiB``... are powers of 1024, ``KB``, ``MB``... powers of 1000.

    Returns
    -------
    int
        The size in bytes (a whole, non-negative number).

    Raises
    ------
    UsageError
        If the text is not a size, is negative, or is not a whole number of bytes.
    """
    if isinstance(text, int):
        value, unit = float(text), ""
    else:
        if text.strip().startswith("-"):
            raise UsageError(f"size {text!r} is negative: sizes are whole numbers of bytes")
        match = _SIZE_RE.match(text)
        suffix = match.group(2) if match else ""
        if len(suffix) > 1 and suffix.endswith("b") and suffix.lower() in _SIZE_UNITS:
            # Gb, Mb, kb, Kib: a lowercase b after a prefix conventionally means bits
            number, prefix = match.group(1), suffix[0].upper()
            raise UsageError(
                f"size {text!r}: b means bits; sizes are in bytes: write {number}{prefix}, "
                f"{number}{prefix}B or {number}{prefix}iB"
            )
        if not match or suffix.lower() not in _SIZE_UNITS:
            raise UsageError(
                f"size {text!r} is not a size: use bytes or a suffix K, M, G, T, P (x1024), KiB..PiB, "
                "KB..PB (a capital B: Gb would be bits)"
            )
        value, unit = float(match.group(1)), match.group(2).lower()
    nbytes = value * _SIZE_UNITS[unit]
    if not math.isfinite(nbytes) or nbytes > MAX_SIZE:
        raise UsageError(f"size {text!r} is too large: at most {MAX_SIZE} bytes (1 PiB)")
    if nbytes < 0:
        raise UsageError(f"size {text!r} is negative: sizes are whole numbers of bytes >= 0")
    if nbytes != int(nbytes):
        raise UsageError(f"size {text!r} is not a whole number of bytes")
    return int(nbytes)


def format_size(nbytes: float) -> str:
    """Format bytes with a binary suffix, e.g. ``1048576 -> "1 MiB"``."""
    for suffix, factor in (
        ("PiB", 1 << 50),
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ):
        if nbytes >= factor:
            value = nbytes / factor
            if value == int(value):
                return f"{value:g} {suffix}"
            return f"{value:.3g} {suffix}" if value < 1000 else f"{value:.0f} {suffix}"  # never 1.02e+03
    return f"{int(nbytes)} B"


def format_bytes(nbytes: int) -> str:
    """``1 GiB`` when ``nbytes`` is a whole number of a binary unit, else the exact count
    (``1,073,740,032 B``, a size nccl-tests rounded down)."""
    unit = next((factor for factor in (1 << 50, 1 << 40, 1 << 30, 1 << 20, 1 << 10) if nbytes >= factor), 1)
    return format_size(nbytes) if nbytes % unit == 0 else f"{int(nbytes):,} B"


def parse_percent(text: str, option: str = "threshold") -> float:
    """Parse ``"5%"`` or ``"0.05"`` into a fraction (0.05); messages start with ``option``.

    A bare number above 1 is refused rather than read as hundreds of percent: ``5`` is almost
    certainly meant as 5%, and a threshold that silently passes everything defeats a CI gate.
    """
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise UsageError(f"{option} {text!r} is not a percentage such as 5% or 0.05") from None
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"{option} {text!r} must be a finite percentage >= 0, such as 5% or 0.05")
    if not raw.endswith("%") and value > 1:
        raise UsageError(
            f"{option} {text!r} would mean {100 * value:g}%: write {raw}% or a fraction such as 0.05"
        )
    return value


def check_finite(
    name: str, value: float | None, minimum: float | None = None, maximum: float | None = None
) -> None:
    """Refuse nan, inf and values outside ``[minimum, maximum]`` for parameter ``name`` (a message
    that names it, :class:`~trnsim.errors.TrnsimError`)."""
    if value is None:
        return
    if not math.isfinite(value):
        raise UsageError(f"{{{name}}} {value} is not a finite number", names=name)
    if minimum is not None and value < minimum:
        raise UsageError(f"{{{name}}} must be >= {minimum:g}, got {value!r}", names=name)
    if maximum is not None and value > maximum:
        raise UsageError(f"{{{name}}} must be <= {maximum:g}, got {value!r}", names=name)


def size_sweep(min_bytes: int, max_bytes: int, factor: float) -> list[int]:
    """Sizes from ``min_bytes`` to ``max_bytes`` multiplying by ``factor``, as nccl-tests' -b/-e/-f."""
    if min_bytes <= 0:
        raise UsageError("the smallest size (-b) must be at least 1 byte")
    if max_bytes < min_bytes:
        raise UsageError(f"-e {max_bytes} is smaller than -b {min_bytes}")
    if not math.isfinite(factor) or factor <= 1:
        raise UsageError(f"step factor -f {factor} must be a finite number greater than 1")
    from trnsim import limits

    # count the rows before making them: -f 1.000001 over 8 B..1 GiB would be millions of sizes
    steps = math.floor(math.log(max_bytes * (1 + 1e-12) / min_bytes) / math.log(factor)) + 1
    limits.SIZES.check(steps, f"-b {min_bytes} -e {max_bytes} -f {factor!r}: the sweep has")
    sizes, size = [], float(min_bytes)
    while size <= max_bytes * (1 + 1e-12):
        sizes.append(int(round(size)))
        size *= factor
    return sizes


_COUNT_UNITS = {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}


def parse_count(text: str, option: str, maximum: float = 1e16) -> float:
    """A count such as a model's parameters: ``7e10``, ``70B`` (billion), ``1.5T``, ``350M``, ``8k``."""
    match = _SIZE_RE.match(str(text))
    unit = match.group(2).lower() if match else None
    if match is None or unit not in _COUNT_UNITS:
        raise UsageError(
            f"{option} {text!r}: expected a number with an optional k, M, B (billion) or T suffix, e.g. 70B"
        )
    value = float(match.group(1)) * _COUNT_UNITS[unit]
    if not math.isfinite(value) or not 1 <= value <= maximum:
        raise UsageError(f"{option} {text!r}: expected 1 to {maximum:g}")
    return value
