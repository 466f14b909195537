"""What ``compare``, ``sweep``, ``plot`` and ``report`` share: the variants' options, the checks made
before any work, and who runs each variant's collective (a :class:`~trnsim.model.backend.Selection`)."""

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.options import algorithm, chunk_bytes, edits, note_alpha_override, writable
from trnsim.errors import UsageError


class Metric(str, Enum):
    busbw = "busbw"
    time = "time"
    efficiency = "efficiency"


OpArgument = Annotated[str, typer.Argument(help="allreduce, allgather, reducescatter or alltoall.")]
Skus = Annotated[
    list[str] | None,
    typer.Option(
        "--sku",
        help="A SKU, or a what-if NAME:set=KEY=VALUE, NAME:fail=SPEC or NAME:calibration=FILE (that "
        "variant alone); repeat for more variants.",
    ),
]
Files = Annotated[
    list[Path] | None, typer.Option("--topology", help="A topology YAML file as a variant; repeatable.")
]
MetricOption = Annotated[Metric, typer.Option("--metric", help="What the ratios and the baseline compare.")]
SaveBaseline = Annotated[
    Path | None, typer.Option("--save-baseline", help="Write the results as a baseline.")
]
BaselineOption = Annotated[
    Path | None, typer.Option("--baseline", help="Check against a saved baseline; exit 1 on a regression.")
]
MaxRegression = Annotated[
    str, typer.Option("--max-regression", help="Allowed worsening per row against --baseline (5% or 0.05).")
]
RequireAllRows = Annotated[
    bool,
    typer.Option(
        "--require-all-rows",
        help="Fail (exit 1) when a row of --baseline is missing from the run (another size, variant, op "
        "or algorithm); without it such rows are listed and not checked. Rows new in the run are listed.",
    ),
]
RuntimeOfVariants = Annotated[
    str | None,
    typer.Option(
        "--runtime",
        help="What every variant's numbers model: ideal (the fabric's limit under trnsim's best "
        "schedule) or a runtime its file has the facts for, as in trnsim collective --runtime (rows show "
        "the runtime's busbw and choice, the ideal's beside). Default: each variant's own file's "
        "runtime.default, so compared systems may each run their own library; the output says which.",
        show_default=False,
    ),
]
# the options that only act on a check against --baseline
CHECK_OPTIONS = ("max_regression", "require_all_rows")


def variants_of(named, overrides, routings=None, calibration=None, fail=None, alpha_us=None):
    """The variants to run, and the edits common to all; each --routing multiplies the variants.

    ``named`` holds ``("sku", text)`` and ``("topology", path)`` pairs in the order typed (see
    :func:`trnsim.cli.typed.in_typed_order`): the first is A, the base of the ratios.
    """
    from dataclasses import replace

    from trnsim.routing.policy import routing_overrides
    from trnsim.studies.variants import Variant

    common = tuple(edits(overrides, None, calibration, fail))
    variants = [Variant.parse(str(value), is_file=kind == "topology", common=common) for kind, value in named]
    if calibration is not None and any(variant.calibrations for variant in variants):
        raise UsageError(
            f"--calibration {calibration} and a variant's own calibration=FILE: give one calibration to "
            "every variant or one per variant, not both"
        )
    if not variants:
        raise UsageError("name at least one variant with --sku or --topology")
    if routings:
        variants = [
            replace(variant, overrides=variant.overrides + tuple(routing_overrides(routing)))
            for variant in variants
            for routing in routings
        ]
    note_alpha_override(alpha_us, [variant.edits() for variant in variants])
    return variants, common


def selection(group=None, ranks=None, groups=None, skew=None, traffic=None, alpha_us=None, max_chunks=None, min_chunk=None, shape=(None, None, None)):  # fmt: skip
    """Who runs each variant's collective and how its steps are costed, from the options; ``shape``
    is ``(root, pairs, counts)`` (:mod:`trnsim.cli.op_options`)."""
    from trnsim.model.backend import Costing, Selection

    costing = Costing(alpha_us, max_chunks, chunk_bytes(min_chunk))
    return Selection(group, ranks, groups, skew, traffic, costing, None, *shape)


def letters(count: int) -> list[str]:
    """The variants' letters in tables and file names: A is the baseline of the ratios."""
    return [chr(ord("A") + n) if n < 26 else f"V{n}" for n in range(count)]


def note_calibrations(calibration: Path | None, results) -> None:
    """Warn when a calibration (the common one, or a variant's own) was fitted on another system."""
    from trnsim.cli.options import note_calibration_target

    note_calibration_target(calibration, [r.topology.name for r in results])
    for r in results:  # a variant's own calibration file
        for path in r.variant.calibrations:
            note_calibration_target(path, [r.topology.name])


def prepare(
    algo: str, max_regression: str, baseline, save_baseline, command: str, groups=None, group=None, ranks=None
) -> None:
    """Check before any work: the algorithm choice, the groups, the threshold and where results go."""
    from trnsim.studies import baseline as baselines
    from trnsim.units import parse_percent

    if groups is not None and (group is not None or ranks is not None):
        raise UsageError("give --groups, or --group/--ranks for one group, not both")
    if algo.lower() == "all":
        raise UsageError(f"--algo all is for trnsim collective; {command} takes one algorithm or auto")
    algorithm(algo)  # an unknown name is refused before the work, naming --algo
    parse_percent(max_regression, "--max-regression")  # an error even before a baseline is given
    if baseline is not None:
        baselines.load(baseline)  # a missing or malformed baseline fails before the work, not after
        if save_baseline is not None and Path(save_baseline).resolve() == Path(baseline).resolve():
            raise UsageError(
                f"--save-baseline and --baseline name the same file {baseline}: the run would be checked "
                "against itself"
            )
    writable(save_baseline, "--save-baseline")
