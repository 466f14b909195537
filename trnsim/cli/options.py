"""Options shared by several commands, and how they turn into a loaded topology."""

from pathlib import Path
from typing import Annotated

import typer

from trnsim.collectives.ops import DTYPES
from trnsim.errors import UsageError
from trnsim.outputs.render import Format, visible

FormatOption = Annotated[Format, typer.Option("--format", help="Output format.", case_sensitive=False)]
SkuOption = Annotated[
    str | None, typer.Option("--sku", help="Catalog SKU name or alias (see `trnsim topo list`).")
]
TopologyOption = Annotated[
    Path | None,
    typer.Option("--topology", help="A topology YAML file in the catalog schema.", dir_okay=False),
]
SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="What-if edit of the topology file, KEY=VALUE (e.g. latency.switch_ns=50); repeatable, "
        "one edit per --set.",
    ),
]

ROUTING_HELP = (
    "Routing policy, overriding the SKU file's: ecmp (even split over all shortest paths), single "
    "(one path per pair: destination-address D-mod-K through switches, dimension order on tori) or "
    "hash[:SEEDS] (one random path per flow, 8 seeds, at most 64: the mean, and in collective and sweep "
    "the worst too); add ,no-relay to forbid "
    "paths through other chips or ,relay to allow them."
)
RoutingOption = Annotated[str | None, typer.Option("--routing", help=ROUTING_HELP)]
RoutingsOption = Annotated[
    list[str] | None,
    typer.Option("--routing", help=ROUTING_HELP + " Repeat to compare policies: each is a variant."),
]
CalibrationOption = Annotated[
    Path | None,
    typer.Option(
        "--calibration",
        help="A calibration file written by `trnsim calibrate`: its fitted parameters apply as --set "
        "edits before any --set of your own.",
        dir_okay=False,
    ),
]


def edits(
    overrides: list[str] | None,
    routing: str | None = None,
    calibration: Path | None = None,
    fail: list[str] | None = None,
    ranks_per_chip: int | None = None,
) -> list[str]:
    """Every what-if edit of a run, in the order they apply: calibration, --set, --ranks-per-chip (as
    ``chip.ranks=N``: one meaning, refused when a --set gives chip.ranks another value), --routing,
    --fail (as ``fail=SPEC``, which the loader applies to the built system)."""
    result = []
    if calibration is not None:
        from trnsim.errors import TrnsimError
        from trnsim.studies.calibration.files import calibration_edits

        try:
            result += calibration_edits(calibration)
        except TrnsimError as exc:
            raise exc.within("--calibration") from None
    result += list(overrides or ())
    if ranks_per_chip is not None:
        from trnsim.cli.chip_options import ranks_per_chip_edit

        result.append(ranks_per_chip_edit(overrides, ranks_per_chip))
    if routing is not None:
        from trnsim.routing.policy import routing_overrides

        result += routing_overrides(routing)
    result += [f"fail={spec}" for spec in fail or ()]
    return result


def note_alpha_override(alpha_us: float | None, edit_lists: list[list[str]]) -> None:
    """Say (on stderr) when ``--alpha-us`` overrides an edit of ``latency.step_ns`` (``--set``, a
    calibration file, a variant's ``:set=``): the option wins, and the edit would otherwise look
    applied."""
    if alpha_us is None:
        return
    from trnsim.spec.overrides import origin_of

    found = []
    for edit_list in edit_lists:
        for edit in edit_list:
            key = edit.partition("=")[0].strip()
            if key in ("latency", "latency.step_ns"):
                origin = origin_of(edit)
                text = f"{origin} {edit.strip()!r}" if origin else f"--set {edit.strip()}"
                if text not in found:
                    found.append(text)
    if found:
        typer.echo(f"note: --alpha-us {alpha_us:g} overrides {', '.join(found)}", err=True)


