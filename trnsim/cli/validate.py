"""``trnsim validate``: every bundled published measurement through the model, predicted against
measured, fitted and predicted kept apart; exits 1 when a predicted row leaves its tolerance."""

from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.options import FormatOption
from trnsim.outputs.render import Format, emit

RunsOption = Annotated[
    Path | None,
    typer.Option(
        "--runs",
        help="A folder of published runs (*.yaml, see examples/measurements/runs/FORMAT.md); "
        "default: the runs bundled with trnsim.",
        file_okay=False,
    ),
]
SystemOption = Annotated[
    str | None, typer.Option("--system", help="Only the runs on this catalog system (its file name).")
]
SummaryOption = Annotated[
    bool,
    typer.Option(
        "--summary", help="Print the runs and the per-system summary, not every size (JSON keeps every row)."
    ),
]
RoleOption = Annotated[
    str,
    typer.Option(
        "--role",
        help="Which runs: all, predicted (nothing in the catalog was set from them) or fitted.",
    ),
]


def validate(
    runs: RunsOption = None,
    system: SystemOption = None,
    role: RoleOption = "all",
    summary: SummaryOption = False,
    fmt: FormatOption = Format.table,
) -> None:
    """Predict every published measurement with the catalog's defaults and compare.

    Each run (one system, op, rank count and set of conditions, with its public source) is priced
    by its system's default runtime, as the catalog file sets it up, with what the run forced (an
    NCCL algorithm, a protocol). Rows show measured and predicted time and the error; predicted
    rows must stay within 15% from 256 MiB and 30% below (or the tolerance a run records, with its
    reason), fitted rows are shown and not gated. Exit code 1 when a predicted row is outside.

    Examples:

        trnsim validate --summary
        trnsim validate --system hgx-h100 --role predicted
    """
    from trnsim.errors import ThresholdError, UsageError
    from trnsim.studies.validation import bundled_runs_dir, load_runs, predict, rows_of, summarise

    if role not in ("all", "predicted", "fitted"):
        raise UsageError(f"--role: expected all, predicted or fitted, got {role!r}")
    chosen = [
        run
        for run in load_runs(runs if runs is not None else bundled_runs_dir())
        if (system is None or run.system == system) and role in ("all", run.role)
    ]
    if not chosen:
        raise UsageError("--system/--role: no published run matches")
    predictions = [predict(run) for run in chosen]
    rows = [row for p in predictions for row in rows_of(p)]
    from trnsim.outputs.validation import validation_tables

    payload, tables = validation_tables(predictions, rows, summarise(rows), _runtime_note(predictions))
    if summary:
        tables = [table for table in tables if not table.title.startswith("Predicted against measured")]
    emit(payload, tables, fmt)
    failed = [row for row in rows if not row.passed]
    if failed:
        worst = max(failed, key=lambda row: abs(row.error))
        raise ThresholdError(
            f"{len(failed)} predicted row(s) outside their tolerance; the worst: {worst.run_id} at "
            f"{worst.bytes} B, {worst.error * 100:+.1f}% (gate ±{worst.tolerance * 100:.0f}%)"
        )


def _runtime_note(predictions) -> str:
    """Which runtime priced which systems, in one line."""
    by_runtime: dict[str, set[str]] = {}
    for p in predictions:
        if p.runtime:
            by_runtime.setdefault(p.runtime, set()).add(p.run.system)
    parts = [f"{name}: {', '.join(sorted(systems))}" for name, systems in sorted(by_runtime.items())]
    return "runtime (each system's file default) - " + "; ".join(parts)
