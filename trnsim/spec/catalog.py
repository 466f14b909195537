"""Read a system's YAML safely and validate it into a :class:`Spec`; the catalog's names (which file a SKU
is) are :mod:`trnsim.spec.names`, re-exported here."""

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import msgspec

from trnsim.errors import ConfigError, UsageError
from trnsim.spec.names import (  # noqa: F401 - re-exported
    _catalog_index,
    catalog_dir,
    catalog_files,
    catalog_names,
    find_sku,
    read_document,
)
from trnsim.spec.overrides import apply_overrides, blame, named_edits
from trnsim.spec.schema import RuntimeName, ScaleOutNetwork, Spec


@dataclass(frozen=True)
class LoadedSpec:
    """A validated spec with where it came from."""

    spec: Spec
    path: Path
    document: dict
    overrides: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        """The file, and any ``--set`` edits applied to it, for messages."""
        return str(self.path) + (f" with {named_edits(self.overrides)}" if self.overrides else "")


_CHOICES = {
    "kind": "torus, switched (or for node_local: direct, switches)",
    "medium": "pcb, backplane, copper, aec, optics",
    "default": ", ".join(get_args(RuntimeName)),  # runtime.default, the one enum of that name
    "network": ", ".join(get_args(ScaleOutNetwork)),  # scale_out.network
    "policy": "spray, hash",  # scale_out.policy
    "design": "tor, rail",  # scale_out.design
    "per": "each, lane, gbit",  # parts.NAME.per
}
_MSGSPEC_AT = re.compile(r"^(.*?)(?: - at `\$(.*)`)?$", re.S)


def convert_document(document: dict, kind: type, where) -> Any:
    """``document`` as a ``kind`` (a topology's :class:`Spec`, a parts file), or one
    :class:`ConfigError` line: ``where(keypath)`` (the file, or the edit), the key path (a part by its
    name, not msgspec's ``parts[...]``) and what was expected.

    Examples
    --------
    >>> from trnsim.spec.schema import Latency
    >>> convert_document({"step_ns": "fast"}, Latency, lambda keypath: "my.yaml")
    Traceback (most recent call last):
    ...
    trnsim.errors.ConfigError: my.yaml: step_ns: expected `float`, got `str`
    """
    try:
        return msgspec.convert(document, kind, strict=True)
    except msgspec.ValidationError as exc:
        keypath, message = _describe_validation(exc)
        if "`$.parts" in str(exc):  # msgspec names a dict's entry parts[...]: find it by name
            keypath, message = describe_part_error(document.get("parts"), keypath, message)
        raise ConfigError(f"{where(keypath)}: {keypath}: {message}") from None


def _describe_validation(exc: msgspec.ValidationError) -> tuple[str, str]:
    message, keypath = _MSGSPEC_AT.match(str(exc)).groups()
    keypath = (keypath or "").lstrip(".") or "(top level)"
    choices = _CHOICES.get(keypath.split(".")[-1].split("[")[0])
    if "Invalid enum value" in message and choices:
        message += f"; expected one of {choices}"
    message = (
        message.replace("Object contains unknown field", "unknown key")
        .replace("Object missing required field", "missing required key")
        .replace("Expected", "expected")
    )
    if "matching regex" in message:  # the schema's Name pattern, said in words
        message = "expected one line of printable text (no control characters)"
    return keypath, message


def describe_part_error(parts, keypath: str, message: str) -> tuple[str, str]:
    """The key path of a refused ``parts`` entry by its name (msgspec says ``parts[...]``): each
    entry is converted alone until one fails."""
    from trnsim.spec.schema import PartName, PartSpec

    if not isinstance(parts, dict):
        return keypath, message
    for name, value in parts.items():
        try:
            msgspec.convert(name, PartName, strict=True)
        except msgspec.ValidationError:
            return (
                "parts",
                f"part name {str(name)!r}: expected one word of letters, digits, -, _ or + (no dots)",
            )
        try:
            msgspec.convert(value, PartSpec, strict=True)
        except msgspec.ValidationError as exc:
            inner, text = _describe_validation(exc)
            return (f"parts.{name}" if inner == "(top level)" else f"parts.{name}.{inner}"), text
    return keypath, message


def validate_document(
    document: dict, path: Path | str, edits: list[str] = (), file: Path | None = None
) -> Spec:
    """Convert a raw document into a :class:`Spec`, checking types, ranges and cross-references.

    ``edits`` are the edits the document carries, applied to ``file``: a refused key that an edit
    from a calibration file set is reported as that file's entry (:func:`trnsim.spec.overrides.blame`).

    Raises
    ------
    ConfigError
        With one line naming the file (or the edit), the key path and what was expected.
    """
    spec = convert_document(document, Spec, lambda keypath: _where(path, edits, file, keypath))
    _check_references(spec, path, edits, file)
    _check_ranges(spec, path, edits, file)
    _check_scale_out(spec, path, edits, file)
    runtime = spec.runtime
    if runtime.default != "ideal" and getattr(runtime, runtime.default) is None:
        keypath = "runtime.default"
        raise ConfigError(
            f"{_where(path, edits, file, keypath)}: {keypath}: runtime {runtime.default!r} needs a "
            f"`runtime.{runtime.default}` section"
        )
    return spec


