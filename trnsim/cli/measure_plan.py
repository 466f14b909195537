"""``trnsim measure-plan``: the benchmark command (and its input files) that measures a prediction."""

from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.op_options import Pairs, Root, check_shape
from trnsim.cli.options import (
    CalibrationOption,
    Dtype,
    FailOption,
    FormatOption,
    Group,
    MaxBytes,
    MinBytes,
    Ranks,
    RoutingOption,
    RuntimeOption,
    SetOption,
    Sizes,
    SkuOption,
    StepFactor,
    TopologyOption,
)
from trnsim.outputs.render import Format

OutputDir = Annotated[
    Path | None,
    typer.Option(
        "-o",
        "--output",
        help="A folder to write run.sh (the commands), the input files they read and prediction.json "
        "(trnsim's rows); created if missing, its parent must exist.",
    ),
]


def measure_plan(
    op: Annotated[
        str,
        typer.Argument(
            help="The op: nccom-test runs allreduce, allgather, reducescatter, alltoall, sendrecv and "
            "permute; nccl-tests those four and broadcast, reduce, gather, scatter and sendrecv."
        ),
    ],
    sku: SkuOption = None,
    topology: TopologyOption = None,
    overrides: SetOption = None,
    routing: RoutingOption = None,
    calibration: CalibrationOption = None,
    fail: FailOption = None,
    group: Group = None,
    ranks: Ranks = None,
    root: Root = None,
    pairs: Pairs = None,
    minbytes: MinBytes = None,
    maxbytes: MaxBytes = None,
    stepfactor: StepFactor = None,
    sizes: Sizes = None,
    dtype: Dtype = "float",
    runtime: RuntimeOption = None,
    output: OutputDir = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Write what to run on real hardware to check a prediction, and how to read the result back.

    Under the Neuron runtime: the nccom-test command line, with a --custom-replica-groups file where
    the group is not every NeuronCore of its instances (nccom-test numbers logical cores instance by
    instance). Under NCCL: the nccl-tests command lines with NCCL_ALGO and NCCL_PROTO pinned to the
    tuner's pick for each size. The same group, sizes and dtype as the prediction printed beside
    them; the last line is the calibrate command that reads the saved output back. The file's
    default runtime is used unless --runtime names one (xla and ideal have no benchmark to write).

    Examples:

        trnsim measure-plan allgather --sku nl16 --group 0-3 --sizes 1M,1G
        trnsim measure-plan allreduce --sku hgx-h100 --sizes 8,64K,1M,1G -o plan
    """
    from trnsim.cli.options import edits, load, resolve_sizes
    from trnsim.model.backend import Costing, Selection
    from trnsim.model.runtime import runtime_of
    from trnsim.studies.measure_plan import check_runtime, with_prediction

    edited = edits(overrides, routing, calibration, fail, None)
    topo = load(sku, topology, edited)
    if calibration is not None and runtime is None:  # a calibration models what it was fitted against
        from trnsim.studies.calibration.files import calibration_runtime

        runtime = calibration_runtime(calibration)
    size_list = resolve_sizes(minbytes, maxbytes, stepfactor, sizes)
    name = runtime_of(topo, runtime)
    check_runtime(topo, name)  # before any work
    targets = _targets(output)
    root, pairs, _ = check_shape([op], root, pairs, None)
    backend = Selection(group, ranks, None, None, None, Costing(), None, root, pairs).backend(topo)
    plan = with_prediction(backend, op, size_list, dtype, name)
    system = f"--sku {sku}" if sku is not None else f"--topology {topology}"
    chip_ranks = topo.ranks_per_chip > 1  # the file's chips already host several ranks
    shape = [*(["--root", str(root)] if root is not None else []), *(["--pairs", pairs] if pairs else [])]
    what_ifs = _what_ifs(overrides, routing, fail) + shape
    calibrate = _calibrate_line(plan, system, group, ranks, len(backend.group), op, what_ifs, chip_ranks)
    _show(topo, plan, group, calibrate, output, fmt, targets)


def _targets(output: Path | None) -> dict[str, Path]:
    """Check before any work that the folder can take the plan's files."""
    if output is None:
        return {}
    from trnsim.cli.options import writable
    from trnsim.errors import UsageError

    if output.exists() and not output.is_dir():
        raise UsageError(f"-o {output}: not a folder")
    if not output.parent.is_dir():
        raise UsageError(f"-o {output}: its parent folder does not exist")
    names = ("run.sh", "replica-groups.json", "pairs.json", "prediction.json")
    return {name: writable(output / name, "-o") for name in names} if output.exists() else {}


def _what_ifs(overrides, routing, fail) -> list[str]:
    """The run's what-if options as calibrate takes them (it fits the model, so no --calibration)."""
    words = [part for edit in overrides or () for part in ("--set", edit)]
    words += ["--routing", routing] if routing is not None else []
    return words + [part for spec in fail or () for part in ("--fail", spec)]


def _calibrate_line(
    plan, system: str, group, ranks, p: int, op: str, overrides: list[str], chip_ranks: bool
) -> str:
    """The calibrate command that reads the run's saved output back onto the same group."""
    import shlex

    words = ["trnsim", "calibrate", "OUTPUT.txt", *shlex.split(system)]
    words += overrides
    if group is not None:
        words += ["--group", group]
    elif ranks is not None:
        words += ["--group", f"0-{ranks - 1}"]
    words += ["--op", op, "--runtime", plan.priced_by or plan.runtime]
    if plan.files:  # the command line counts every rank of the instances, not the group's
        words += ["--ranks", str(p)]
    if plan.cores_per_chip_used is not None and not chip_ranks:
        words += ["--ranks-per-chip", str(plan.cores_per_chip_used)]  # its ranks count NeuronCores
    return shlex.join(words)


def _show(topo, plan, group, calibrate: str, output, fmt, targets) -> None:
    from trnsim.outputs.render import emit
    from trnsim.outputs.table import Column, Table

    title = (
        f"{topo.name}: measure with {plan.tool} (group {group or 'all'}, runtime {plan.runtime}); predicted"
        + ("" if plan.priced_by in ("", plan.runtime) else f" by the {plan.priced_by} model")
    )
    rows = [
        {"bytes": r.bytes, "busbw_gbps": r.busbw_gbps, "time_us": r.time_us, "algorithm": r.algorithm}
        for r in plan.predicted
    ]
    columns = [
        Column("bytes", "size (B)"),
        Column("time_us", "time (us)", "{:.2f}"),
        Column("busbw_gbps", "busbw (GB/s)", "{:.2f}"),
        Column("algorithm", f"{plan.priced_by or plan.runtime} algo", align="left"),
    ]
    # commands are printed whole, one a line, after the table: a wrapped command cannot be pasted
    lines = ["# run:", *plan.commands]
    lines += [f"# {name}: {text}" for name, text in plan.files.items()]
    lines += [f"# {note}" for note in plan.notes]
    lines += ["# then save the output table as OUTPUT.txt and read it back:", calibrate]
    payload = {
        "sku": topo.name,
        "tool": plan.tool,
        "runtime": plan.runtime,
        "commands": plan.commands,
        "files": plan.files,
        "notes": plan.notes,
        "calibrate": calibrate,
        "predicted": rows,
    }
    if output is not None:
        _write(output, plan, calibrate, payload, targets)
        lines.append(f"# written to {output}: run.sh, prediction.json{''.join(', ' + n for n in plan.files)}")
    emit(payload, [Table(title, columns, rows)], fmt)
    if fmt == Format.table:
        print("\n".join(lines))
    elif fmt == Format.markdown:  # a block of its own: its lines start with '#'
        print("\n```text\n" + "\n".join(lines) + "\n```")


def _write(output: Path, plan, calibrate: str, payload: dict, targets) -> None:
    import json

    from trnsim.cli.options import writable, write_text

    output.mkdir(exist_ok=True)
    script = [
        "#!/bin/sh",
        f"# {plan.tool} run written by trnsim measure-plan; save its output as OUTPUT.txt",
        "set -e",
    ]
    script += plan.commands + [f"# then: {calibrate}"]
    files = {
        "run.sh": "\n".join(script) + "\n",
        **plan.files,
        "prediction.json": json.dumps(payload, indent=2) + "\n",
    }
    for name, text in files.items():
        write_text(targets.get(name) or writable(output / name, "-o"), text)