def note_calibration_target(calibration: Path | None, systems: list[str]) -> None:
    """Warn (on stderr) when a calibration fitted on one system is applied to another."""
    if calibration is None:
        return
    from trnsim.studies.calibration.files import calibration_target

    target = calibration_target(calibration)
    others = sorted({name for name in systems if target and name != target})
    if others:
        note = (
            f"note: {calibration} was fitted on {target}; applying it to {', '.join(others)} "
            "transfers its parameters (a what-if, not a measurement)"
        )
        typer.echo(visible(note), err=True)  # the file's sku is its own text


def load(sku: str | None, topology: Path | None, overrides: list[str] | None):
    """Load a topology from ``--sku`` or ``--topology`` with ``--set`` edits applied."""
    from trnsim.outputs.render import print_error
    from trnsim.topology import load_topology

    loaded = load_topology(sku, topology, overrides or [])
    for note in loaded.notes:
        print_error(note, label="note")
    return loaded


DEFAULT_MIN, DEFAULT_MAX = "8", "1G"


def resolve_sizes(
    minbytes: str | None, maxbytes: str | None, stepfactor: float | None, sizes: str | None
) -> list[int]:
    """Sizes from ``--sizes`` or the -b/-e/-f sweep (8 B to 1 GiB by default, factor 2).

    The default never depends on where the output goes: a table and a pipe give the same rows.
    """
    from trnsim import limits
    from trnsim.units import size_sweep

    if sizes is not None and (minbytes, maxbytes, stepfactor) != (None, None, None):
        raise UsageError("give --sizes or -b/-e/-f, not both")
    minbytes = DEFAULT_MIN if minbytes is None else minbytes
    maxbytes = DEFAULT_MAX if maxbytes is None else maxbytes
    if sizes is not None:
        parts = [part for part in sizes.split(",") if part.strip()]
        limits.SIZES.check(len(parts), "--sizes: the list has")
        values = [_size(part, "--sizes") for part in parts]
        if not values:
            raise UsageError("--sizes needs at least one size, e.g. --sizes 1K,1M,1G")
        if any(v <= 0 for v in values):
            raise UsageError("--sizes must all be at least 1 byte (0 bytes moves nothing to time)")
        return sorted(set(values))
    if stepfactor is None:
        stepfactor = 2.0
    return size_sweep(_size(minbytes, "-b"), _size(maxbytes, "-e"), stepfactor)


def _size(text: str, option: str) -> int:
    """A size from an option, its errors naming the option."""
    from trnsim.units import parse_size

    try:
        return parse_size(text)
    except UsageError as exc:
        raise UsageError(f"{option}: {exc}") from None


def algorithm(text: str, option: str = "--algo", also: tuple[str, ...] = ("auto", "all")) -> str:
    """An algorithm option's value in one spelling, checked before any work; errors name the option."""
    name = text.strip().lower()
    if name in also:
        return name
    from trnsim.collectives.algorithms import REGISTRY, find

    try:
        find(name)
    except UsageError:
        raise UsageError(
            f"{option} {text!r}: not an algorithm; choose one of {', '.join([*REGISTRY, *also])}"
        ) from None
    return name