def _check_scale_out(spec: Spec, path: Path | str, edits: list[str], file: Path | None) -> None:
    """A ``scale_out`` section gives its NIC rate (and latency) under one name: the new or the old."""
    out = spec.scale_out
    if out is None:
        return
    for new, old in (("nic_gbit_per_chip", "efa_gbit_per_chip"), ("nic_latency_ns", "efa_latency_ns")):
        both = getattr(out, new) is not None and getattr(out, old) is not None
        if both:
            keypath = f"scale_out.{old}"
            raise ConfigError(
                f"{_where(path, edits, file, keypath)}: {keypath}: the older name of scale_out.{new}, "
                "which the section also gives: keep one"
            )
    if out.nic_gbit is None:
        keypath = "scale_out.nic_gbit_per_chip"
        raise ConfigError(
            f"{_where(path, edits, file, keypath)}: {keypath}: missing required key (the NIC's Gbit/s per "
            "chip; efa_gbit_per_chip, its older name, is read too)"
        )


def _where(path: Path | str, edits: list[str], file: Path | None, keypath: str) -> str:
    source = blame(list(edits), keypath)
    return f"{source} (applied to {file or path})" if source else str(path)


def _check_references(spec: Spec, path: Path, edits: list[str] = (), file: Path | None = None) -> None:
    def fail(keypath: str, message: str) -> None:
        raise ConfigError(f"{_where(path, edits, file, keypath)}: {keypath}: {message}")

    section = spec.torus if spec.kind == "torus" else spec.switched
    other = "switched" if spec.kind == "torus" else "torus"
    if section is None:
        fail(spec.kind, f"missing required key `{spec.kind}` for kind {spec.kind!r}")
    if getattr(spec, other) is not None:
        fail(other, f"a {spec.kind} file takes no `{other}` section")
    chip = spec.chip
    if chip.active_lanes is not None and chip.active_lanes > chip.lanes:
        fail("chip.active_lanes", f"expected at most chip.lanes ({chip.lanes}), got {chip.active_lanes}")
    if spec.kind == "torus":
        names = [axis.name for axis in spec.torus.axes]
        if not names:
            fail("torus.axes", "expected at least one axis")
        if len(set(names)) != len(names):
            fail("torus.axes", f"axis names must be unique, got {names}")
        if spec.torus.server_axis is not None and spec.torus.server_axis not in names:
            fail("torus.server_axis", f"expected one of the axis names {names}")
        for axis in spec.torus.axes:
            for other in axis.twist:
                if other not in names or other == axis.name:
                    fail(f"torus.axes.{axis.name}.twist", f"expected other axes of {names}, got {other!r}")
            if axis.twist and not axis.wrap:
                fail(f"torus.axes.{axis.name}.twist", "a twist moves along the wrap link: the axis must wrap")
        plane = spec.torus.hypercube_plane
        if plane is not None:
            sizes = {axis.name: axis.size for axis in spec.torus.axes}
            if len(plane) != 2 or any(sizes.get(name) != 4 for name in plane):
                fail("torus.hypercube_plane", "expected two names of size-4 axes (a 4x4 plane is a 4-cube)")
        return
    switched = spec.switched
    if len(set(switched.slots)) != len(switched.slots) or not switched.slots:
        fail("switched.slots", f"expected a non-empty list of unique slot names, got {switched.slots}")
    # device names are r<rack>.n<node>.<slot>, r<rack>.n<node>.sw<k> and r<rack>.<plane>.sw<k>:
    # a slot called sw0 or a plane called n0 would make two devices one
    clash = [slot for slot in switched.slots if re.fullmatch(r"sw[0-9]+", slot)]
    if clash:
        fail("switched.slots", f"slot name {clash[0]!r} clashes with on-node switch names (sw0, sw1, ...)")
    fabric = switched.switch_fabric
    if fabric is not None:
        if fabric.switch_model not in spec.switch_models:
            fail("switched.switch_fabric.switch_model", _unknown_model(fabric.switch_model, spec))
        if fabric.active_lanes > fabric.backplane_lanes:
            fail(
                "switched.switch_fabric.active_lanes",
                f"expected at most backplane_lanes ({fabric.backplane_lanes}), got {fabric.active_lanes}",
            )
        total = len(fabric.planes) * fabric.switches_per_plane
        if fabric.switches_per_tray and total % fabric.switches_per_tray:
            fail(
                "switched.switch_fabric.switches_per_tray",
                f"expected a divisor of a rack's {total} plane switches ({len(fabric.planes)} "
                f"plane{'s' if len(fabric.planes) > 1 else ''} of {fabric.switches_per_plane}), or 0 for "
                f"switches in no tray; got {fabric.switches_per_tray}",
            )
        names = [plane.name for plane in fabric.planes]
        if len(set(names)) != len(names):
            fail("switched.switch_fabric.planes", f"plane names must be unique, got {names}")
        for index, plane in enumerate(fabric.planes):
            if re.fullmatch(r"n[0-9]+", plane.name):
                fail(
                    f"switched.switch_fabric.planes[{index}].name",
                    f"plane name {plane.name!r} clashes with node names (n0, n1, ...)",
                )
            for slot in plane.slots:
                if slot not in switched.slots:
                    fail(
                        f"switched.switch_fabric.planes[{index}].slots",
                        f"unknown slot {slot!r}; expected one of {switched.slots}",
                    )
    local = switched.node_local
    if local is not None and local.kind == "switches":
        if local.switch_model is None:
            fail("switched.node_local.switch_model", "expected a switch model for kind 'switches'")
        if local.switch_model not in spec.switch_models:
            fail("switched.node_local.switch_model", _unknown_model(local.switch_model, spec))
    if switched.cross_rack is not None and switched.racks % 2:
        fail("switched.racks", f"cross-rack links pair racks: expected an even number, got {switched.racks}")


