"""Which measured rows a fit uses: a range of sizes, so that the parameters describe one regime of
a library that changes protocol between sizes (e.g. NCCL's large sizes); the other rows are still
evaluated and reported, marked as not fitted."""

import numpy as np

from trnsim.errors import ParameterError, UsageError


def range_text(fit_sizes: tuple[int | None, int | None]) -> str:
    """``(67108864, None)`` -> ``"64 MiB:"``."""
    from trnsim.units import format_size

    return ":".join("" if bound is None else format_size(bound).replace(" ", "") for bound in fit_sizes)


def parse_fit_sizes(text: str | None) -> tuple[int | None, int | None]:
    """``--fit-sizes MIN:MAX`` (either side may be empty) as bytes.

    Raises
    ------
    UsageError
        If the text is not ``MIN:MAX`` of sizes, or MIN exceeds MAX.
    """
    from trnsim.units import parse_size

    if text is None or not text.strip():
        return None, None
    if text.count(":") != 1:
        raise ParameterError(
            "expected MIN:MAX, e.g. 64M: or 1M:1G (either side may be empty)", "fit_sizes", repr(text)
        )
    low_text, high_text = (part.strip() for part in text.split(":"))
    try:
        low = parse_size(low_text) if low_text else None
        high = parse_size(high_text) if high_text else None
    except UsageError as exc:
        raise ParameterError(exc, "fit_sizes", repr(text)) from None
    if low is not None and high is not None and low > high:
        raise ParameterError("the smallest size is above the largest", "fit_sizes", repr(text))
    return low, high


def in_range(sizes: list[int], fit_sizes: tuple[int | None, int | None], path: str) -> np.ndarray:
    """Which of ``sizes`` lie in ``fit_sizes`` (``[min, max]`` bytes, None: unbounded).

    Raises
    ------
    UsageError
        When none does (``path`` names the measurement).
    """
    low, high = fit_sizes
    inside = np.asarray([(low is None or s >= low) and (high is None or s <= high) for s in sizes])
    if not inside.any():
        raise ParameterError(
            f"no row of {path} lies in the range (its sizes are {sizes[0]} to {sizes[-1]} bytes)",
            "fit_sizes",
            repr(range_text(fit_sizes)),
        )
    return inside


def notes(
    loss: str, inside: np.ndarray, parameters: int, fit_sizes: tuple[int | None, int | None]
) -> list[str]:
    """What a reader of the fit should know: a robust loss, rows left out, too few rows."""
    out = [] if loss == "linear" else [f"robust fit ({loss}): rows far off the curve weigh less"]
    if not inside.all():
        out.append(
            f"fitted to the {int(inside.sum())} of {len(inside)} rows sized {range_text(fit_sizes)}; the "
            "other rows are shown, not fitted"
        )
    if inside.sum() <= parameters:
        out.append(
            f"{int(inside.sum())} measured sizes for {parameters} parameters: "
            "the fit is exact or underdetermined"
        )
    return out