Algo = Annotated[
    str, typer.Option("--algo", help="Algorithm name, auto (fastest per size) or all (side by side).")
]
# compare and plot show one algorithm per variant, so they take no `all`
AlgoOne = Annotated[str, typer.Option("--algo", help="Algorithm name or auto (the fastest per size).")]
MinBytes = Annotated[
    str | None,
    typer.Option(
        "-b",
        "--minbytes",
        help="Smallest size [8] (bytes; K/M/G/T/P, KiB..PiB, KB..PB ok; Gb, bits, is refused).",
    ),
]
MaxBytes = Annotated[str | None, typer.Option("-e", "--maxbytes", help="Largest size [1G].")]
StepFactor = Annotated[
    float | None,
    typer.Option("-f", "--stepfactor", help="Multiply the size by this between rows [2]."),
]
Sizes = Annotated[str | None, typer.Option("--sizes", help="Comma-separated sizes instead of -b/-e/-f.")]
Ranks = Annotated[int | None, typer.Option("--ranks", help="Use the first N ranks.")]
Group = Annotated[
    str | None,
    typer.Option(
        "--group",
        help="The chips taking part: all; rack:K; server:K or node:K; tray:K; plane:NAME (a switch "
        "plane's chips); slot:NAME; a rank range 0-31; or a list 0,2,5-7 of ranks or chip names.",
    ),
]
FailOption = Annotated[
    list[str] | None,
    typer.Option(
        "--fail",
        help="Fail a component, repeatable: chip:REF, link:A,B or link:CLASS:K, lanes:CHIP:N[:CLASS], "
        "switch:NAME, plane:NAME[:RACK], switch-tray:K[:RACK] (assumed: switch K of every plane), "
        "cable:CHIP. Spare lanes are used first; traffic re-routes; a split fabric is refused.",
    ),
]
Skew = Annotated[
    str | None,
    typer.Option(
        "--skew",
        help="alltoall with hot destinations: FACTOR[:HOT], the first HOT ranks of each group (default "
        "1) each receive FACTOR times the mean (max/mean load, as MoE papers define imbalance); every "
        "rank still sends its whole buffer. Runs on mesh and pairwise.",
    ),
]
TrafficFile = Annotated[
    Path | None,
    typer.Option(
        "--traffic",
        help="alltoall with a traffic matrix: a text file of p rows of p numbers (row i: what rank i "
        "sends to each rank), scaled so a rank sends the size on average. Runs on mesh and pairwise.",
    ),
]
Groups = Annotated[
    str | None,
    typer.Option(
        "--groups",
        help="Many disjoint groups of one size running the op at once, sharing every link: KIND:* "
        "(rack, server, node, tray, plane, slot), stride:N, blocks:K (consecutive blocks of K ranks), "
        "groups separated by ';' (0-3;4-7), or FILE.json: replica groups as nccom-test's "
        '--custom-replica-groups reads them ({"replica_groups": [[[0,1],[2,3]]]}; on Trainium the ranks '
        "are logical NeuronCores, as measure-plan writes them). Prints the slowest group's time, the same "
        "run with no link shared, and the slowdown.",
    ),
]
GroupsOfVariants = Annotated[
    str | None,
    typer.Option(
        "--groups",
        help="Run each variant's groups at once, sharing every link (KIND:*, stride:N, blocks:K, 0-3;4-7 "
        "or a replica-groups FILE.json, as on collective); the rows are the slowest group's, and the spec "
        "is part of a baseline row.",
    ),
]
Dtype = Annotated[
    str,
    typer.Option(
        "--dtype", help=f"Element type for the count column: {', '.join(DTYPES)} (case-insensitive)."
    ),
]
RuntimeOption = Annotated[
    str | None,
    typer.Option(
        "--runtime",
        help="What the numbers model: ideal (the fabric's limit under trnsim's best schedule); nccl "
        "(NCCL 2.30.7's tuner picks the algorithm/protocol per size, for GPUs on one NVSwitch domain; time = "
        "NCCL's expected time, plus NVLS's pipeline fill; runtime.nccl.call_us models a tuned build's call "
        "cost); neuron (the Neuron runtime's "
        "documented algorithms by size: mesh, rdh, kangaring, ring; ranks per chip from --ranks-per-chip); "
        "xla (TPU rings along the torus axes, the scaling book's model). Each needs the file's runtime.NAME "
        "facts; the ideal busbw is shown beside. Default: the file's runtime.default, else ideal.",
        show_default=False,
    ),
]
AlphaUs = Annotated[
    float | None,
    typer.Option(
        "--alpha-us",
        help="Per-step alpha in microseconds, 0 to 1e6 (overrides the latency.step_ns of the SKU file).",
    ),
]


