"""A small dense linear-program solver for the schedule-weight LPs (tens to hundreds of variables).

scipy's HiGHS would solve these too, but importing ``scipy.optimize`` costs 0.15-0.5 s of start-up,
more than the whole of a typical ``trnsim collective`` run spends on them. The LPs here have a
few hundred rows at most, so a dense tableau simplex is fast; Bland's rule (the lowest index enters
and leaves) keeps it from cycling on their many degenerate rows, and a big-M term drives the
artificial variables of the equality rows out (tests hold it to scipy's answers).
"""

import numpy as np

from trnsim.errors import UsageError

# pivots smaller than this are zero, and reduced costs above -_REDUCED do not improve (the costs are
# scaled to at most 1 first; the big-M term is about 1e6, so its rounding stays far below)
_EPS = 1e-9
_REDUCED = 1e-9
# a safety stop far above what these problems need (Bland's rule terminates)
_MAX_PIVOTS = 50_000


def minimize(
    cost: np.ndarray, a_ub: np.ndarray, b_ub: np.ndarray, a_eq: np.ndarray, b_eq: np.ndarray
) -> np.ndarray:
    """``argmin cost @ x`` subject to ``a_ub @ x <= b_ub``, ``a_eq @ x == b_eq`` and ``x >= 0``.

    Parameters
    ----------
    cost : (n,) array
    a_ub, b_ub : (m, n) and (m,) arrays, ``b_ub >= 0``
    a_eq, b_eq : (k, n) and (k,) arrays, ``b_eq >= 0``

    Returns
    -------
    (n,) array
        An optimal vertex.

    Raises
    ------
    UsageError
        If the problem is infeasible or unbounded (a schedule LP never is; it would be a bug).
    """
    cost = np.asarray(cost, dtype=float)
    a_ub, a_eq = np.atleast_2d(a_ub).astype(float), np.atleast_2d(a_eq).astype(float)
    b_ub, b_eq = np.asarray(b_ub, dtype=float), np.asarray(b_eq, dtype=float)
    n, m, k = len(cost), len(b_ub), len(b_eq)
    if np.any(b_ub < 0) or np.any(b_eq < 0):
        raise ValueError("right-hand sides must be non-negative")
    scale = max(float(np.abs(cost).max(initial=0.0)), 1e-300)
    big = 1e6 * max(1.0, float(np.abs(cost / scale).sum()))
    # columns: x, slacks of the inequalities, artificials of the equalities; last column: rhs
    table = np.zeros((m + k, n + m + k + 1))
    table[:m, :n], table[m:, :n] = a_ub, a_eq
    table[:m, n : n + m] = np.eye(m)
    table[m:, n + m : n + m + k] = np.eye(k)
    table[:m, -1], table[m:, -1] = b_ub, b_eq
    gain = np.r_[cost / scale, np.zeros(m), np.full(k, big)]
    basis = list(range(n, n + m + k))
    for _ in range(_MAX_PIVOTS):
        reduced = gain - gain[basis] @ table[:, :-1]
        candidates = np.nonzero(reduced < -_REDUCED)[0]
        if not len(candidates):
            break
        entering = int(candidates[0])
        column = table[:, entering]
        positive = column > _EPS
        if not positive.any():
            raise UsageError("a schedule LP is unbounded (a bug: please report it)")
        ratios = np.full(len(column), np.inf)
        ratios[positive] = table[positive, -1] / column[positive]
        best = ratios.min()
        ties = np.nonzero(ratios <= best + _EPS * max(1.0, abs(best)))[0]
        leaving = int(min(ties, key=lambda row: basis[row]))
        table[leaving] /= table[leaving, entering]
        others = np.arange(len(table)) != leaving
        table[others] -= np.outer(table[others, entering], table[leaving])
        table[:, -1] = np.maximum(table[:, -1], 0.0)  # rounding must not make a basic value negative
        basis[leaving] = entering
    else:
        raise UsageError("a schedule LP did not converge (a bug: please report it)")
    solution = np.zeros(n + m + k)
    solution[basis] = table[:, -1]
    if solution[n + m :].max(initial=0.0) > 1e-9 * max(1.0, float(b_eq.max(initial=0.0))):
        raise UsageError("a schedule LP is infeasible (a bug: please report it)")
    return np.clip(solution[:n], 0.0, None)
