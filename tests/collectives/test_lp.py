"""The small LP solver against scipy's HiGHS on problems shaped like the schedule LPs."""

import numpy as np
import pytest
from scipy.optimize import linprog

from trnsim.collectives.lp import minimize


def _problem(seed: int):
    """min sum(mult * t) s.t. loads[p] @ w <= t_p, sum(w) = 1: a pipeline's rounds over stream mixes."""
    rng = np.random.default_rng(seed)
    streams, patterns, classes = rng.integers(2, 30), rng.integers(1, 12), rng.integers(1, 5)
    loads = rng.uniform(0, 3, size=(patterns, classes, streams)) * (
        rng.random((patterns, classes, streams)) < 0.7
    )
    loads[:, :, loads.sum(axis=(0, 1)) == 0] = 1.0
    mult = rng.integers(1, 60, size=patterns).astype(float)
    n = streams + patterns
    cost = np.r_[np.zeros(streams), mult]
    a_ub = np.zeros((patterns * classes, n))
    for p in range(patterns):
        for c in range(classes):
            a_ub[p * classes + c, :streams] = loads[p, c]
            a_ub[p * classes + c, streams + p] = -1.0
    b_ub = np.zeros(patterns * classes)
    a_eq = np.r_[np.ones(streams), np.zeros(patterns)][None, :]
    return cost, a_ub, b_ub, a_eq, np.ones(1)


@pytest.mark.parametrize("seed", range(60))
def test_minimize_matches_highs(seed):
    cost, a_ub, b_ub, a_eq, b_eq = _problem(seed)
    x = minimize(cost, a_ub, b_ub, a_eq, b_eq)
    reference = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, method="highs")
    assert reference.status == 0
    assert np.all(x >= 0) and np.allclose(a_eq @ x, b_eq)
    assert np.all(a_ub @ x <= b_ub + 1e-9)
    assert cost @ x == pytest.approx(reference.fun, rel=1e-7, abs=1e-9)


def test_minimize_solves_a_textbook_lp():
    # max 3x + 5y s.t. x <= 4, 2y <= 12, 3x + 2y <= 18: x = 2, y = 6 (Hillier and Lieberman)
    x = minimize(
        np.array([-3.0, -5.0]),
        np.array([[1, 0], [0, 2], [3, 2]]),
        np.array([4, 12, 18]),
        np.zeros((0, 2)),
        np.zeros(0),
    )
    assert np.allclose(x, [2, 6])


def _weighting_lp():
    """The pipeline-weighting LP of three rings of 32 under all-reduce (573 rows), as multidim asks it."""
    from trnsim.collectives import lp
    from trnsim.collectives.dimensions import Dimension
    from trnsim.collectives.multidim import choose_streams

    asked, solve = [], lp.minimize

    def record(*args):
        asked.append(args)
        return solve(*args)

    dims = [Dimension(axis, 32, np.zeros(1, dtype=np.int64), (axis,), {axis: "ring"}) for axis in "xyz"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lp, "minimize", record)
        choose_streams(dims, dict.fromkeys("xyz", 64.0), "allreduce")
    return asked[0]


def test_a_large_lp_meets_its_constraints_and_highs_optimum(monkeypatch):
    from trnsim.collectives import lp

    problem = _weighting_lp()
    assert problem[1].shape[0] > lp.DENSE_ROWS
    reference = linprog(problem[0], A_ub=problem[1], b_ub=problem[2], A_eq=problem[3], b_eq=problem[4])
    x = minimize(*problem)
    assert lp.feasible(x, *problem[1:]) and problem[0] @ x == pytest.approx(reference.fun, rel=1e-7)
    # the dense tableau alone drifts off the constraints on it; its answer is checked and replaced
    monkeypatch.setattr(lp, "DENSE_ROWS", 10_000)
    assert not lp.feasible(lp._dense(*problem), *problem[1:])
    x = minimize(*problem)
    assert lp.feasible(x, *problem[1:]) and problem[0] @ x == pytest.approx(reference.fun, rel=1e-7)


def test_a_dense_answer_off_its_constraints_is_replaced():
    """Half the 16x16x16 torus (a chain of 8 and two rings of 16: 273 rows, within the dense solver's
    reach): its tableau answer broke a round's constraint by 5% (its objective below the optimum), and
    multidim used it; now it is checked, found off, and solved again."""
    from trnsim.collectives import lp, multidim
    from trnsim.collectives.schedule import Context
    from trnsim.topology import load_topology
    from trnsim.topology.groups import select_group

    topo = load_topology(None, "examples/torus-16x16x16.yaml")
    asked, solve = [], lp.minimize

    def record(*args):
        asked.append(args)
        return solve(*args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lp, "minimize", record)
        multidim.plan(Context(topo, select_group(topo, "0-2047")), "allreduce")
    (problem,) = asked
    assert problem[1].shape[0] <= lp.DENSE_ROWS
    reference = linprog(problem[0], A_ub=problem[1], b_ub=problem[2], A_eq=problem[3], b_eq=problem[4])
    dense = lp._dense(*problem)
    assert not lp.feasible(dense, *problem[1:]) and problem[0] @ dense < reference.fun
    x = minimize(*problem)
    assert lp.feasible(x, *problem[1:]) and problem[0] @ x == pytest.approx(reference.fun, rel=1e-7)
