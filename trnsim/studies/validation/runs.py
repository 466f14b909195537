"""Published collective runs, one YAML file each, read into :class:`PublishedRun` (see
``examples/measurements/runs/FORMAT.md``): the run's source, the system it maps onto, its conditions,
whether the catalog was fitted to it, and its points as (bytes, measured time in microseconds).

The measured figure may be a time, an algorithm bandwidth or a bus bandwidth, in GB/s (1e9 B/s) or
GiB/s (2^30 B/s) as the source printed it; :meth:`PublishedRun.measured_us` converts each to the time
the tool would have printed, with nccl-tests' and nccom-test's bus bandwidth factors.

>>> run = parse_run({"id": "X1", "title": "t", "source": "s", "tool": "nccl-tests",
...     "system": "hgx-h100", "mapping": "m", "op": "allreduce", "ranks": 8, "conditions": "c",
...     "measured": "busbw", "units": "GB/s", "statistic": "mean", "role": "predicted",
...     "points": [["1G", 467.58]]}, "x1.yaml")
>>> round(run.measured_us()[0][1], 1)  # 1 GiB x 2(8-1)/8 / 467.58 GB/s
4018.7
"""

from pathlib import Path
from typing import Annotated, Literal

import msgspec

from trnsim.errors import ConfigError, UsageError

Positive = Annotated[float, msgspec.Meta(gt=0, le=1e12)]
Text = Annotated[str, msgspec.Meta(max_length=2000)]
UNIT_BYTES = {"GB/s": 1e9, "GiB/s": float(1 << 30)}
MAX_RUNS = 500  # a validation set larger than this is not one a person curated: refuse it


class PublishedRun(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """One published run (one system, op, rank count and set of conditions) and its figures."""

    id: Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,40}$")]
    title: Text
    source: Text
    url: Text = ""
    tool: Literal["nccl-tests", "nccom-test", "jax", "other"]
    system: Annotated[str, msgspec.Meta(max_length=100)]
    mapping: Text
    set: list[Annotated[str, msgspec.Meta(max_length=200)]] = []
    op: Literal["allreduce", "allgather", "reducescatter", "alltoall"]
    dtype: str = "float"
    ranks: Annotated[int, msgspec.Meta(ge=2, le=1 << 20)]
    ranks_per_chip: Annotated[int, msgspec.Meta(ge=1, le=64)] = 1
    nodes: Annotated[int, msgspec.Meta(ge=1, le=1 << 16)] = 1
    conditions: Text
    forced: dict[Literal["algorithm", "protocol"], str] = {}
    measured: Literal["busbw", "algbw", "time"]
    units: Literal["GB/s", "GiB/s", "us"]
    statistic: Literal["mean", "median", "p50", "peak", "best", "single"]
    points: list[tuple[str | int, Positive]]
    role: Literal["predicted", "fitted", "excluded"]
    fitted_to: Text = ""  # fitted: which parameter of which file was set from the run
    excluded_because: Text = ""  # excluded: why the run is shown but not gated (e.g. an older runtime)
    # a recorded tolerance (percent) for a size whose error the default rule does not hold, with why
    tolerance_pct: dict[str, Annotated[float, msgspec.Meta(gt=0, le=1000)]] = {}
    notes: Text = ""
    path: str = ""  # the file it was read from (set by the reader)

    def measured_us(self) -> list[tuple[int, float]]:
        """Each point as (bytes, the time the tool would print in microseconds), sorted by size."""
        from trnsim.collectives.ops import get_op
        from trnsim.units import parse_size

        factor = get_op(self.op).busbw_factor(self.ranks)
        out = []
        for size, value in self.points:
            nbytes = parse_size(size)
            if self.measured == "time":
                out.append((nbytes, float(value)))
                continue
            algbw = value * UNIT_BYTES[self.units] / (factor if self.measured == "busbw" else 1.0)
            out.append((nbytes, nbytes / algbw * 1e6))
        return sorted(out)

    @property
    def chips(self) -> int:
        """The chips the run spans (ranks over ranks per chip)."""
        return self.ranks // self.ranks_per_chip


def parse_run(document, where: str) -> PublishedRun:
    """Convert one run file's document, checking types, units and sizes.

    Raises
    ------
    ConfigError
        One line naming the file, the key path and what was expected.
    """
    from trnsim.units import parse_size

    try:
        run = msgspec.convert(document, PublishedRun, strict=True)
    except msgspec.ValidationError as exc:
        text = str(exc)
        message, _, keypath = text.partition(" - at `$")
        keypath = keypath.rstrip("`").lstrip(".") or "(top level)"
        message = message.replace("Object contains unknown field", "unknown key").replace(
            "Object missing required field", "missing required key"
        )
        raise ConfigError(f"{where}: {keypath}: {message.replace('Expected', 'expected')}") from None
    problems = _problems(run)
    for i, (size, _value) in enumerate(run.points):
        try:
            if parse_size(size) <= 0:
                problems.append((f"points[{i}]", "expected a size above 0 bytes"))
        except UsageError as exc:
            problems.append((f"points[{i}]", str(exc)))
    if problems:
        keypath, message = problems[0]
        raise ConfigError(f"{where}: {keypath}: {message}")
    run.path = where
    return run


def _problems(run: PublishedRun) -> list[tuple[str, str]]:
    """What is inconsistent between a run's keys, as (key path, what was expected)."""
    problems = []
    if (run.measured == "time") != (run.units == "us"):
        problems.append(("units", f"expected us for a measured time, GB/s or GiB/s for {run.measured}"))
    if run.ranks % run.ranks_per_chip:
        problems.append(("ranks_per_chip", f"expected a divisor of ranks ({run.ranks})"))
    if (run.ranks // run.ranks_per_chip) % run.nodes:
        problems.append(("nodes", "expected the chips to divide evenly among the nodes"))
    if run.role == "fitted" and not run.fitted_to.strip():
        problems.append(("fitted_to", "a fitted run names the parameter set from it"))
    if run.role == "excluded" and not run.excluded_because.strip():
        problems.append(("excluded_because", "an excluded run says why it is not gated"))
    if not run.points:
        problems.append(("points", "expected at least one [size, value]"))
    return problems


def load_runs(folder: Path) -> list[PublishedRun]:
    """Every ``*.yaml`` run in ``folder``, sorted by id; ids must be unique.

    Raises
    ------
    ConfigError
        A file that is not a valid run, or two runs with one id.
    UsageError
        ``folder`` is not a folder of runs.
    """
    from trnsim.yamlio import load_yaml

    if not folder.is_dir():
        raise UsageError(f"{folder}: expected a folder of published runs (*.yaml)")
    files = sorted(folder.glob("*.yaml"))
    if not files:
        raise UsageError(f"{folder}: no published runs (*.yaml) in the folder")
    if len(files) > MAX_RUNS:
        raise UsageError(f"{folder}: {len(files)} run files; at most {MAX_RUNS} are read")
    runs, seen = [], {}
    for file in files:
        run = parse_run(load_yaml(file, "run file"), str(file))
        if run.id in seen:
            raise ConfigError(f"{file}: id: {run.id!r} is also the id of {seen[run.id]}")
        seen[run.id] = file
        runs.append(run)
    return sorted(runs, key=lambda r: r.id)


def bundled_runs_dir() -> Path:
    """The published runs shipped with trnsim (``examples/measurements/runs`` in the repository)."""
    from importlib.resources import files

    return Path(str(files("trnsim.measurements")))
