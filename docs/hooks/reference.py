"""MkDocs hook: the reference pages that are generated, never written by hand.

- ``reference/topology-files.md`` gets, in place of ``<!-- schema-reference -->``, one table per section
  of a topology file: every key with its type, unit, default and constraints, read from the msgspec
  structs of ``trnsim/spec/schema.py``, and what it means, from ``docs/hooks/fields.yaml``.
- ``reference/commands.md`` gets, in place of ``<!-- command-reference -->``, the ``--help`` of every
  command as the installed ``trnsim`` prints it.

``schema_sections`` and ``schema_reference`` need only msgspec and trnsim (``tests/docs`` imports this
file to check that every field of the schema is documented); ``command_reference`` runs the CLI.
A field of the schema with no entry in fields.yaml, or an entry for a field that does not exist,
stops the build.
"""

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import msgspec
import yaml

HERE = Path(__file__).resolve().parent
FIELDS = HERE / "fields.yaml"
SCHEMA_MARK = "<!-- schema-reference -->"
COMMANDS_MARK = "<!-- command-reference -->"
MODULES_MARK = "<!-- module-list -->"
# the layers of tests/test_layers.py, lowest first ("" is trnsim/*.py)
LAYERS = ["", "spec", "topology", "routing", "collectives", "model", "studies", "outputs", "cli"]
# units that follow from a key's suffix (the project names units in field names)
SUFFIX_UNITS = {"_ns": "ns", "_gbps": "GB/s per direction", "_gbit": "Gbit/s", "_tbit": "Tbit/s"}
PRINTABLE = "^[^\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"


@dataclass
class Row:
    """One key of one section."""

    key: str
    type: str
    unit: str
    default: str
    constraints: str
    text: str


@dataclass
class Section:
    """One mapping of a topology file: the struct that reads it and where it sits."""

    struct: str
    path: str
    summary: str
    rows: list[Row]


def _fields() -> dict[str, dict]:
    return yaml.safe_load(FIELDS.read_text(encoding="utf-8"))


def _summary(cls: type) -> str:
    doc = (cls.__doc__ or "").strip()
    first = doc.split("\n\n")[0]
    return re.sub(r"\s+", " ", first).replace("``", "`")


def _number(value: float) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and value >= 1 << 20 and (value & (value - 1)) == 0:
        return f"2^{value.bit_length() - 1}"
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def _bounds(info) -> list[str]:
    if info.ge is not None and info.le is not None:
        return [f"{_number(info.ge)} to {_number(info.le)}"]
    out = []
    for attr, sign in (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<=")):
        value = getattr(info, attr, None)
        if value is not None:
            out.append(f"{sign} {_number(value)}")
    return out


def _describe(info, link) -> tuple[str, list[str]]:
    """(type, constraints) of a msgspec.inspect type."""
    mi = msgspec.inspect
    if isinstance(info, mi.UnionType):
        parts = [t for t in info.types if not isinstance(t, mi.NoneType)]
        kind, rules = _describe(parts[0], link)
        return (kind + " or null" if len(parts) < len(info.types) else kind), rules
    if isinstance(info, mi.IntType):
        return "integer", _bounds(info)
    if isinstance(info, mi.FloatType):
        return "number", _bounds(info)
    if isinstance(info, mi.BoolType):
        return "true or false", []
    if isinstance(info, mi.StrType):
        low, high = info.min_length or 0, info.max_length
        length = (
            f"{low:,} to {high:,} characters"
            if low and high
            else f"at most {high:,} characters"
            if high
            else ""
        )
        printable = "one printable line" if info.pattern and info.pattern.startswith(PRINTABLE) else ""
        return "text", [
            ", ".join(part for part in (length, printable) if part)
        ] if length or printable else []
    if isinstance(info, mi.LiteralType):
        return "one of " + ", ".join(f"`{v}`" for v in sorted(info.values)), []
    if isinstance(info, mi.ListType):
        kind, rules = _describe(info.item_type, link)
        return f"list of {kind}", [f"each {rule}" for rule in rules]
    if isinstance(info, mi.DictType):
        kind, rules = _describe(info.value_type, link)
        return f"mapping of name to {kind}", [f"each value {rule}" for rule in rules]
    if isinstance(info, mi.TupleType):
        kinds = [_describe(item, link)[0] for item in info.item_types]
        return f"[{', '.join(kinds)}]", []
    if isinstance(info, mi.StructType):
        return link(info.cls), []
    raise TypeError(f"no description for {info!r}")  # a new kind of type: teach this function


def _default(field) -> str:
    if field.required:
        return "required"
    if field.default_factory is not msgspec.NODEFAULT:
        value = field.default_factory()
        if isinstance(value, msgspec.Struct):
            return "the section's defaults"
        return "`[]`" if value == [] else "`{}`" if value == {} else f"`{value}`"
    value = field.default
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if value == "":
        return "empty"
    return f"`{_number(value)}`" if isinstance(value, (int, float)) else f"`{value}`"


def _structs(info, path: str, found: dict[type, str]) -> None:
    """Every struct reachable from ``info``, with the key path where it first appears."""
    mi = msgspec.inspect
    if isinstance(info, mi.StructType):
        if info.cls in found:
            return
        found[info.cls] = path
        for field in info.fields:
            _structs(field.type, f"{path}.{field.name}" if path else field.name, found)
    elif isinstance(info, mi.UnionType):
        for t in info.types:
            _structs(t, path, found)
    elif isinstance(info, mi.ListType):
        _structs(info.item_type, f"{path}[]", found)
    elif isinstance(info, mi.DictType):
        _structs(info.value_type, f"{path}.NAME", found)


def _linkify(text: str) -> str:
    """``docs/sources.md#x`` in a description becomes a link to that fact."""
    return re.sub(r"`?docs/sources\.md#([a-z0-9-]+)`?", r"[sources](../sources.md#\1)", text)


def schema_sections() -> list[Section]:
    """One section per struct of the topology file schema, top level first, with every field.

    Raises
    ------
    ValueError
        When a field has no entry in fields.yaml, or an entry names no field of the schema.
    """
    from trnsim.spec.schema import Spec

    mi = msgspec.inspect
    found: dict[type, str] = {}
    _structs(mi.type_info(Spec), "", found)
    texts = _fields()
    problems = [f"{name} (no such struct)" for name in set(texts) - {cls.__name__ for cls in found}]

    def link(cls: type) -> str:
        return f"mapping: [{found[cls] or 'top level'}](#{_anchor_of(cls.__name__)})"

    sections = []
    for cls, path in found.items():
        entries = texts.get(cls.__name__, {})
        names = [field.name for field in mi.type_info(cls).fields]
        problems += [f"{cls.__name__}.{name} (undocumented)" for name in names if name not in entries]
        problems += [f"{cls.__name__}.{name} (no such field)" for name in entries if name not in names]
        rows = []
        for field in mi.type_info(cls).fields:
            entry = entries.get(field.name, "")
            entry = entry if isinstance(entry, dict) else {"text": entry}
            unit = entry.get("unit") or next(
                (u for s, u in SUFFIX_UNITS.items() if field.name.endswith(s)), ""
            )
            kind, rules = _describe(field.type, link)
            rows.append(
                Row(field.name, kind, unit, _default(field), "; ".join(rules), _linkify(entry["text"]))
            )
        sections.append(Section(cls.__name__, path, _summary(cls), rows))
    if problems:
        raise ValueError(
            f"{FIELDS}: describe every schema field, and only those: {', '.join(sorted(problems))}"
        )
    return sections


def _cell(text: str) -> str:
    return text.replace("|", "\\|") if text else ""


def schema_reference() -> str:
    """The markdown of every section's table."""
    out = []
    for section in schema_sections():
        title = f"`{section.path}`" if section.path else "Top level"
        out.append(f"### {title} {{#{_anchor_of(section.struct)}}}\n")
        out.append(f"{section.summary} Read into `trnsim.spec.schema.{section.struct}`.\n")
        out.append("| key | type | unit | default | constraints | meaning |")
        out.append("|---|---|---|---|---|---|")
        for row in section.rows:
            cells = [f"`{row.key}`", row.type, row.unit, row.default, row.constraints, row.text]
            out.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
        out.append("")
    return "\n".join(out)


def _anchor_of(struct: str) -> str:
    return f"section-{struct.lower()}"


def _command_paths() -> list[tuple[str, ...]]:

    from trnsim.cli.app import command_tree

    found: list[tuple[str, ...]] = []

    def walk(command, path):
        found.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))

    walk(command_tree(), ())
    return found


