"""``--set KEY=VALUE``: what-if edits of a topology document before it is validated.

Keys are dotted paths into the YAML document (``latency.switch_ns``, ``switched.cross_rack.lanes``).
In a list, an element may be named by its index or by its ``name`` field (``torus.axes.z.lanes``).

Values are read literally, not as YAML 1.1 (where ``1:30`` is 90, ``0x10`` is 16 and ``yes`` is
true): ``true``/``false``, ``null``, a decimal integer (``-3``), a decimal float (``2.5``, ``1e-3``,
``.5``, ``2.``), a quoted string, or a flow list ``[A, B]`` / mapping ``{a: 1}`` whose items follow
the same rules. Anything else (``0x10``, ``1_000``, ``inf``) is a plain string, which the schema
then refuses where it expects a number, with the key path, exactly as it would in a file.
"""

import math
import re
from typing import Any

from trnsim.errors import ParameterError, UsageError

_INT = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(
    r"-?(?:[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+)"
)
# YAML 1.2's core spellings; YAML 1.1's yes/no/on/off/y/n stay strings
_WORDS = {
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
    **dict.fromkeys(("null", "Null", "NULL", "~"), None),
}
_MAX_DEPTH = 32  # a --set value is typed by hand; deeper nesting is a mistake, not a topology


def parse_scalar(text: str) -> Any:
    """Type one unquoted scalar: a bool, ``None``, a decimal int or float, or else the text itself.

    Parameters
    ----------
    text : str
        The scalar as written, without surrounding spaces.

    Returns
    -------
    bool, None, int, float or str
        ``nan``, ``inf`` and a float that overflows to infinity stay strings (no schema field takes
        them, and the schema's refusal names the key).
    """
    if text in _WORDS:
        return _WORDS[text]
    try:
        if _INT.fullmatch(text):
            return int(text)
        if _FLOAT.fullmatch(text):
            number = float(text)
            return number if math.isfinite(number) else text
    except ValueError:  # an integer of more digits than Python converts: no field takes one anyway
        return text
    return text


_MISSING = object()


def _parse_flow(text: str, key: str) -> Any:
    """Parse a quoted string or a flow list/mapping, typing plain scalars with :func:`parse_scalar`.

    YAML's parser only tokenises (brackets, commas, quotes); its events are assembled here without
    its resolver, so no YAML 1.1 typing sneaks in. Returns ``_MISSING`` when ``text`` is not one
    well-formed flow value (it is then taken as a plain string).
    """
    import yaml

    root: list = []
    # one frame per open collection: [container, key waiting for its value]
    stack: list[list] = [[root, _MISSING]]

    def add(value: Any, event) -> None:
        frame = stack[-1]
        container, pending = frame
        if isinstance(container, list):
            container.append(value)
        elif pending is _MISSING:
            if isinstance(value, (list, dict)):
                raise ParameterError(
                    "a mapping key must be a plain value, not a list or mapping", "overrides", key
                )
            if value in container:
                raise ParameterError(f"key {value!r} appears twice in the value", "overrides", key)
            frame[1] = value
        else:
            container[pending] = value
            frame[1] = _MISSING

    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.ScalarEvent):
                # a quoted scalar is a string whatever it spells; tags (!!int ...) are ignored
                add(parse_scalar(event.value) if event.style is None else event.value, event)
            elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                if len(stack) > _MAX_DEPTH:
                    raise ParameterError(f"the value nests deeper than {_MAX_DEPTH} levels", "overrides", key)
                stack.append([[] if isinstance(event, yaml.SequenceStartEvent) else {}, _MISSING])
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                container, _ = stack.pop()
                add(container, event)
            elif isinstance(event, yaml.AliasEvent):
                raise ParameterError(
                    f"anchors and aliases (*{event.anchor}) are not supported", "overrides", key
                )
    except yaml.YAMLError:
        return _MISSING
    return root[0] if len(root) == 1 else _MISSING


def parse_value(raw: str, key: str = "KEY") -> Any:
    """Type the VALUE of ``--set KEY=VALUE`` literally (see the module docstring).

    Parameters
    ----------
    raw : str
        The text after ``=``.
    key : str
        The key, for messages.

    Returns
    -------
    Any
        A bool, ``None``, int, float, str, or a list or dict of these.

    Raises
    ------
    UsageError
        For a flow value with aliases or absurd nesting.
    """
    text = raw.strip()
    if text[:1] in ("[", "{", '"', "'"):
        value = _parse_flow(text, key)
        if value is not _MISSING:
            return value
        return text  # not one well-formed flow value: a plain string, as any other text
    return parse_scalar(text)


