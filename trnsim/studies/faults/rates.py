"""Failure rates: each part's class fails at a mean time to failure, and stays down a repair time.

Each part's failure rate is its class's (:data:`RATES`, mean time to failure in hours, each a sourced
figure or a named assumption), and a failed part stays down for ``mttr_h`` hours (an assumption,
:data:`MTTR_H`). Failures per year, the expected chips out of service and the capacity-weighted
availability follow.
"""

from dataclasses import dataclass

import numpy as np

from trnsim.studies.faults.sweep import FaultReport

HOURS_PER_YEAR = 8766.0
# mean time to failure (hours) per part class, with where the figure comes from
RATES: dict[str, tuple[float, str]] = {
    "chip": (
        83_000.0,
        "a peer's measurement, as an assumption for Trainium: Meta's Llama 3 405B run (Dubey et al. 2024) "
        "saw 256 GPU-related interruptions (faulty GPU 148, HBM3 72, SRAM 19, GPU system processor 17) in "
        "54 days on 16,384 H100s, one per 83,000 GPU-hours",
    ),
    "switch": (2_000_000.0, "assumption: no published figure for a Scorpio X or P switch chip"),
    "switch tray": (
        1_000_000.0,
        "assumption: a switch tray's board, power and fans, apart from its switches",
    ),
    "copper link": (1e8, "docs/sources.md#link-mttf: copper link MTTF about 100 M hours"),
    "optical link": (
        5e6,
        "docs/sources.md#link-mttf: 1-10 M hours for optics; the middle of the range is an assumption",
    ),
}
MTTR_H = 24.0  # assumption: hours from a failure to the part back in service


def mttf_hours_from_fit(fit: float) -> float:
    """The mean time to failure, in hours, of a part failing ``fit`` times per 10^9 hours (FIT).

    Examples
    --------
    >>> mttf_hours_from_fit(1000)
    1000000.0
    """
    return 1e9 / fit


def default_rates() -> dict[str, float]:
    """The mean time to failure (hours) of each rate class, from :data:`RATES`."""
    return {name: value for name, (value, _) in RATES.items()}


@dataclass
class Reliability:
    """Failure rates summed over a system's parts."""

    failures_per_year: float
    chips_out: float  # expected ranks out of service at a random moment (chips x ranks per chip)
    availability: float  # capacity-weighted: 1 - chips_out / chips
    by_class: list[dict]
    p_degraded: float  # probability that some part is down at a random moment
    p_down: float  # probability that the domain is out of service (a failure lost all its chips)


def unavailability(mttf_h: float, mttr_h: float) -> float:
    """The share of the time a part is down: MTTR / (MTTF + MTTR) (alternating failure and repair)."""
    return mttr_h / (mttf_h + mttr_h)


def reliability(report: FaultReport, rates: dict[str, float], mttr_h: float) -> Reliability:
    """Expected failures, chips out of service and availability from per-class rates.

    Parts fail independently, each down a share ``MTTR / (MTTF + MTTR)`` of the time. A chip is out
    while any failure that loses it is active; the parts of a class are taken to cover the chips
    evenly (each chip is lost by ``count x chips lost / chips`` of them, exact on the catalog's
    symmetric systems), so the chips out never exceed the chips.

    Parameters
    ----------
    report : FaultReport
        The single-failure sweep (its chips lost per failure).
    rates : dict of str to float
        Mean time to failure (hours) per rate class.
    mttr_h : float
        Hours a failed part stays down.
    """
    rows, total_rate, log_up, log_healthy, log_domain = [], 0.0, 0.0, 0.0, 0.0
    n = report.ranks
    for result in report.classes:
        rate_class = result.outcomes[0].component.rate
        if rate_class is None:  # not a part that fails by itself (a plane, lanes)
            continue
        mttf = rates[rate_class]
        u = unavailability(mttf, mttr_h)
        log_keep = np.log1p(-u) if u < 1 else -np.inf
        per_year = result.count * HOURS_PER_YEAR / mttf
        covering = sum(len(o.lost) * o.weight for o in result.outcomes) / n  # failures losing a given chip
        chip_down = 1 - np.exp(covering * log_keep) if covering else 0.0
        log_up += covering * log_keep
        log_healthy += result.count * log_keep
        log_domain += sum(o.weight for o in result.outcomes if len(o.lost) >= n - 1) * log_keep
        total_rate += per_year
        rows.append(
            {
                "kind": result.kind,
                "rate_class": rate_class,
                "parts": result.count,
                "mttf_h": mttf,
                "failures_per_year": per_year,
                "chips_out": n * chip_down,  # this class alone
            }
        )
    chips_out = n * (1 - float(np.exp(log_up)))
    return Reliability(
        total_rate,
        chips_out,
        1 - chips_out / n,
        rows,
        1 - float(np.exp(log_healthy)),
        1 - float(np.exp(log_domain)),
    )
