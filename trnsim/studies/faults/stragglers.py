"""Stragglers: a job that spans many domains runs at the pace of its slowest.

From one domain's single-failure sweep and its parts' failure rates, the chance that some domain
needs a spare and the expected slowdown of the job (:func:`straggler`).
"""

import numpy as np

from trnsim.studies.faults.rates import unavailability
from trnsim.studies.faults.sweep import FaultReport


def straggler(
    report: FaultReport, rates: dict[str, float], mttr_h: float, key: tuple[str, int], domains: int
) -> dict:
    """A job over ``domains`` domains runs at its slowest domain's pace: the expected slowdown.

    Each domain is, independently and at a random moment, healthy; or has exactly one part down
    (a failure that loses chips leaves the job without its shape: it needs a spare domain; one that
    loses none slows the domain's collective by ``busbw before / busbw after``); or has several
    parts down at once, counted with those that need a spare (the cautious side). Parts fail
    independently, each down ``MTTR / (MTTF + MTTR)`` of the time.

    Parameters
    ----------
    report : FaultReport
        One domain's single-failure sweep.
    rates : dict of str to float
        Mean time to failure (hours) per rate class.
    mttr_h : float
        Hours a failed part stays down.
    key : tuple of (str, int)
        The (op, bytes) whose busbw sets the pace.
    domains : int
        Domains the job spans.

    Returns
    -------
    dict
        ``p_all_healthy``, ``p_some_down`` and ``expected_slowdown`` (given no domain needs a spare).
    """
    healthy = report.healthy[key]
    singles = []  # (probability that this alone is down, slowdown or None when it needs a spare)
    log_none = 0.0
    for result in report.classes:
        rate_class = result.outcomes[0].component.rate
        if rate_class is None:
            continue
        u = unavailability(rates[rate_class], mttr_h)
        log_none += result.count * np.log1p(-u)
        for outcome in result.outcomes:
            after = outcome.busbw_gbps[key]
            slow = None if outcome.lost or after <= 0 else healthy / after
            singles.append((outcome.weight, u / (1 - u), slow))
    p_none = float(np.exp(log_none))
    states = [(weight * odds * p_none, slow) for weight, odds, slow in singles]
    p_spare = max(1.0 - p_none - sum(p for p, slow in states if slow is not None), 0.0)
    p_up = 1.0 - p_spare
    # one domain's slowdown, given it needs no spare; the job's is the maximum over the domains
    mass = {1.0: p_none}
    for p, slow in states:
        if slow is not None:
            mass[slow] = mass.get(slow, 0.0) + p
    values = sorted(mass)
    cdf = np.cumsum([mass[v] for v in values]) / p_up if p_up > 0 else np.ones(len(values))
    at_most = np.minimum(cdf, 1.0) ** domains
    expected = float(
        values[0] * at_most[0] + sum(v * (at_most[i] - at_most[i - 1]) for i, v in enumerate(values) if i)
    )
    return {
        "domains": domains,
        "p_all_healthy": p_none**domains,
        "p_some_down": 1 - p_up**domains,
        "expected_slowdown": expected,
        "p_domain_degraded": p_up - p_none,
        "p_domain_down": p_spare,
    }
