"""Baselines: save results as JSON and check a later run against them.

A baseline is ``{"schema": "trnsim/1", "kind": "baseline", ...}`` with the trnsim version, the
topology files' content hashes and one row per result. A row is identified by everything that
defines it: the variant (its label includes its what-if edits), the op, the group, the algorithm
asked for, the dtype, the alpha override and the requested size. A check compares the chosen metric
row by row: busbw and efficiency regress when they fall, time when it rises, by more than the
threshold; rows present on one side only are reported.
"""

import datetime
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

import msgspec

from trnsim import __version__
from trnsim.errors import ConfigError

SCHEMA = "trnsim/1"
METRICS = {"busbw": "busbw_gbps", "time": "time_us", "efficiency": "efficiency"}
# the fields that identify a row: two runs are compared only where all of them agree
IDENTITY = (
    "variant",
    "op",
    "group",
    "algo",
    "dtype",
    "alpha_us",
    "max_chunks",
    "min_chunk_bytes",
    "requested_bytes",
)

# a metric below 1e-9 (a femtosecond, a byte per second) is no measurement: refusing it keeps every
# relative change finite
_Positive = Annotated[float, msgspec.Meta(ge=1e-9, le=1e15)]


class _Row(msgspec.Struct, kw_only=True):
    variant: str
    op: str
    group: str
    algo: str
    dtype: str
    alpha_us: Annotated[float, msgspec.Meta(ge=0, le=1e300)] | None
    # pipelining overrides (absent from baselines written before they existed)
    max_chunks: Annotated[int, msgspec.Meta(ge=1)] | None = None
    min_chunk_bytes: Annotated[int, msgspec.Meta(ge=1)] | None = None
    requested_bytes: Annotated[int, msgspec.Meta(gt=0)]
    time_us: _Positive
    busbw_gbps: _Positive
    efficiency: _Positive


class _Variant(msgspec.Struct, kw_only=True):
    label: str
    sha256: str | None = None
    runtime: str = "ideal"  # what the rows model (absent from the ideal's and older baselines)


class _Baseline(msgspec.Struct, kw_only=True):
    schema: Literal["trnsim/1"]
    kind: Literal["baseline"]
    variants: list[_Variant] = []
    overrides: list[str] = []
    rows: list[_Row]


def row_key(row: dict) -> tuple:
    """The identity of a result row (see :data:`IDENTITY`)."""
    return tuple(row.get(field) for field in IDENTITY)


def describe_key(key: tuple) -> str:
    """A row's identity as one readable phrase, e.g. ``nl16 allreduce group all auto float 1048576 B``."""
    fields = dict(zip(IDENTITY, key, strict=True))
    alpha = "" if fields["alpha_us"] is None else f" alpha {fields['alpha_us']:g} us"
    if fields["max_chunks"] is not None:
        alpha += f" max-chunks {fields['max_chunks']}"
    if fields["min_chunk_bytes"] is not None:
        alpha += f" min-chunk {fields['min_chunk_bytes']} B"
    return (
        f"{fields['variant']} {fields['op']} group {fields['group']} algo {fields['algo']} "
        f"{fields['dtype']}{alpha} {fields['requested_bytes']} B"
    )


def comparison_rows(payload_rows: list[dict], identity: dict) -> list[dict]:
    """A comparison's rows as a baseline keeps them: for each size, each variant's values (its
    ``values`` by label, :func:`trnsim.outputs.compare.comparison`) under the run's ``identity``
    (``op``, ``group``, ``algo``, ``dtype``, ``alpha_us``, ``max_chunks``, ``min_chunk_bytes``)."""
    return [
        {"variant": label, **identity, "requested_bytes": entry["bytes"], **values}
        for entry in payload_rows
        for label, values in entry["values"].items()
    ]