MaxChunks = Annotated[
    int | None,
    typer.Option(
        "--max-chunks",
        help="Most chunks a pipelined schedule (multidim, tree) splits the data into [1024; an assumption].",
        show_default=False,
    ),
]
MinChunk = Annotated[
    str | None,
    typer.Option(
        "--min-chunk",
        help="Smallest chunk of a pipelined schedule, in bytes [64K; an assumption: below it per-message "
        "costs the model does not count would dominate].",
        show_default=False,
    ),
]
Explain = Annotated[
    bool,
    typer.Option(
        "--explain",
        help="Add each row's pipeline chunk count and how busy each link class is (the mean busy share of "
        "the links it uses) to the table; JSON always has them. With --groups: every group's time.",
    ),
]
ExportSchedule = Annotated[
    Path | None,
    typer.Option(
        "--export-schedule",
        help="Write the schedule (steps, pipelines, flows with their shares, the shortest paths each pair "
        "uses, chunk counts per size) as JSON, or with --schedule-format (or a .xml name) its program in that "
        "format: the --algo named, else the best one at the largest size.",
        show_default=False,
    ),
]


def chunk_bytes(text: str | None) -> int | None:
    """``--min-chunk`` in bytes (None when not given), its errors naming the option."""
    if text is None:
        return None
    from trnsim.units import parse_size

    try:
        return parse_size(text)
    except UsageError as error:
        raise UsageError(f"--min-chunk: {error}") from None


def writable(path: Path | None, what: str = "output") -> Path | None:
    """Check before any work that ``path`` can be written: its folder exists, it is no folder, and
    it is none of the files the run reads (:mod:`trnsim.cli.files`)."""
    if path is None:
        return None
    from trnsim.atomic import refuse_inputs

    refuse_inputs(path, what)
    if path.is_dir():
        raise UsageError(f"{what} {path} is a folder; give a file name")
    if not path.resolve().parent.is_dir():
        raise UsageError(f"{what} {path}: folder {path.resolve().parent} does not exist")
    return path


# suffixes that name a format: a file named with one of these and written in another is refused
_FORMAT_SUFFIXES = {
    ".json": "JSON", ".yaml": "YAML", ".yml": "YAML", ".csv": "CSV", ".md": "Markdown", ".graphml": "GraphML",
    ".xml": "XML", ".dot": "Graphviz dot", ".gv": "Graphviz dot", ".png": "PNG", ".svg": "SVG", ".pdf": "PDF",
}  # fmt: skip


def check_suffix(path: Path | None, option: str, what: str, suffixes: tuple[str, ...]) -> None:
    """Refuse an output whose suffix names another format than the ``what`` it gets (``-o cal.json``
    for a YAML file); no suffix, one of ``suffixes`` or one that names no format is fine."""
    if path is None:
        return
    suffix = path.suffix.lower()
    if suffix in _FORMAT_SUFFIXES and suffix not in suffixes:
        raise UsageError(
            f"{option} {path}: the file is {what}, not {_FORMAT_SUFFIXES[suffix]}; name it "
            f"{' or '.join(path.stem + s for s in suffixes)} (or with no suffix)"
        )


def write_text(path: Path, text: str) -> None:
    """Write a file whole or not at all (:func:`trnsim.atomic.write_atomic`); an OS refusal is one
    clear line."""
    from trnsim.atomic import write_atomic

    write_atomic(path, text)


HEATMAP_HELP = (
    "Draw the fabric with each link coloured by how busy it is in the busiest step of the chosen "
    "algorithm at the largest size (.png, .svg or .pdf; needs the plot extra)."
)
Heatmap = Annotated[Path | None, typer.Option("--heatmap", help=HEATMAP_HELP, show_default=False)]


def picture_path(path: Path | None, what: str) -> Path | None:
    """Check a picture's file name (suffix and folder) before any work."""
    if path is None:
        return None
    from trnsim.outputs.draw import FORMATS

    if path.suffix.lower() not in FORMATS:
        raise UsageError(f"{what} {path}: give a {', '.join(FORMATS[:-1])} or {FORMATS[-1]} file")
    return writable(path, what)