def _help(path: tuple[str, ...]) -> str:
    env = {**os.environ, "COLUMNS": "100", "TERM": "dumb", "NO_COLOR": "1"}
    env.pop("FORCE_COLOR", None)
    result = subprocess.run(
        [sys.executable, "-m", "trnsim", *path, "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"trnsim {' '.join(path)} --help exited {result.returncode}: {result.stderr}")
    return "\n".join(line.rstrip() for line in result.stdout.strip("\n").splitlines())


def command_reference() -> str:
    """Every command's ``--help``, as the CLI prints it 100 columns wide."""
    paths = _command_paths()
    with ThreadPoolExecutor(max_workers=4) as pool:
        helps = list(pool.map(_help, paths))
    out = []
    for path, text in zip(paths, helps, strict=True):
        title = " ".join(("trnsim", *path))
        level = "##" if len(path) <= 1 else "###"
        out.append(f"{level} `{title}`\n\n```text\n{text}\n```\n")
    return "\n".join(out)


def module_list(package: Path | None = None) -> str:
    """Every module of trnsim, layer by layer, with the first line of its docstring (read with ast,
    not imported: the list follows the code as modules are added, split or moved)."""
    import ast

    package = package or Path(__import__("trnsim").__file__).parent
    out = []
    for layer in LAYERS:
        folder = package / layer if layer else package
        paths = sorted(folder.rglob("*.py")) if layer else sorted(folder.glob("*.py"))
        out.append(f"**`{'trnsim/' + layer if layer else 'trnsim/*.py'}`**\n")
        out.append("| module | what it holds |")
        out.append("|---|---|")
        for path in paths:
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            first = re.sub(r"\s+", " ", doc.split("\n\n")[0]).replace("``", "`").replace("|", "\\|")
            first = re.sub(r":(?:mod|func|class|data|meth):`~?([^`]+)`", r"`\1`", first)
            out.append(f"| `{path.relative_to(package.parent)}` | {first} |")
        out.append("")
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 (mkdocs' signature)
    if SCHEMA_MARK in markdown:
        markdown = markdown.replace(SCHEMA_MARK, schema_reference())
    if MODULES_MARK in markdown:
        markdown = markdown.replace(MODULES_MARK, module_list())
    if COMMANDS_MARK in markdown:
        markdown = markdown.replace(COMMANDS_MARK, command_reference())
    return markdown


def on_page_content(html: str, page, config, files) -> str:  # noqa: ARG001 (mkdocs' signature)
    # the docstrings cross-reference in Sphinx's roles (:func:`x`), which mkdocstrings prints as
    # written: keep the name, drop the role
    return re.sub(r":(?:func|mod|class|data|meth|attr|exc):(<code>)", r"\1", html)
