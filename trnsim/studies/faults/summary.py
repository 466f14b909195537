"""Statistics over failures: per class of parts and per Monte Carlo draw, the busbw lost and the
chips lost, as rows of one shape for tables and files."""

import numpy as np

from trnsim.studies.faults.sweep import FaultReport, Outcome


def loss_summary(report: FaultReport, key: tuple[str, int]) -> list[dict]:
    """Per class: worst, weighted median and mean busbw loss at one (op, size), chips lost.

    The median is weighted by how many parts each evaluation stands for: the loss at which the
    cumulative weight first reaches half the class.
    """
    rows = []
    healthy = report.healthy[key]
    for result in report.classes:
        losses = result.losses(healthy, key)
        ordered = sorted((loss, weight) for loss, weight, _ in losses)
        total = sum(weight for _, weight in ordered)
        cumulative = np.cumsum([weight for _, weight in ordered])
        median = ordered[int(np.searchsorted(cumulative, total / 2))][0]
        worst = max(losses, key=lambda item: item[0])
        rows.append(
            {
                "kind": result.kind,
                "parts": result.count,
                "distinct": len(result.outcomes),
                "chips_lost_max": result.lost_max,
                "chips_lost_mean": result.lost_mean,
                "busbw_before_gbps": healthy,
                "worst_loss": worst[0],
                "median_loss": median,
                "mean_loss": sum(loss * weight for loss, weight in ordered) / total,
                "worst_part": worst[2].component.spec,
                "note": worst[2].note,
            }
        )
    return rows


def class_rows(report: FaultReport, keys: list[tuple[str, int]]) -> list[dict]:
    """:func:`loss_summary` at every (op, bytes) of ``keys``, each row with its ``op`` and ``bytes``."""
    return [{"op": key[0], "bytes": key[1], **row} for key in keys for row in loss_summary(report, key)]


def draw_summary(report: FaultReport, draws: list[Outcome], keys: list[tuple[str, int]]) -> list[dict]:
    """Monte Carlo draws (:func:`trnsim.studies.faults.draws.random_failures`) summed up per (op, bytes).

    Per key: the mean, median (the upper one of an even count) and worst busbw loss against the
    sweep's healthy busbw, the mean chips lost, the share of draws that lost chips, and the worst
    draw's parts.
    """
    rows = []
    for key in keys:
        before = report.healthy[key]
        losses = sorted(1 - d.busbw_gbps[key] / before if before else 0.0 for d in draws)
        worst = max(draws, key=lambda d: 1 - d.busbw_gbps[key] / before if before else 0.0)
        rows.append(
            {
                "op": key[0],
                "bytes": key[1],
                "samples": len(draws),
                "mean_loss": sum(losses) / len(losses),
                "median_loss": losses[len(losses) // 2],
                "worst_loss": losses[-1],
                "chips_lost_mean": sum(len(d.lost) for d in draws) / len(draws),
                "p_chips_lost": sum(1 for d in draws if d.lost) / len(draws),
                "worst_draw": worst.note,
            }
        )
    return rows


def worst_losing_no_chip(report: FaultReport, rows: list[dict], key: tuple[str, int]) -> dict | None:
    """Of :func:`class_rows`, the class at ``key`` whose worst part loses the most busbw among the
    parts that fail by themselves (a failure-rate class) and lose no chip; None when there is none."""
    physical = {c.kind for c in report.classes if c.outcomes[0].component.rate is not None}
    return max(
        (
            r
            for r in rows
            if (r["op"], r["bytes"]) == key and r["chips_lost_max"] == 0 and r["kind"] in physical
        ),
        key=lambda r: r["worst_loss"],
        default=None,
    )
