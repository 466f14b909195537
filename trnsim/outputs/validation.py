"""``trnsim validate``'s tables and JSON: every published row predicted against measured, then the
geometric-mean error per system, rank count and role, then the runs the model could not price."""

from trnsim.outputs.render import Column, Table
from trnsim.units import format_size


def _pct(value: float) -> str:
    return f"{value * 100:+.1f}%"


def row_payload(row) -> dict:
    """One row as JSON."""
    return {
        "run": row.run_id,
        "system": row.system,
        "op": row.op,
        "ranks": row.ranks,
        "role": row.role,
        "runtime": row.runtime,
        "bytes": row.bytes,
        "measured_us": row.measured_us,
        "predicted_us": row.predicted_us,
        "error": row.error,
        "tolerance": row.tolerance,
        "passed": row.passed,
        "choice": row.choice,
    }


def validation_tables(predictions, rows, summaries, runtime_note: str) -> tuple[dict, list[Table]]:
    """The JSON payload and the three tables of a validation."""
    runs = {p.run.id: p for p in predictions}
    payload = {
        "rows": [row_payload(row) for row in rows],
        "summary": [vars(s) for s in summaries],
        "runs": [
            {
                "id": p.run.id,
                "title": p.run.title,
                "source": p.run.source,
                "url": p.run.url,
                "system": p.run.system,
                "conditions": p.run.conditions,
                "role": p.run.role,
                "fitted_to": p.run.fitted_to,
                "excluded_because": p.run.excluded_because,
                "runtime": p.runtime,
                "runtime_model": p.model,
                "refused": p.refused,
            }
            for p in predictions
        ],
        "failed": sum(not row.passed for row in rows),
    }
    tables = [_runs_table(predictions, runtime_note), _rows_table(rows), _summary_table(summaries)]
    refused = [p for p in runs.values() if p.refused]
    if refused:
        tables.append(
            Table(
                "Runs the model does not price yet",
                [Column("run", "run", align="left"), Column("why", "why", align="left")],
                [{"run": p.run.id, "why": p.refused} for p in refused],
            )
        )
    return payload, tables


def _runs_table(predictions, runtime_note: str) -> Table:
    """What each run is and which runtime priced it."""
    return Table(
        "Published runs (their sources are in the JSON output, runs[].source and url)",
        [
            Column("run", "run", align="left"),
            Column("system", "system", align="left"),
            Column("op", "op", align="left"),
            Column("ranks", "ranks"),
            Column("role", "role", align="left"),
            Column("runtime", "runtime", align="left"),
            Column("conditions", "conditions", align="left", drop_priority=1),
        ],
        [
            {
                "run": p.run.id,
                "system": p.run.system,
                "op": p.run.op,
                "ranks": p.run.ranks,
                "role": p.run.role,
                "runtime": p.runtime or "-",
                "conditions": p.run.conditions,
            }
            for p in predictions
        ],
        footer=[
            runtime_note,
            "role: predicted = nothing in the catalog was set from the run (gated); fitted = a parameter "
            "was set from it; excluded = conditions the model does not claim, such as an older runtime "
            "(both shown, not gated; the JSON says what was fitted and why a run is excluded).",
        ],
    )


def _rows_table(rows) -> Table:
    """Every priced row: measured, predicted, the error and its gate."""
    return Table(
        "Predicted against measured (error = predicted / measured time - 1)",
        [
            Column("run", "run", align="left"),
            Column("size", "size"),
            Column("measured_us", "measured (us)", "{:,.2f}", short="measured"),
            Column("predicted_us", "predicted (us)", "{:,.2f}", short="predicted"),
            Column("error", "error", _pct),
            Column("tolerance", "gate", lambda t: f"±{t * 100:.0f}%"),
            Column("verdict", "", align="left"),
            Column("choice", "runtime's choice", align="left", short="choice", drop_priority=1),
        ],
        [
            {
                **row_payload(row),
                "size": format_size(row.bytes),
                "verdict": ""
                if row.tolerance is None or row.error is None
                else ("ok" if row.passed else "FAIL"),
            }
            for row in rows
            if row.error is not None
        ],
    )


def _summary_table(summaries) -> Table:
    """The geometric-mean error per system, rank count and role."""
    return Table(
        "Geometric-mean error per system and rank count (exp(mean |ln(predicted/measured)|) - 1)",
        [
            Column("system", "system", align="left"),
            Column("ranks", "ranks"),
            Column("role", "role", align="left"),
            Column("runs", "runs"),
            Column("rows", "rows"),
            Column("geomean_error", "geomean error", "{:.1%}"),
            Column("worst_error", "worst row", _pct),
            Column("failed", "outside gate"),
        ],
        [vars(s) for s in summaries],
    )