def save(path: Path, rows: list[dict], variants: list[dict], context: dict) -> None:
    """Write a baseline file.

    Parameters
    ----------
    rows : list of dict
        Each with the :data:`IDENTITY` fields and the metric fields.
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
    from trnsim.atomic import write_atomic

    write_atomic(path, json.dumps(document, indent=1, allow_nan=False) + "\n")


def load(path: Path) -> dict:
    """Read a baseline, refusing anything that is not a well-formed trnsim/1 baseline.

    Raises
    ------
    ConfigError
        One line naming the file, the key path and what was expected: invalid JSON (NaN and
        infinity are not JSON), a foreign schema, a missing field, or a metric that is not a
        positive finite number.
    """
    from trnsim.yamlio import read_text

    text = read_text(Path(path), "baseline file")
    try:
        document = msgspec.json.decode(text)
    except msgspec.DecodeError as exc:
        raise ConfigError(f"{path}: not a trnsim baseline: invalid JSON ({exc})") from None
    except RecursionError:
        raise ConfigError(f"{path}: not a trnsim baseline: JSON nested too deeply") from None
    if (
        not isinstance(document, dict)
        or document.get("schema") != SCHEMA
        or document.get("kind") != "baseline"
    ):
        if isinstance(document, dict) and document.get("schema") == SCHEMA:
            found = f"kind {document.get('kind')!r}"
        else:
            found = f"schema {document.get('schema') if isinstance(document, dict) else type(document).__name__!r}"
        raise ConfigError(
            f"{path}: not a {SCHEMA} baseline ({found}); save one with {{save_baseline}}",
            names="save_baseline",
        )
    try:
        msgspec.convert(document, _Baseline)
    except msgspec.ValidationError as exc:
        message, _, keypath = str(exc).partition(" - at `$")
        keypath = keypath.rstrip("`").lstrip(".") or "(top level)"
        message = message.replace("Object missing required field", "missing required key")
        raise ConfigError(
            f"{path}: {keypath}: {message.replace('Expected', 'expected')} "
            "(re-save the baseline with {save_baseline})",
            names="save_baseline",
        ) from None
    seen: dict[tuple, int] = {}
    for index, row in enumerate(document["rows"]):
        first = seen.setdefault(row_key(row), index)
        if first != index:
            raise ConfigError(
                f"{path}: rows[{index}]: the same row as rows[{first}] ({describe_key(row_key(row))}); "
                "each row may appear once"
            )
    return document


def runtime_mismatch(baseline: dict, variants: list[dict]) -> str | None:
    """Why a run cannot be checked against a loaded ``baseline``: a variant both name whose numbers
    model different runtimes (a runtime's busbw against the ideal's is no regression); None when
    every shared variant agrees. A variant without ``runtime`` is the ideal's."""
    saved = {v.get("label"): v.get("runtime", "ideal") for v in baseline.get("variants", [])}
    for variant in variants:
        before, now = saved.get(variant["label"]), variant.get("runtime", "ideal")
        if before is not None and before != now:
            return (
                f"variant {variant['label']} was saved under runtime {before} and this run models {now}: "
                f"run with {{runtime}} {before}, or save a new baseline with {{save_baseline}}"
            )
    return None


@dataclass
class Check:
    """The outcome of comparing one row against its baseline."""

    key: tuple
    baseline: float
    current: float
    change: float  # relative change of the metric, (current - baseline) / baseline
    regressed: bool

    @property
    def label(self) -> str:
        return describe_key(self.key)


@dataclass
class Comparison:
    """A whole check: the matched rows and the rows found on one side only."""

    checks: list[Check]
    only_in_baseline: list[tuple]
    only_in_run: list[tuple]

    @property
    def regressions(self) -> list[Check]:
        return [c for c in self.checks if c.regressed]


def check(baseline: dict, rows: list[dict], metric: str, max_regression: float) -> Comparison:
    """Compare ``rows`` with a loaded ``baseline`` on ``metric``, matching rows by identity."""
    key = METRICS[metric]
    current = {row_key(r): r for r in rows}
    saved = {row_key(r): r for r in baseline["rows"]}
    checks = []
    for identity, old in saved.items():
        new = current.get(identity)
        if new is None:
            continue
        before, after = float(old[key]), float(new[key])
        change = (after - before) / before
        # busbw and efficiency regress when they fall, time when it rises
        worse = change > max_regression if metric == "time" else change < -max_regression
        checks.append(Check(identity, before, after, change, worse))
    return Comparison(
        checks,
        [k for k in saved if k not in current],
        [k for k in current if k not in saved],
    )
