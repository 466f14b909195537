"""Baselines for CI from ``compare`` and ``sweep``: save a run's rows, or check them against saved
ones, reporting on stderr and exiting 1 on a regression (:mod:`trnsim.studies.baseline` compares)."""

from pathlib import Path

import typer

from trnsim.errors import ThresholdError, UsageError
from trnsim.outputs.render import visible


def portable(path: Path) -> str:
    """A catalog file as ``topologies/NAME.yaml``; other files as given."""
    from trnsim.spec.catalog import catalog_dir

    try:
        return str(Path(path).resolve().relative_to(catalog_dir().resolve().parent))
    except ValueError:
        return str(path)


def variant_meta(results) -> list[dict]:
    """Each variant's identity in a baseline: its label, file, edits and the files' hashes, and the
    runtime its numbers model where it is not the ideal (a baseline without one is the ideal's)."""
    from trnsim.studies.variants import file_sha256

    return [
        {
            "label": r.label,
            "sku": r.variant.sku,
            "file": portable(r.topology.path),
            "overrides": list(r.variant.overrides),
            "sha256": r.sha256,
            **(
                {"calibration_sha256": [file_sha256(path) for path in r.variant.calibrations]}
                if r.variant.calibrations
                else {}
            ),
            **({"runtime": r.runtime, "runtime_model": r.runtime_model} if r.runtime != "ideal" else {}),
        }
        for r in results
    ]


def baselines(
    rows: list[dict],
    variants: list[dict],
    context: dict,
    save_path,
    check_path,
    max_regression,
    metric: str,
    require_all: bool = False,
) -> None:
    """Save and/or check a baseline; a check prints its report on stderr and exits 1 on a regression,
    or with ``require_all`` on a baseline row the run did not produce."""
    if save_path is not None:
        _save(save_path, rows, variants, context)
    if check_path is not None:
        _check(check_path, rows, variants, context, max_regression, metric, require_all)


def _save(path, rows: list[dict], variants: list[dict], context: dict) -> None:
    from trnsim.studies import baseline

    try:
        baseline.save(path, rows, variants, context)
    except OSError as exc:
        raise UsageError(f"cannot write baseline {path}: {exc.strerror}") from None
    typer.echo(f"saved baseline {path} ({_rows(len(rows))})", err=True)


def _check(path, rows, variants, context, max_regression, metric: str, require_all: bool) -> None:
    from trnsim.studies import baseline
    from trnsim.units import parse_percent

    threshold = parse_percent(max_regression)
    saved = baseline.load(path)  # read before the run too (prepare); re-read: it is small
    if (mismatch := baseline.runtime_mismatch(saved, variants)) is not None:
        raise UsageError(f"{path}: {mismatch}")
    result = baseline.check(saved, rows, metric, threshold)
    if not result.checks:
        example = baseline.describe_key(result.only_in_baseline[0]) if result.only_in_baseline else "none"
        raise UsageError(
            f"{path}: no row of this run matches the baseline (rows match on variant, op, group, "
            f"algorithm, dtype, alpha, chunk limits and size; the baseline has e.g. {example})"
        )
    lines = _report(path, saved, result, variants, context, metric, threshold, require_all)
    typer.echo(visible("\n".join(lines)), err=True)  # labels and edits come from the baseline file
    failures = _failures(result, threshold, require_all)
    if failures:
        raise ThresholdError("; ".join(failures))
    typer.echo(f"ok: no row worse than {100 * threshold:g}%", err=True)


def _report(path, saved, result, variants, context, metric, threshold, require_all) -> list[str]:
    """The check's lines: what was compared, what changed since, what was not checked, what regressed."""
    lines = [
        f"baseline {path}: {len(result.checks)} rows compared on {metric}, threshold {100 * threshold:g}%"
    ]
    hashes = {v.get("label"): v.get("sha256") for v in saved.get("variants", [])}
    changed = [v["label"] for v in variants if hashes.get(v["label"]) not in (None, v.get("sha256"))]
    if changed:
        lines.append(f"note: topology file changed since the baseline for {', '.join(changed)}")
    if saved.get("overrides", []) != context.get("overrides", []):
        before = ", ".join(saved.get("overrides", [])) or "none"
        lines.append(
            f"note: this run's --set edits ({', '.join(context.get('overrides', [])) or 'none'}) differ "
            f"from the baseline's ({before})"
        )
    missing, new = result.only_in_baseline, result.only_in_run
    if missing:
        unless = "" if require_all else "; --require-all-rows fails on them"
        lines.append(
            f"note: {_rows(len(missing))} of the baseline not produced by this run, not checked{unless}: "
            f"{_examples(missing, 3)}"
        )
    if new:
        lines.append(
            f"note: {_rows(len(new))} of this run not in the baseline, not checked: {_examples(new, 3)}"
        )
    return lines + [
        f"REGRESSION {c.label}: {metric} {c.baseline:.4g} -> {c.current:.4g} ({100 * c.change:+.1f}%)"
        for c in result.regressions
    ]


def _failures(result, threshold: float, require_all: bool) -> list[str]:
    bad, missing = result.regressions, result.only_in_baseline
    failures = []
    if bad:
        named = "; ".join(f"{c.label} {100 * c.change:+.1f}%" for c in bad[:5])
        more = f"; and {len(bad) - 5} more" if len(bad) > 5 else ""
        failures.append(
            f"{len(bad)} of {len(result.checks)} rows worse than the baseline by more than "
            f"{100 * threshold:g}%: {named}{more}"
        )
    if missing and require_all:
        failures.append(
            f"{_rows(len(missing))} of the baseline not produced by this run (--require-all-rows): "
            f"{_examples(missing, 5)}"
        )
    return failures


def _rows(count: int) -> str:
    return f"{count} row{'s' if count != 1 else ''}"


def _examples(keys: list[tuple], shown: int) -> str:
    """The first ``shown`` row identities, and how many more there are."""
    from trnsim.studies.baseline import describe_key

    more = f"; and {len(keys) - shown} more" if len(keys) > shown else ""
    return "; ".join(describe_key(key) for key in keys[:shown]) + more
