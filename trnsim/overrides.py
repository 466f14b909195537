"""``--set KEY=VALUE``: what-if edits of a topology document before it is validated.

Keys are dotted paths into the YAML document (``latency.switch_ns``, ``switched.cross_rack.lanes``).
In a list, an element may be named by its index or by its ``name`` field (``torus.axes.z.lanes``).
"""

import math
from typing import Any

import yaml

from trnsim.errors import UsageError


def parse_assignment(text: str) -> tuple[str, Any]:
    """Split ``"a.b=3"`` into the key path and a YAML-typed value."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"--set {text!r}: expected KEY=VALUE, e.g. latency.switch_ns=50")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    if isinstance(value, str):
        try:  # YAML 1.1 reads 1e300 as text; a number is what a --set of a number means
            number = float(value)
            value = number if math.isfinite(number) else value
        except ValueError:
            pass
    return key.strip(), value


def _child_index(container: list, part: str, path: str) -> int:
    if part.lstrip("-").isdigit():
        index = int(part)
        if -len(container) <= index < len(container):
            return index
    for index, item in enumerate(container):
        if isinstance(item, dict) and str(item.get("name")) == part:
            return index
    names = [str(item.get("name")) for item in container if isinstance(item, dict) and "name" in item]
    choices = f"an index 0..{len(container) - 1}" + (f" or one of {', '.join(names)}" if names else "")
    raise UsageError(f"--set {path}: no element {part!r} in that list; expected {choices}")


def apply_overrides(document: dict, assignments: list[str]) -> dict:
    """Return a copy of ``document`` with each ``KEY=VALUE`` assignment applied.

    Parameters
    ----------
    document : dict
        The raw YAML document.
    assignments : list of str
        ``KEY=VALUE`` strings; sections must exist, and the schema refuses a misspelt last key.

    Returns
    -------
    dict
        A deep copy with the values replaced.
    """
    import copy

    edited = copy.deepcopy(document)
    for text in assignments:
        key, value = parse_assignment(text)
        parts = key.split(".")
        node: Any = edited
        for depth, part in enumerate(parts):
            last = depth == len(parts) - 1
            if isinstance(node, list):
                index = _child_index(node, part, key)
                if last:
                    node[index] = value
                else:
                    node = node[index]
            elif isinstance(node, dict):
                if part not in node and not last:
                    where = ".".join(parts[:depth]) or "the top level"
                    known = ", ".join(sorted(map(str, node))) or "none"
                    raise UsageError(f"--set {key}: no section {part!r} under {where}; keys there: {known}")
                # a missing last key may be an optional field the file leaves out; the schema refuses typos
                if last:
                    node[part] = value
                else:
                    node = node[part]
            else:
                raise UsageError(f"--set {key}: {'.'.join(parts[:depth])} is a value, not a section")
    return edited