def _check_ranges(spec: Spec, path: Path, edits: list[str] = (), file: Path | None = None) -> None:
    """Each range names a number the file holds (or defaults), with low <= high. The value need not
    lie inside: an edit that sets it takes the parameter out of the ranged run."""
    for key, (low, high) in spec.ranges.items():
        keypath = f"ranges.{key}"
        value = spec_value(spec, key)
        problem = None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            problem = "expected the path of a number in the file (an efficiency, a latency, a cost)"
        elif not (math.isfinite(low) and math.isfinite(high) and low <= high):
            problem = f"expected [low, high] with low <= high, got [{low:g}, {high:g}]"
        if problem:
            raise ConfigError(f"{_where(path, edits, file, keypath)}: {keypath}: {problem}")


def spec_value(spec: Spec, key: str):
    """The value at a dotted edit path of ``spec`` (its default when the file leaves it out), or None.

    >>> from trnsim.spec.catalog import load_spec
    >>> spec_value(load_spec("trn2-nl16").spec, "efficiency.default")
    0.88
    """
    node = spec
    for part in key.split("."):
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, msgspec.Struct) and part in node.__struct_fields__:
            node = getattr(node, part)
        else:
            return None
    return node


def _unknown_model(name: str, spec: Spec) -> str:
    known = ", ".join(sorted(spec.switch_models)) or "none defined"
    return f"unknown switch model {name!r}; switch_models defines: {known}"


# sections a file may omit that --set, --routing and --calibration edit key by key
OPTIONAL_SECTIONS = (("routing",), ("efficiency",), ("efficiency", "classes"), ("parts",))


def load_spec(sku: str | None = None, topology: Path | None = None, overrides: list[str] = ()) -> LoadedSpec:
    """Load and validate a SKU from the catalog or a user's file, with ``--set`` overrides applied.

    Parameters
    ----------
    sku : str, optional
        A catalog name or alias.
    topology : Path, optional
        A YAML file in the catalog schema (used when ``sku`` is not given).
    overrides : list of str
        ``KEY=VALUE`` edits applied to the document before validation.
    """
    if (sku is None) == (topology is None):
        raise UsageError("give exactly one of {sku} NAME or {topology} FILE")
    path = find_sku(sku) if sku is not None else Path(topology)
    document = read_document(path)
    where = path
    if overrides:
        if isinstance(document, dict):
            # sections every file may leave out (their defaults apply) can still be edited
            for keys in OPTIONAL_SECTIONS:
                if any(edit.strip().startswith(".".join(keys) + ".") for edit in overrides):
                    node = document
                    for key in keys:
                        node = node.setdefault(key, {}) if isinstance(node, dict) else None
                        if not isinstance(node, dict):
                            break
            _add_parts(document, overrides)
        document = apply_overrides(document, list(overrides))
        # a value that fails validation came from the edits, not from the file: say so
        where = f"{path} with {{overrides}} {', '.join(overrides)}"
    return LoadedSpec(
        spec=validate_document(document, where, overrides, path),
        path=path,
        document=document,
        overrides=tuple(overrides),
    )


def _add_parts(document: dict, overrides) -> None:
    """``parts.NAME.KEY=VALUE`` edits a part the file need not list (the default parts catalog's):
    the ``parts`` section and the part's mapping are added for the edit to land in."""
    for edit in overrides:
        keys = edit.split("=", 1)[0].strip().split(".")
        if len(keys) < 3 or keys[0] != "parts":
            continue
        parts = document.setdefault("parts", {})
        if isinstance(parts, dict) and parts.get(keys[1]) is None:
            parts[keys[1]] = {}
