"""A small dense linear-program solver for the schedule-weight LPs (tens to hundreds of variables).

scipy's HiGHS would solve these too, but importing ``scipy.optimize`` costs 0.15-0.5 s of start-up,
more than the whole of a typical ``trnsim collective`` run spends on them. The LPs here have a
few hundred rows at most, so a dense tableau simplex is fast; Bland's rule (the lowest index enters
and leaves) keeps it from cycling on their many degenerate rows, and a big-M term drives the
artificial variables of the equality rows out (tests hold it to scipy's answers). Larger LPs (more
than :data:`DENSE_ROWS` rows), and any whose dense answer fails its constraints, go to HiGHS.
"""

import numpy as np

from trnsim.errors import UsageError

# pivots smaller than this are zero, and reduced costs above -_REDUCED do not improve (the costs are
# scaled to at most 1 first; the big-M term is about 1e6, so its rounding stays far below)
_EPS = 1e-9
_REDUCED = 1e-9
# a safety stop far above what these problems need (Bland's rule terminates)
_MAX_PIVOTS = 50_000
# LPs of more rows than this go to scipy's HiGHS: the dense tableau's rounding builds up over their
# thousands of pivots (the 573-row all-reduce weighting of a 32x32x32 torus came out infeasible) and
# its time grows as rows^2 x pivots, while HiGHS solves them in milliseconds after its import
DENSE_ROWS = 400
# a solution is kept when it meets every constraint within this (relative to the right-hand sides)
_FEASIBLE = 1e-6


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
    m, k = len(b_ub), len(b_eq)
    if np.any(b_ub < 0) or np.any(b_eq < 0):
        raise ValueError("right-hand sides must be non-negative")
    if m + k > DENSE_ROWS:
        return _highs(cost, a_ub, b_ub, a_eq, b_eq)
    x = _dense(cost, a_ub, b_ub, a_eq, b_eq)
    if not feasible(x, a_ub, b_ub, a_eq, b_eq):  # rounding took the tableau off the feasible set
        return _highs(cost, a_ub, b_ub, a_eq, b_eq)
    return x


def feasible(x: np.ndarray, a_ub, b_ub, a_eq, b_eq) -> bool:
    """Whether ``x`` meets ``a_ub @ x <= b_ub`` and ``a_eq @ x == b_eq`` within :data:`_FEASIBLE`."""
    tol = _FEASIBLE * max(1.0, float(np.abs(np.r_[b_ub, b_eq]).max(initial=0.0)))
    over = (a_ub @ x - b_ub).max(initial=0.0)
    off = np.abs(a_eq @ x - b_eq).max(initial=0.0)
    return bool(over <= tol and off <= tol)


def _highs(cost, a_ub, b_ub, a_eq, b_eq) -> np.ndarray:
    """The LP solved by scipy's HiGHS (imported here only: a large LP's own time dwarfs it)."""
    from scipy.optimize import linprog

    found = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, method="highs")
    if found.status != 0:
        raise UsageError(f"a schedule LP failed: {found.message} (a bug: please report it)")
    return np.clip(found.x, 0.0, None)


def _dense(cost, a_ub, b_ub, a_eq, b_eq) -> np.ndarray:
    """The dense tableau simplex (Bland's rule, big-M artificials): an optimal vertex."""
    n, m, k = len(cost), len(b_ub), len(b_eq)
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
        # only rows with a nonzero in the entering column and columns with a nonzero in the leaving
        # row change: the same subtractions as the whole outer product's, on the entries they touch
        factor = table[:, entering].copy()
        factor[leaving] = 0.0
        rows, cols = np.flatnonzero(factor), np.flatnonzero(table[leaving])
        table[np.ix_(rows, cols)] -= np.outer(factor[rows], table[leaving, cols])
        table[:, -1] = np.maximum(table[:, -1], 0.0)  # rounding must not make a basic value negative
        basis[leaving] = entering
    else:
        raise UsageError("a schedule LP did not converge (a bug: please report it)")
    solution = np.zeros(n + m + k)
    solution[basis] = table[:, -1]
    if solution[n + m :].max(initial=0.0) > 1e-9 * max(1.0, float(b_eq.max(initial=0.0))):
        raise UsageError("a schedule LP is infeasible (a bug: please report it)")
    return np.clip(solution[:n], 0.0, None)
