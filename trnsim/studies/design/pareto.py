"""The Pareto front: the points no other point beats on every objective at once.

A point ``a`` dominates ``b`` when it is at least as good on every objective and better on one
(each objective maximised or minimised). The front is the points that no point dominates; equal
points are all on it (neither dominates the other). It is computed by its definition, every pair
compared at once with numpy: ``n^2 x objectives`` comparisons, a few million for the largest grid a
design run evaluates (:data:`trnsim.limits.DESIGN_POINTS`).
"""

from __future__ import annotations

from collections.abc import Sequence

MAXIMISE, MINIMISE = 1, -1


def dominates(a: Sequence[float], b: Sequence[float], senses: Sequence[int]) -> bool:
    """Whether ``a`` dominates ``b`` (``senses``: :data:`MAXIMISE` or :data:`MINIMISE` per objective)."""
    signed = [(s * x, s * y) for x, y, s in zip(a, b, senses, strict=True)]
    return all(x >= y for x, y in signed) and any(x > y for x, y in signed)


def pareto_front(points: Sequence[Sequence[float]], senses: Sequence[int]) -> list[bool]:
    """Whether each point is on the front of ``points``.

    Parameters
    ----------
    points : sequence of sequences of float
        One tuple of objective values per point (finite numbers).
    senses : sequence of int
        :data:`MAXIMISE` or :data:`MINIMISE` per objective.
    """
    import numpy as np

    if len(points) == 0:
        return []
    values = np.asarray(points, dtype=float) * np.asarray(senses, dtype=float)  # every objective maximised
    at_least = (values[:, None, :] >= values[None, :, :]).all(axis=2)  # [i, j]: i is as good as j everywhere
    better = (values[:, None, :] > values[None, :, :]).any(axis=2)
    dominated = (at_least & better).any(axis=0)  # some i dominates j
    return [not bool(flag) for flag in dominated]
