"""Calibration files: a fit's parameters, as the ``--set`` edits every command can apply.

A file (YAML, written by ``trnsim calibrate -o``) records what was fitted and to what::

    format: trnsim-calibration/1
    measurement: examples/measurements/n5-allgather-32r.txt
    sku: trn1-nl16
    edits: [latency.step_ns=..., latency.link_ns=..., efficiency.default=..., efficiency.classes={}]
    parameters: {step_ns: {before: ..., value: ..., stderr: ...}, ...}
    rows: [{bytes: ..., measured_us: ..., model_us: ..., error: ...}, ...]

``--calibration FILE`` applies ``edits`` before the user's own ``--set`` edits.
"""

import math
from pathlib import Path

from trnsim.errors import ConfigError, TrnsimError

FORMAT = "trnsim-calibration/1"


def _clean(value):
    """Plain YAML values: floats rounded to what a reader needs, never NaN."""
    if isinstance(value, float):
        return None if not math.isfinite(value) else float(f"{value:.6g}")
    if isinstance(value, dict):
        return {key: _clean(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_clean(item) for item in value]
    return value


def calibration_document(fit) -> dict:
    """The file's content for a :class:`trnsim.studies.calibration.fit.Fit`."""
    return _clean(
        {
            "format": FORMAT,
            "measurement": fit.measurement.path,
            "source": fit.measurement.source,
            "tool": fit.measurement.tool,
            "op": fit.measurement.op,
            "ranks": fit.measurement.ranks,
            "sku": fit.sku,
            "topology": fit.topology_file,
            "group": fit.group,
            "algorithm": fit.algorithm,
            # what the parameters were fitted against (absent: the ideal model); a run given this
            # file models it unless it names another runtime
            "runtime": None if getattr(fit, "runtime", "ideal") == "ideal" else fit.runtime,
            "edits": fit.edits,
            "parameters": {
                p.name: {
                    "key": p.key,
                    "before": p.before,
                    "value": p.value,
                    "stderr": p.stderr,
                    "unit": p.unit,
                    "at_limit": p.at_limit,
                }
                for p in fit.parameters
            },
            "fit_sizes": {"min_bytes": fit.fit_sizes[0], "max_bytes": fit.fit_sizes[1]},
            "rms_log_error": fit.rms_error,
            "rows": [
                {
                    "bytes": row.bytes,
                    "measured_us": row.measured_us,
                    "model_before_us": row.before_us,
                    "model_us": row.after_us,
                    "error": row.error,
                    "fitted": row.fitted,
                    "algorithm": row.algorithm,
                }
                for row in fit.rows
            ],
            "notes": fit.notes,
        }
    )


def regime_documents(fits) -> list[dict]:
    """Each regime's fit (:func:`trnsim.studies.calibration.fit.fit_each_regime`): its sizes, rows,
    parameters with standard errors, and rms log error."""
    return _clean(
        [
            {
                "min_bytes": fit.fit_sizes[0],
                "max_bytes": fit.fit_sizes[1],
                "rows": sum(row.fitted for row in fit.rows),
                "parameters": {p.name: {"value": p.value, "stderr": p.stderr} for p in fit.parameters},
                "edits": fit.edits,
                "rms_log_error": fit.rms_error,
            }
            for fit in fits
        ]
    )


def write_calibration(fit, path: Path) -> str:
    """Render a calibration file (the caller writes it)."""
    import yaml

    header = (
        "# written by `trnsim calibrate`, to be given as a calibration file: the edits are what-ifs of\n"
        "# the topology file, fitted to the measurement named below (fitted, not predicted).\n"
    )
    return header + yaml.safe_dump(calibration_document(fit), sort_keys=False, width=110)


def calibration_target(path: Path) -> str | None:
    """The system a calibration file was fitted on (its ``sku``), if it names one."""
    from trnsim.yamlio import load_yaml

    document = load_yaml(Path(path), what="calibration file")
    return document.get("sku") if isinstance(document, dict) else None


def calibration_runtime(path: Path) -> str:
    """The runtime a calibration file was fitted against (``ideal`` when it names none)."""
    from trnsim.yamlio import load_yaml

    document = load_yaml(Path(path), what="calibration file")
    runtime = document.get("runtime") if isinstance(document, dict) else None
    if runtime is not None and not isinstance(runtime, str):
        raise ConfigError(f"{path}: runtime: expected a runtime's name")
    return runtime or "ideal"


def calibration_edits(path: Path) -> list[str]:
    """The ``--set`` edits of a calibration file, checked.

    Raises
    ------
    ConfigError
        If the file is not a calibration file (one line naming the file and the key).
    """
    from trnsim.spec.overrides import Edit, parse_assignment
    from trnsim.yamlio import load_yaml

    document = load_yaml(Path(path), what="calibration file")
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ConfigError(f"{path}: format: expected {FORMAT!r} (a file written by `trnsim calibrate -o`)")
    edits = document.get("edits")
    if not isinstance(edits, list) or not all(isinstance(edit, str) for edit in edits):
        raise ConfigError(f"{path}: edits: expected a list of KEY=VALUE strings")
    for number, edit in enumerate(edits):
        try:
            key, _ = parse_assignment(edit)
        except Exception as exc:  # noqa: BLE001 - any refusal becomes one line naming the entry
            message = exc.template if isinstance(exc, TrnsimError) else exc  # keeps what it names
            raise ConfigError(f"{path}: edits[{number}]: {message}") from None
        if not _schema_has(key):
            raise ConfigError(f"{path}: edits[{number}]: {key!r} is no key of a topology file")
    # each edit remembers its entry, so that a value the schema refuses is reported as the file's
    return [Edit(edit, f"{path}: edits[{number}]") for number, edit in enumerate(edits)]


def _schema_has(key: str) -> bool:
    """Whether a dotted key can name a field of the topology schema (list items by name or index,
    mapping entries by any name)."""
    import typing

    import msgspec

    from trnsim.spec.schema import Spec

    node = Spec
    for part in key.split("."):
        origin = typing.get_origin(node)
        if origin is typing.Annotated:
            node = typing.get_args(node)[0]
            origin = typing.get_origin(node)
        if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
            options = [arg for arg in typing.get_args(node) if arg is not type(None)]
            node = options[0] if options else node
            origin = typing.get_origin(node)
        if origin is list:
            node = typing.get_args(node)[0]  # an element, by index or name: the part names it
            continue
        if origin is dict:
            node = typing.get_args(node)[1]
            continue
        if isinstance(node, type) and issubclass(node, msgspec.Struct):
            fields = {field.name: field.type for field in msgspec.structs.fields(node)}
            if part not in fields:
                return False
            node = fields[part]
            continue
        return False  # a scalar has no sub-keys
    return True
