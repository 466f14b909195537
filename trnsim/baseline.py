"""Baselines: save results as JSON and check a later run against them.

A baseline is ``{"schema": "trnsim/1", "kind": "baseline", ...}`` with the trnsim version, the
topology files' content hashes and one row per (variant, op, size). A check compares the chosen
metric row by row: busbw and efficiency regress when they fall, time when it rises, by more than the
threshold.
"""

import datetime
import json
from dataclasses import dataclass
from pathlib import Path

from trnsim import __version__
from trnsim.errors import ConfigError

SCHEMA = "trnsim/1"
METRICS = {"busbw": "busbw_gbps", "time": "time_us", "efficiency": "efficiency"}


def save(path: Path, rows: list[dict], variants: list[dict], context: dict) -> None:
    """Write a baseline file.

    Parameters
    ----------
    rows : list of dict
        Each with ``variant``, ``op``, ``bytes`` and the metric fields.
    variants : list of dict
        Each with ``label``, ``sku`` or ``file``, ``overrides`` and ``sha256``.
    context : dict
        What produced it (command, metric, group, algorithm...).
    """
    document = {
        "schema": SCHEMA,
        "kind": "baseline",
        "trnsim_version": __version__,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        **context,
        "variants": variants,
        "rows": rows,
    }
    Path(path).write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")


def load(path: Path) -> dict:
    """Read a baseline, refusing anything that is not a trnsim/1 baseline."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read baseline: {exc.strerror}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: not a trnsim baseline: invalid JSON at line {exc.lineno}: {exc.msg}"
        ) from None
    if (
        not isinstance(document, dict)
        or document.get("schema") != SCHEMA
        or document.get("kind") != "baseline"
    ):
        found = document.get("schema") if isinstance(document, dict) else type(document).__name__
        raise ConfigError(
            f"{path}: not a {SCHEMA} baseline (schema {found!r}); save one with --save-baseline"
        )
    if not isinstance(document.get("rows"), list) or not all(
        isinstance(r, dict) and {"variant", "op", "bytes"} <= set(r) for r in document["rows"]
    ):
        raise ConfigError(f"{path}: rows: expected a list of objects with variant, op and bytes")
    return document


@dataclass
class Check:
    """The outcome of comparing one row against its baseline."""

    variant: str
    op: str
    bytes: int
    baseline: float
    current: float
    change: float  # relative change of the metric, (current - baseline) / baseline
    regressed: bool


def check(
    baseline: dict, rows: list[dict], metric: str, max_regression: float
) -> tuple[list[Check], list[dict]]:
    """Compare ``rows`` with ``baseline`` on ``metric``.

    Returns
    -------
    (checks, missing)
        One :class:`Check` per row found in both; the baseline rows this run did not produce.
    """
    key = METRICS[metric]
    current = {(r["variant"], r["op"], r["bytes"]): r for r in rows}
    checks, missing = [], []
    for index, old in enumerate(baseline["rows"]):
        new = current.get((old["variant"], old["op"], old["bytes"]))
        if new is None or key not in old:
            missing.append(old)
            continue
        try:
            before, after = float(old[key]), float(new[key])
        except (TypeError, ValueError):
            raise ConfigError(f"baseline rows[{index}].{key}: expected a number, got {old[key]!r}") from None
        change = (after - before) / before if before else 0.0
        # busbw and efficiency regress when they fall, time when it rises
        worse = change > max_regression if metric == "time" else change < -max_regression
        checks.append(Check(old["variant"], old["op"], old["bytes"], before, after, change, worse))
    return checks, missing
