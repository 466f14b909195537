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


# a split of the curve into one more regime is kept only when it at least halves the rms relative
# error of the affine fits, and only while that error exceeds 5%: an alpha-beta curve through
# measured points is rarely closer, and a kink smaller than that is noise, not a protocol switch
# (assumptions; the caller can always fit one range with fit_sizes)
SPLIT_GAIN = 0.5
SPLIT_FLOOR = 0.05
MAX_REGIMES = 3


def _segment_costs(sizes: np.ndarray, times: np.ndarray) -> np.ndarray:
    """``cost[i, j]``: the least sum of squared relative errors of ``time = a + b size`` (a, b >= 0)
    over rows ``i`` to ``j - 1``, from prefix sums of the normal equations (u = 1/t, v = s/t)."""
    u, v = 1.0 / times, sizes / times
    prefix = [np.concatenate(([0.0], np.cumsum(x))) for x in (u * u, u * v, v * v, u, v)]
    n = len(times)
    cost = np.full((n + 1, n + 1), np.inf)
    for i in range(n):
        for j in range(i + 2, n + 1):
            uu, uv, vv, su, sv = (p[j] - p[i] for p in prefix)
            count = j - i
            det = uu * vv - uv * uv
            a, b = (
                ((vv * su - uv * sv) / det, (uu * sv - uv * su) / det) if det > 1e-300 * uu * vv else (-1, -1)
            )
            if a < 0 or b < 0:  # the best with a or b at zero: the smaller of the two
                options = [(0.0, sv / vv), (su / uu, 0.0)]
                a, b = min(options, key=lambda ab: _sse(*ab, uu, uv, vv, su, sv, count))
            cost[i, j] = max(_sse(a, b, uu, uv, vv, su, sv, count), 0.0)
    return cost


def _sse(a, b, uu, uv, vv, su, sv, count) -> float:
    """sum((a u + b v - 1)^2) from the sums."""
    return a * a * uu + 2 * a * b * uv + b * b * vv - 2 * a * su - 2 * b * sv + count


def detect_regimes(sizes: list[int], times: list[float], min_rows: int = 3) -> list[tuple[int, int]]:
    """The regimes of a measured curve: index ranges ``[start, end)`` of consecutive rows (sizes
    ascending), each following one alpha-beta line ``time = a + b size``; one range when the curve
    has no kink worth a split (:data:`SPLIT_GAIN`, :data:`SPLIT_FLOOR`).

    A library that changes protocol with size (NCCL's LL, LL128, Simple) bends the curve where it
    switches: each regime is fitted apart so its parameters describe one protocol. Every regime has
    at least ``min_rows`` rows (a fit needs more rows than parameters); at most :data:`MAX_REGIMES`.
    """
    n = len(sizes)
    order = np.argsort(sizes, kind="stable")
    if list(order) != list(range(n)) or n < 2 * min_rows:
        return [(0, n)]
    cost = _segment_costs(np.asarray(sizes, float), np.asarray(times, float))
    # best[k][j]: the least cost of rows 0..j-1 in k + 1 regimes, with where the last one starts
    best = [{j: (cost[0, j], [0]) for j in range(min_rows, n + 1)}]
    for _ in range(1, MAX_REGIMES):
        layer = {}
        for j in range(2 * min_rows, n + 1):
            choices = [
                (total + cost[i, j], starts + [i])
                for i, (total, starts) in best[-1].items()
                if j - i >= min_rows
            ]
            if choices:
                layer[j] = min(choices, key=lambda choice: choice[0])
        best.append(layer)
    error, starts = best[0][n]
    for k in range(1, MAX_REGIMES):
        if n not in best[k]:
            break
        total, more = best[k][n]
        if np.sqrt(error / n) <= SPLIT_FLOOR or np.sqrt(total / n) > SPLIT_GAIN * np.sqrt(error / n):
            break
        error, starts = total, more
    return [(start, end) for start, end in zip(starts, [*starts[1:], n], strict=True)]
