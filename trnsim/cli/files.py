"""The files a command reads and writes, checked before any work: an output is never an input.

Every command is wrapped by :func:`guarded` (see :func:`trnsim.cli.app.main`). Its file parameters
are read from its signature: the parameters named in :data:`OUTPUTS` are files it writes; every other
parameter typed ``Path`` is a file it reads, as is a ``calibration=FILE`` inside a ``--sku`` variant,
a ``--topology`` variant or a ``--set`` edit. Before the command runs, an output that is the same file
as an input (through relative paths, symlinks and hard links), as another output, or as a catalog
file is refused in one line naming both options and both paths; while it runs, writing over an input
is refused again where the file is written (:func:`trnsim.atomic.protecting`), for the file names a
command derives itself (``--heatmap heat.png`` writes heat-A.png, heat-B.png, ...).
"""

import functools
import typing
from pathlib import Path

from trnsim.errors import UsageError

# parameters (by their Python name) that name files a command writes
OUTPUTS = ("output", "save_baseline", "export_schedule", "heatmap", "plot")
# string parameters that may carry a calibration=FILE: --sku variants and --set edits
_TEXTS = ("sku", "sku_option", "overrides")


def guarded(callback):
    """``callback`` (a command) with its output files checked against its inputs before it runs."""
    if getattr(callback, "__trnsim_guarded__", False):
        return callback

    @functools.wraps(callback)
    def command(*args, **kwargs):
        from trnsim.atomic import protecting

        labels = _labels(callback)
        inputs = [pair for name, label in labels.items() for pair in _inputs(label, name, kwargs.get(name))]
        outputs = [
            (labels[name], Path(kwargs[name]))
            for name in OUTPUTS
            if name in labels and kwargs.get(name) is not None
        ]
        check_outputs(outputs, inputs)
        with protecting(inputs):
            return callback(*args, **kwargs)

    command.__trnsim_guarded__ = True
    return command


def check_outputs(outputs: list[tuple[str, Path]], inputs: list[tuple[str, Path]]) -> None:
    """Refuse an output that is an input, another output, or a catalog file.

    Parameters
    ----------
    outputs : list of (str, Path)
        Each file with the option that named it (``-o``, ``--save-baseline``).
    inputs : list of (str, Path)
        Each file with how the run was given it (``--topology in.yaml``, ``MEASUREMENT run.txt``).

    Raises
    ------
    UsageError
        One line naming the options and the paths.
    """
    from trnsim.atomic import same_file

    for n, (option, path) in enumerate(outputs):
        for source, read in inputs:
            if same_file(path, read):
                raise UsageError(
                    f"{option} {path} is the same file as {source}: an output never replaces an input; "
                    "give another file name"
                )
        for other, elsewhere in outputs[:n]:
            if same_file(path, elsewhere):
                raise UsageError(
                    f"{other} {elsewhere} and {option} {path} name the same file: give each output its own"
                )
        if path.exists():
            from trnsim.spec.catalog import catalog_files

            for shipped in catalog_files():
                if same_file(path, shipped):
                    raise UsageError(
                        f"{option} {path} is the catalog file {shipped}: trnsim never writes its catalog; "
                        "give another file name"
                    )


def _inputs(label: str, name: str, value) -> list[tuple[str, Path]]:
    """The files a parameter's value names for reading, each with how the user named it (none for an
    output or a plain option)."""
    if value is None or name in OUTPUTS:
        return []
    found = []
    for item in value if isinstance(value, list | tuple) else [value]:
        if isinstance(item, Path):
            found.append((f"{label} {item}", item))
            if ":" in str(item):  # a --topology variant: FILE:set=..., FILE:calibration=...
                found.append((f"{label} {item}", Path(str(item).split(":", 1)[0])))
        elif not (isinstance(item, str) and name in _TEXTS):
            continue
        found += [
            (f"the calibration file {path} of {label} {item}", path) for path in _calibrations(str(item))
        ]
    return found


def _calibrations(text: str) -> list[Path]:
    """The calibration files in a variant (``NAME:calibration=FILE``) or an edit (``calibration=FILE``),
    split as :meth:`trnsim.studies.variants.Variant.parse` splits them."""
    spelled = text.replace(":fail=", ":set=fail=").replace(":calibration=", ":set=calibration=")
    found = []
    for part in spelled.split(":set="):
        key, _, value = part.partition("=")
        if key.strip().lower() == "calibration" and value.strip():
            found.append(Path(value.strip()).expanduser())
    return found


def _labels(callback) -> dict[str, str]:
    """Each file parameter of a command by name, with how a user names it: its first option
    (``-o``, ``--topology``) or its argument's name (``MEASUREMENT``). String parameters that may
    carry files (:data:`_TEXTS`) are included."""
    cached = getattr(callback, "__trnsim_file_labels__", None)
    if cached is not None:
        return cached
    labels = {}
    for name, hint in typing.get_type_hints(callback, include_extras=True).items():
        if typing.get_origin(hint) is not typing.Annotated:
            continue
        kind, *extras = typing.get_args(hint)
        if not (_mentions_path(kind) or name in _TEXTS):
            continue
        info = next((extra for extra in extras if hasattr(extra, "param_decls")), None)
        # typer keeps an Annotated option's first name as its "default" (typer.Option("-o", "--output"))
        first = getattr(info, "default", None)
        names = ([first] if isinstance(first, str) else []) + list(getattr(info, "param_decls", ()) or ())
        declared = [d for d in names if d.startswith("-")]
        labels[name] = declared[0] if declared else getattr(info, "metavar", None) or name.upper()
    callback.__trnsim_file_labels__ = labels
    return labels


def _mentions_path(kind) -> bool:
    return kind is Path or any(_mentions_path(arg) for arg in typing.get_args(kind))