def parse_assignment(text: str) -> tuple[str, Any]:
    """Split ``"a.b=3"`` into the key path and its literally typed value (see :func:`parse_value`).

    Raises
    ------
    UsageError
        When there is no ``=`` or no key.
    """
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ParameterError("expected KEY=VALUE, e.g. latency.switch_ns=50", "overrides", repr(text))
    return key.strip(), parse_value(raw, key.strip())


def _child_index(container: list, part: str, path: str) -> int:
    # 0..n-1 only: Python's -1 (the last) would edit an element the message never offered
    if part.isascii() and part.isdigit() and int(part) < len(container):
        return int(part)
    for index, item in enumerate(container):
        if isinstance(item, dict) and str(item.get("name")) == part:
            return index
    names = [str(item.get("name")) for item in container if isinstance(item, dict) and "name" in item]
    choices = f"an index 0..{len(container) - 1}" + (f" or one of {', '.join(names)}" if names else "")
    raise ParameterError(f"no element {part!r} in that list; expected {choices}", "overrides", path)


class Edit(str):
    """A ``KEY=VALUE`` edit that remembers where it came from when that is not ``--set`` (an entry
    of a calibration file), so that a refusal names its source."""

    origin: str

    def __new__(cls, text: str, origin: str) -> "Edit":
        edit = super().__new__(cls, text)
        edit.origin = origin
        return edit

    def __reduce__(self):  # sweep's worker processes receive edits pickled
        return (Edit, (str(self), self.origin))


def origin_of(edit: str) -> str | None:
    """Where an edit came from, when not ``--set`` (see :class:`Edit`)."""
    return getattr(edit, "origin", None)


def blame(edits: list[str], keypath: str) -> str | None:
    """The source of the last edit of ``keypath`` (or of a section holding it), when that edit came
    from somewhere other than ``--set``: ``"file: edits[0] 'KEY=VALUE'"``."""
    for edit in reversed(edits):
        key = edit.partition("=")[0].strip()
        if keypath == key or keypath.startswith((f"{key}.", f"{key}[")):
            origin = origin_of(edit)
            return f"{origin} {edit.strip()!r}" if origin else None
    return None


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
        try:
            _apply(edited, text)
        except UsageError as exc:
            origin = origin_of(text)
            if origin is None:
                raise
            # the edit came from a file, not from the caller's overrides: name the file instead
            message = exc.template.removeprefix("{overrides} ")
            raise UsageError(f"{origin} {text.strip()!r}: {message}") from None
    return edited


def _apply(edited: dict, text: str) -> None:
    """Apply one ``KEY=VALUE`` edit in place."""
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
                raise ParameterError(
                    f"no section {part!r} under {where}; keys there: {known}", "overrides", key
                )
            # a missing last key may be an optional field the file leaves out; the schema refuses typos
            if last:
                node[part] = value
            else:
                node = node[part]
        else:
            raise ParameterError(f"{'.'.join(parts[:depth])} is a value, not a section", "overrides", key)


def _braced(parameter: str) -> str:
    return "{" + parameter + "}"


def named_edits(edits, name=_braced) -> str:
    """A run's edits as a message names them: ``{overrides} K=V, K=V {fail} SPEC {calibration} FILE``
    (failures and a variant's calibration files as given), each parameter as ``name(parameter)``: in
    braces by default, as :class:`~trnsim.errors.TrnsimError` shows it (the command line:
    ``--set K=V ... --fail SPEC``)."""

    def key(text: str) -> str:
        return text.split("=", 1)[0].strip().lower()

    sets = [text for text in edits if key(text) not in ("fail", "calibration")]
    fails = [text.split("=", 1)[1] for text in edits if key(text) == "fail"]
    files = [text.split("=", 1)[1] for text in edits if key(text) == "calibration"]
    parts = ([f"{name('overrides')} {', '.join(sets)}"] if sets else []) + [
        f"{name('fail')} {spec}" for spec in fails
    ]
    return " ".join(parts + [f"{name('calibration')} {path}" for path in files])
