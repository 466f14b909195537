"""Skewed all-to-all: who sends how much to whom, when the destinations are not equally loaded.

An all-to-all's traffic is a ``p x p`` matrix ``T``: rank ``i`` sends ``T[i, j] * size`` bytes to
rank ``j``. nccl-tests' all-to-all is uniform, ``T = 1/p`` everywhere, so every rank sends ``size``
in all. Mixture-of-experts dispatch is not: tokens pick experts unevenly, and the ranks that host the
popular ("hot") experts receive more than the rest (Lepikhin et al., GShard, 2020; Fedus et al.,
Switch Transformer, 2021, who call max/mean the load imbalance).

Two ways to give the skew:

* an imbalance factor ``F`` over ``K`` hot ranks (:func:`hot_destinations`): each rank still sends
  ``size`` in all, but ranks ``0..K-1`` of the group each receive ``F`` times the mean and the others
  share the rest equally. ``F = 1`` is the uniform all-to-all.
* a matrix file (:func:`read_traffic`): ``p`` rows of ``p`` non-negative numbers, scaled so that a
  rank's buffer is ``size`` on average (the mean row sum is 1); a matrix of equal values is the
  uniform all-to-all.

The diagonal (what a rank keeps) never crosses a link. Skew changes which links are busiest, so only
the algorithms that send every block straight to its destination (``mesh``, ``pairwise``) take a
matrix; the store-and-forward ones combine blocks for several destinations in one flow.
"""

from pathlib import Path

import numpy as np

from trnsim.errors import ParameterError, UsageError


def uniform(p: int) -> np.ndarray:
    """The nccl-tests all-to-all: every rank sends ``1/p`` of its buffer to every rank."""
    return np.full((p, p), 1.0 / p)


def hot_destinations(p: int, factor: float, hot: int = 1) -> np.ndarray:
    """Every rank sends its whole buffer; ranks ``0..hot-1`` each receive ``factor`` times the mean.

    Parameters
    ----------
    factor : float
        Max/mean load of a destination: from 1 (uniform) to ``p / hot`` (the hot ranks get everything).
    hot : int
        How many ranks are hot (ranks ``0..hot-1`` of the group).
    """
    if not 1 <= hot < p:
        raise ParameterError(f"the hot ranks must number 1 to {p - 1} on a group of {p}, got {hot}", "skew")
    if not (np.isfinite(factor) and 1.0 <= factor <= p / hot):
        raise ParameterError(
            f"the imbalance factor must be from 1 to {p / hot:g} ({hot} hot of {p} ranks), got {factor:g}",
            "skew",
        )
    share = np.full(p, (p - hot * factor) / (p - hot))  # the cold ranks share what is left
    share[:hot] = factor
    return np.tile(share / p, (p, 1))


def parse_skew(text: str) -> tuple[float, int]:
    """``F`` or ``F:K`` (imbalance factor, hot ranks) from the command line."""
    factor_text, _, hot_text = text.partition(":")
    try:
        factor = float(factor_text)
        hot = int(hot_text) if hot_text else 1
    except ValueError:
        raise ParameterError(
            "expected FACTOR or FACTOR:HOT (e.g. 2 or 1.5:4), a number and a count", "skew", repr(text)
        ) from None
    if not np.isfinite(factor) or factor < 1:
        raise ParameterError("the imbalance factor is max/mean, at least 1", "skew", repr(text))
    if hot < 1:
        raise ParameterError("at least one hot rank", "skew", repr(text))
    return factor, hot


