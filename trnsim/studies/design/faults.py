"""A design point's busbw under the fault model: its expected value over the single failures.

Every part of the system fails independently and, at a random moment, is down a share
``u = MTTR / (MTTF + MTTR)`` of the time (:mod:`trnsim.studies.faults.rates`). The states with at
most one part down have the steady-state probabilities

* healthy: ``p0 = prod over parts (1 - u_part)``;
* part ``i`` alone down: ``p_i = p0 x u_i / (1 - u_i)``;

and in state ``i`` the op runs on the survivors, as ``trnsim faults`` runs it (a failure that takes
chips out of service runs on the chips left; one that leaves nothing to run moves 0 GB/s). The
expected busbw is the mean over these states, weighted by their probabilities and renormalised to
them: ``(p0 b0 + sum p_i b_i) / (p0 + sum p_i)``, the expectation given that at most one part is
down. The states left out (two parts or more down at once) hold ``p_multiple = 1 - p0 - sum p_i``
of the time, reported beside it. Parts that look alike are evaluated once and weighted by their
count (:func:`trnsim.studies.faults.single_failures`).
"""

from __future__ import annotations

import math

# an assumption: past this share of the time with two parts or more down, the expectation (which
# averages the states with at most one down) no longer stands for the system's busbw, and a run says so
MULTIPLE_FAILURES_NOTE = 0.01


def expected_busbw(
    report, key: tuple[str, int], rates: dict[str, float], mttr_h: float
) -> tuple[float, float]:
    """The expected busbw at ``key`` = (op, bytes) of a single-failure ``report``, and ``p_multiple``.

    Parameters
    ----------
    report : trnsim.studies.faults.FaultReport
        The system's single failures.
    key : tuple of (str, int)
        The op and size whose busbw is averaged.
    rates : dict of str to float
        Mean time to failure (hours) per rate class.
    mttr_h : float
        Hours a failed part stays down.
    """
    from trnsim.studies.faults.rates import unavailability

    log_p0, states = 0.0, []  # states: (odds u/(1-u) x parts it stands for, busbw in that state)
    for result in report.classes:
        rate_class = result.outcomes[0].component.rate
        if rate_class is None:  # not a part that fails by itself (a plane, lanes)
            continue
        u = unavailability(rates[rate_class], mttr_h)
        if u >= 1:
            return 0.0, 1.0
        log_p0 += result.count * math.log1p(-u)
        states += [(o.weight * u / (1 - u), o.busbw_gbps.get(key, 0.0)) for o in result.outcomes]
    p0 = math.exp(log_p0)
    mass = p0 * (1 + sum(odds for odds, _ in states))
    total = p0 * (report.healthy[key] + sum(odds * busbw for odds, busbw in states))
    return (total / mass if mass > 0 else 0.0), max(1.0 - mass, 0.0)


def busbw_under_faults(
    task, op: str, size: int, runtime: str, rates: dict[str, float], mttr_h: float
) -> dict:
    """The expected busbw of ``op`` at ``size`` on the point of ``task`` (its system built), priced
    by ``runtime``, with the share of the time the expectation leaves out."""
    from trnsim.studies.faults.study import loader, study_runtime_of
    from trnsim.studies.faults.sweep import single_failures
    from trnsim.studies.sweep import _topology

    topology = _topology(task.variant)
    chosen = study_runtime_of(topology, runtime)
    report = single_failures(loader(task.variant), topology, [op], [size], runtime=chosen)
    key = next(k for k in report.healthy if k[0] == op)
    value, multiple = expected_busbw(report, key, rates, mttr_h)
    return {"expected_busbw_gbps": value, "p_multiple_failures": multiple}


def often_multiple(rows: list[dict]) -> list[dict]:
    """The feasible points whose ``p_multiple_failures`` passes :data:`MULTIPLE_FAILURES_NOTE`.

    Examples
    --------
    >>> rows = [{"point": 0, "p_multiple_failures": 0.002}, {"point": 1, "p_multiple_failures": 0.4},
    ...         {"point": 2, "p_multiple_failures": None}]
    >>> [row["point"] for row in often_multiple(rows)]
    [1]
    """
    return [row for row in rows if (row.get("p_multiple_failures") or 0.0) > MULTIPLE_FAILURES_NOTE]
