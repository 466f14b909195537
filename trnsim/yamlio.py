"""Read YAML from users' files without letting a file hang, crash or exhaust the process.

PyYAML's loader recurses once per nesting level (a deep file raises RecursionError, or crashes
the C extension), libyaml refuses nesting beyond its own limit (1,000 levels since PyYAML 6.0.3)
with a message of its own, and PyYAML keeps aliases as shared references, so a small "billion
laughs" file turns into an exponential walk for whatever reads the result next. Before loading, the
file must be a regular file of bounded size; then, before any parser sees the text, a lexical pass
bounds its nesting depth from above (:func:`depth_bound`). Only when that bound passes the limit
does the pure-Python parser (which has no depth limit of its own) measure the depth exactly. One
streaming pass over the parse events (which stops at the first excess) then bounds the number of
nodes once aliases are expanded.
"""

import re
import stat
from pathlib import Path

import yaml

from trnsim import limits
from trnsim.errors import ConfigError


class _StrictMappings:
    """Refuse a key given twice in one mapping (YAML keeps the last silently)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *anchor` merges keys that the mapping's own keys may override
            key = self.construct_object(key_node, deep=deep)
            try:
                repeated = key in seen
                seen.add(key)
            except TypeError:  # a list or mapping as a key: unhashable, refused below as a key type
                raise yaml.constructor.ConstructorError(
                    None, None, "a key must be a plain value, not a list or mapping", key_node.start_mark
                ) from None
            if repeated:
                mark = key_node.start_mark
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} appears twice (line {mark.line + 1})", mark
                )
        return super().construct_mapping(node, deep=deep)


class SafeLoader(_StrictMappings, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """The safe loader (libyaml's when installed) with trnsim's rules: see the module docstring."""


class PureSafeLoader(_StrictMappings, yaml.SafeLoader):
    """The same rules on PyYAML's pure-Python parser, which has no nesting limit of its own: used
    for files deeper than libyaml reads."""


# Plain scalars are typed by YAML 1.2's core schema, not PyYAML's YAML 1.1 rules: under 1.1,
# `032` is octal 26, `1:30` is 90, `4_0` is 40, `off` is False and `1e9` is a string. Here
# integers are decimal, floats are decimal with an optional exponent, booleans are true/false,
# and everything else stays text for the schema to refuse with its key path.
_CORE = {
    "tag:yaml.org,2002:bool": (r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    "tag:yaml.org,2002:int": (r"^[-+]?[0-9]+$", "-+0123456789"),
    "tag:yaml.org,2002:float": (
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
}
_RESOLVERS = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _CORE]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
# the most digits a number in a topology file needs; Python refuses int("1" * 5000) anyway
_MAX_DIGITS = 40


def _construct_int(loader, node):
    text = loader.construct_scalar(node)
    if len(text) > _MAX_DIGITS:
        raise yaml.constructor.ConstructorError(
            None, None, f"a number of {len(text)} digits (at most {_MAX_DIGITS})", node.start_mark
        )
    return int(text)  # decimal even with a leading zero, as YAML 1.2 reads it


def _construct_bool(loader, node):
    return loader.construct_scalar(node).lower() == "true"


for _loader in (SafeLoader, PureSafeLoader):
    _loader.yaml_implicit_resolvers = {first: list(resolvers) for first, resolvers in _RESOLVERS.items()}
    for _tag, (_pattern, _first) in _CORE.items():
        _loader.add_implicit_resolver(_tag, re.compile(_pattern), list(_first))
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _loader.construct_mapping)
    _loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
    _loader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)

# libyaml's own nesting limit is 1,000 (PyYAML 6.0.3 on); below this many levels it never applies
_LIBYAML_SAFE_DEPTH = 500
# a quoted scalar or a comment: they can hold brackets and colons that open nothing. A quote opens
# a scalar only where a scalar may start (a line's start, after a space or a flow indicator; `-'` and
# `:'` begin plain scalars), a # a comment only after a space: `it's` and `a#b` are text.
_INERT = re.compile(
    r"""(?:(?<=^)|(?<=[\s\[{,]))(?:"(?:[^"\\]|\\.)*"|'(?:[^']|'')*')|(?:(?<=^)|(?<=\s))#[^\n]*""", re.M
)
_FLOW = re.compile(r"[\[\]{}]")
# block indicators are followed by a space or the line's end (`a-b`, `1e-9` and `x:y` open nothing)
_BLOCK_OPENERS = re.compile(r"[-?:](?=[ \t]|$)")


def depth_bound(text: str) -> int:
    """An upper bound on the nesting depth of a YAML text, from its characters alone.

    A flow collection opens at ``[`` or ``{``; a block collection at a ``-``, ``?`` or ``:`` and, on
    a new line, only deeper than its parent or (a sequence under a key) at the same column. So the
    depth is at most the deepest flow nesting plus, over every line, two levels per column of
    indentation and one per such character. Quoted scalars and comments are skipped; where that
    skip is fooled (an unusual quote), libyaml's own refusal is caught and measured exactly.

    Examples
    --------
    >>> depth_bound("a: [[1], {b: 2}]")  # 3 levels: the bound is safe, not tight
    6
    """
    flow = deepest_flow = deepest_block = 0
    for line in _INERT.sub("", text).split("\n"):
        stripped = line.lstrip(" \t")
        indent = len(line) - len(stripped)
        deepest_block = max(deepest_block, 2 * (indent + 1) + len(_BLOCK_OPENERS.findall(stripped)))
        for bracket in _FLOW.findall(stripped):
            flow = flow + 1 if bracket in "[{" else max(flow - 1, 0)
            deepest_flow = max(deepest_flow, flow)
    return deepest_flow + deepest_block


def read_text(path: Path, what: str = "file", limit: limits.Limit = limits.FILE_BYTES) -> str:
    """Read a regular UTF-8 text file of bounded size: every text file trnsim reads comes through here
    (binary files through :func:`read_bytes`).

    Parameters
    ----------
    path : Path
        The file.
    what : str
        What the file should be, for messages ("topology file").
    limit : Limit
        The bound on its size in bytes (:data:`trnsim.limits.FILE_BYTES` unless the file is of a kind
        that is legitimately larger).

    Raises
    ------
    ConfigError
        For a missing file, a folder, a FIFO or device, an oversized file or one that is not UTF-8.
    """
    data = read_bytes(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a text file (byte {exc.start} is not UTF-8)") from None


def read_bytes(path: Path, what: str = "file", limit: limits.Limit = limits.FILE_BYTES) -> bytes:
    """Read a regular file of bounded size as bytes (a binary format such as Chakra's traces); the
    same refusals as :func:`read_text` but the encoding."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    if stat.S_ISDIR(info.st_mode):
        raise ConfigError(f"{path}: is a folder, not a {what}")
    if not stat.S_ISREG(info.st_mode):
        # a FIFO blocks until someone writes, /dev/zero never ends: read only regular files
        raise ConfigError(f"{path}: not a regular file (a pipe, socket or device); expected a {what}")
    limit.check(info.st_size, f"{path}: the file has")
    try:
        with path.open("rb") as handle:
            data = handle.read(limit.value + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    limit.check(len(data), f"{path}: the file has")
    return data


def _check_shape(text: str, where: str, loader=SafeLoader) -> int:
    """Bound nesting depth and alias-expanded size in one pass over the parse events; return the
    deepest nesting seen."""
    max_depth, max_nodes = limits.YAML_DEPTH.value, limits.YAML_NODES.value
    stack: list[list] = [[0, None]]  # per open collection: expanded node count, anchor
    anchors: dict[str, int | None] = {}  # None while the anchored collection is still open
    deepest = 0

    def add(count: int, event) -> None:
        stack[-1][0] += count
        if stack[-1][0] > max_nodes:
            line = event.start_mark.line + 1
            limits.YAML_NODES.check(stack[-1][0], f"{where}: line {line}: the document reaches")

    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if len(stack) > max_depth:
                line = event.start_mark.line + 1
                limits.YAML_DEPTH.check(len(stack), f"{where}: line {line}: the document reaches")
            if event.anchor:
                anchors[event.anchor] = None
            stack.append([1, event.anchor])
            deepest = max(deepest, len(stack) - 1)
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            count, anchor = stack.pop()
            if anchor:
                anchors[anchor] = count
            add(count, event)
        elif isinstance(event, yaml.ScalarEvent):
            if event.anchor:
                anchors[event.anchor] = 1
            add(1, event)
        elif isinstance(event, yaml.AliasEvent):
            size = anchors.get(event.anchor)
            if size is None:
                line = event.start_mark.line + 1
                raise ConfigError(
                    f"{where}: line {line}: alias *{event.anchor} refers to a collection that contains "
                    "it (a recursive structure); expected plain data"
                )
            add(size, event)
    return deepest


def _nesting_refused(exc: yaml.YAMLError) -> bool:
    """libyaml's refusal of deep nesting (its own limit), which the exact measure replaces."""
    return "nesting depth" in f"{getattr(exc, 'context', '')} {getattr(exc, 'problem', '')}"


# texts parsed in this process, by content and the bounds they were checked against: a design checks
# each varied value against its system's file (1,354 parses of one 3 kB file took 2.6 s of a 3.8 s
# run); a copy is handed out each time, so that no caller's edits reach another's
_PARSED: dict[tuple[str, int, int], object] = {}
_PARSED_KEEP = 32  # documents kept (the least recently parsed go first)
_PARSED_LARGEST = 1 << 20  # characters: a larger text is parsed every time rather than kept


def load_text(text: str, where: str):
    """Parse YAML text safely into plain Python data (see the module docstring).

    A text parsed before in this process (the same characters, under the same bounds) is not parsed
    again: a copy of what it gave is returned.

    Parameters
    ----------
    text : str
        The document.
    where : str
        Names the text in messages: a file, or ``"file: aliases"``.

    Raises
    ------
    ConfigError
        With ``where``, the line and what is wrong, for too deep, too large, recursive or invalid YAML.

    Examples
    --------
    >>> load_text("a: [1, 2]", "example")
    {'a': [1, 2]}
    """
    import copy

    key = (text, limits.YAML_DEPTH.value, limits.YAML_NODES.value)
    if key in _PARSED:
        _PARSED[key] = _PARSED.pop(key)  # the most recently used last
        return copy.deepcopy(_PARSED[key])
    document = _parse(text, where)
    if len(text) <= _PARSED_LARGEST:
        try:
            _PARSED[key] = copy.deepcopy(document)
        except RecursionError:  # nested deeper than copying recurses (a raised depth limit): not kept
            return document
        while len(_PARSED) > _PARSED_KEEP:
            del _PARSED[next(iter(_PARSED))]
    return document


def _parse(text: str, where: str):
    """:func:`load_text`'s parse, every time."""
    try:
        loader = SafeLoader
        if depth_bound(text) > min(limits.YAML_DEPTH.value, _LIBYAML_SAFE_DEPTH):
            # measured exactly by the parser that has no limit of its own: trnsim's limit decides
            if _check_shape(text, where, PureSafeLoader) >= _LIBYAML_SAFE_DEPTH:
                loader = PureSafeLoader
        else:
            try:
                _check_shape(text, where)
            except yaml.YAMLError as exc:
                if not _nesting_refused(exc):
                    raise
                if _check_shape(text, where, PureSafeLoader) >= _LIBYAML_SAFE_DEPTH:
                    loader = PureSafeLoader
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{where}: not valid YAML{at}: {problem}") from None
    except RecursionError:  # deeper than Python's stack, with TRNSIM_MAX_YAML_DEPTH raised past it
        raise ConfigError(f"{where}: nested too deeply to read") from None


def load_yaml(path: Path, what: str = "topology file"):
    """Parse a YAML file safely into plain Python data (see the module docstring).

    Raises
    ------
    ConfigError
        With the file, the line and what is wrong, for unreadable, oversized, too deep, recursive
        or invalid YAML.
    """
    return load_text(read_text(path, what), str(path))