def read_traffic(path: Path, p: int) -> np.ndarray:
    """A ``p x p`` matrix from a text file (comma- or space-separated rows; ``#`` comments), scaled
    so its mean row sum is 1."""
    from trnsim import limits
    from trnsim.yamlio import read_text

    path = Path(path)
    # a regular file of bounded size: a FIFO would block forever and /dev/zero never end
    text = read_text(path, "traffic matrix file", limits.TRAFFIC_BYTES)
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].replace(",", " ").split()
        if not line:
            continue
        try:
            rows.append([float(value) for value in line])
        except ValueError:
            raise UsageError(
                f"{path}: line {number}: expected numbers separated by commas or spaces"
            ) from None
        if len(rows[-1]) != p:
            raise UsageError(
                f"{path}: line {number}: expected {p} values (one per rank), got {len(rows[-1])}"
            )
    if len(rows) != p:
        raise UsageError(f"{path}: expected {p} rows (one per sending rank), got {len(rows)}")
    matrix = np.asarray(rows)
    if not np.all(np.isfinite(matrix)) or np.any(matrix < 0):
        raise UsageError(f"{path}: every value must be a finite number >= 0")
    return _normalised(matrix, path)


def _normalised(matrix: np.ndarray, path: Path) -> np.ndarray:
    """``matrix`` scaled so its mean row sum is 1, safely at any magnitude: divided by its largest
    value first (so 1e308s do not overflow the sum, nor 1e-320s the scale factor); refused when what
    crosses links is nothing, or vanishes next to the largest value."""
    top = float(matrix.max())
    off = ~np.eye(len(matrix), dtype=bool)  # the diagonal is what a rank keeps, never on a link
    if top <= 0 or not np.any(matrix[off] > 0):
        raise UsageError(f"{path}: no rank sends anything to another")
    with np.errstate(under="ignore"):  # values below 1e-308 of the largest become 0: negligible
        scaled = matrix / top
    total, crossing = float(scaled.sum()), float(scaled[off].sum())
    if not (np.isfinite(total) and crossing > 0):
        raise UsageError(
            f"{path}: what ranks send to others vanishes next to the largest value ({top:g}): "
            "the values span too many orders of magnitude"
        )
    # the diagonal is part of a rank's buffer (as in nccl-tests), never on a link
    return scaled * (len(matrix) / total)


def imbalance(traffic: np.ndarray) -> float:
    """Max/mean of what the ranks receive from others (1 for a uniform all-to-all)."""
    received = traffic.sum(axis=0) - np.diag(traffic)
    return float(received.max() / received.mean()) if received.mean() > 0 else 1.0


def describe(traffic: np.ndarray | None, given: str) -> str:
    """How a traffic matrix reads in a header: ``uniform`` (none given), else skewed or evenly
    received with its imbalance (:func:`imbalance`), after ``given``, how the caller names it.

    >>> describe(hot_destinations(8, 2.0, 1), "skew 2:1")
    'skewed (skew 2:1: max/mean received 2.00)'
    """
    if traffic is None:
        return "uniform"
    factor = imbalance(traffic)
    kind = "skewed" if factor > 1 + 1e-9 else "evenly received"
    return f"{kind} ({given}: max/mean received {factor:.2f})"


def traffic_matrix(skew: str | None, path: Path | None, p: int) -> np.ndarray | None:
    """The matrix of a ``skew`` (``FACTOR[:HOT]``) or a traffic file at ``path`` for groups of ``p``
    ranks, or None when neither is given."""
    if skew is not None and path is not None:
        raise UsageError("give {skew} or {traffic}, not both", names=("skew", "traffic"))
    if skew is not None:
        return hot_destinations(p, *parse_skew(skew))
    if path is not None:
        return read_traffic(path, p)
    return None


def check_traffic(op_name: str, traffic: np.ndarray | None, p: int) -> None:
    """Refuse a traffic matrix for an op other than all-to-all, or of the wrong shape."""
    if traffic is None:
        return
    if op_name != "alltoall":
        raise UsageError(
            f"{{skew}} and {{traffic}} are for alltoall; {op_name} sends the same to every rank",
            names=("skew", "traffic"),
        )
    if traffic.shape != (p, p):
        raise UsageError(
            f"the traffic matrix is {traffic.shape[0]} x {traffic.shape[1]}; the group has {p} ranks"
        )
