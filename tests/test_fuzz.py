"""Fuzz the command line: mutated topology files, odd option values, Rich markup in user text and
corrupt baselines, each run held to the CLI's contract (see tests/fuzz_cases.py).

The default run is derandomized and small (a few hundred CLI runs, part of ``make test``);
``make fuzz`` runs thousands with random seeds, records every failure class instead of stopping at
the first, and writes a report with one reproducer per class. Knobs: TRNSIM_FUZZ_EXAMPLES (per test),
TRNSIM_FUZZ_RANDOM=1, TRNSIM_FUZZ_KEEP_GOING=1, TRNSIM_FUZZ_REPORT=FILE, TRNSIM_FUZZ_TIMEOUT.

Most cases run in this process (fast): a SIGALRM limit per case, an address-space cap so that a
memory bomb fails fast, and a faulthandler watchdog for a case stuck in C code. The few that may
crash the interpreter (thousands of nested brackets, alias bombs) or block in a system call (a FIFO,
/dev/zero) run as ``python -m trnsim`` in a child process with limits.
"""

import contextlib
import itertools
import json
import math
import os
import re
import sys
from pathlib import Path

import fuzz_cases as fc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGALRM and resource limits are POSIX")


def fuzz_settings(default: int, scale: float = 1.0, minimum: int = 1):
    """Hypothesis settings: fixed examples by default (reproducible CI), random with TRNSIM_FUZZ_RANDOM."""
    common = {
        "max_examples": fc.examples(default, scale, minimum),
        "deadline": None,  # each case has its own time limit, enforced by the runner
        "suppress_health_check": list(HealthCheck),
        "print_blob": True,
    }
    if fc.RANDOM:
        return settings(**common)
    return settings(derandomize=True, database=None, **common)


_counter = itertools.count()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module", autouse=True)
def fuzz_tally(request):
    """Print the tally of outcomes and failure classes after the module (and write the report)."""
    yield
    text = fc.RECORDER.summary()
    if fc.REPORT:
        fc.RECORDER.write_report(Path(fc.REPORT))
        text += f"\nfuzz report written to {fc.REPORT}"
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        print("\n" + fc.printable(text))


def write_case(workdir: Path, data: bytes, name: str | None = None, suffix: str = ".yaml") -> Path:
    path = workdir / (name or f"case-{next(_counter):05d}{suffix}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


# ---------------------------------------------------------------------------------------------------
# Strategies: values
# ---------------------------------------------------------------------------------------------------

TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=16)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.sampled_from(fc.EXTREME_NUMBERS),
    TEXT,
    st.sampled_from(fc.MARKUP),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.one_of(TEXT, st.integers(-5, 5), st.booleans()), inner, max_size=3)
    ),
    max_leaves=6,
)
UNKNOWN_KEYS = st.one_of(
    st.sampled_from(["nmae", "Name", "racks", "extra", "<<", "?", "-", "", " ", "[/]", "__class__", "é"]),
    TEXT,
)


def choose(draw, items):
    """One of ``items`` (None when there is none: an op then leaves the document alone)."""
    items = list(items)
    return draw(st.sampled_from(items)) if items else None


def _fmt(path) -> str:
    return ".".join(map(str, path)) or "(root)"


# ---------------------------------------------------------------------------------------------------
# Mutations of a parsed document (each records what it did in ``steps``)
# ---------------------------------------------------------------------------------------------------


def op_delete(draw, doc, steps):
    path = choose(draw, [p for p in fc.paths_of(doc) if p])
    if path is None:
        return doc
    steps.append(f"delete {_fmt(path)}")
    return fc.delete_at(doc, path)


def op_unknown_key(draw, doc, steps):
    path = choose(draw, [p for p in fc.paths_of(doc) if isinstance(fc.get_at(doc, p), dict)])
    if path is None:
        return doc
    key, value = draw(UNKNOWN_KEYS), draw(VALUES)
    fc.get_at(doc, path)[key] = value
    steps.append(f"add {_fmt((*path, key))} = {value!r}")
    return doc


def op_retype(draw, doc, steps):
    path = draw(st.sampled_from(list(fc.paths_of(doc))))
    value = draw(VALUES)
    steps.append(f"set {_fmt(path)} = {value!r}")
    return fc.set_at(doc, path, value)


def op_extreme(draw, doc, steps):
    numeric = [
        p
        for p in fc.paths_of(doc)
        if isinstance(fc.get_at(doc, p), int | float) and not isinstance(fc.get_at(doc, p), bool)
    ]
    path = choose(draw, numeric or [p for p in fc.paths_of(doc) if p])
    if path is None:
        return doc
    value = draw(st.sampled_from(fc.EXTREME_NUMBERS))
    steps.append(f"set {_fmt(path)} = {value!r}")
    return fc.set_at(doc, path, value)


def op_nest(draw, doc, steps):
    path = choose(draw, [p for p in fc.paths_of(doc) if p])
    if path is None:
        return doc
    depth = draw(st.integers(1, 60))
    as_list = draw(st.booleans())
    value = fc.get_at(doc, path)
    for _ in range(depth):
        value = [value] if as_list else {"a": value}
    steps.append(f"nest {_fmt(path)} {depth} deep in {'lists' if as_list else 'mappings'}")
    return fc.set_at(doc, path, value)


def op_alias(draw, doc, steps):
    """Make two places share one object: the YAML text gets an anchor and an alias."""
    paths = list(fc.paths_of(doc))
    source, target = draw(st.sampled_from(paths)), draw(st.sampled_from([p for p in paths if p] or [()]))
    if not target:
        return doc
    try:
        fc.set_at(doc, target, fc.get_at(doc, source))
    except (KeyError, IndexError, TypeError):
        return doc
    steps.append(f"alias {_fmt(target)} -> {_fmt(source)}")
    return doc


def op_bomb(draw, doc, steps):
    """A small "billion laughs" (at most ~200,000 leaves once expanded: safe in this process)."""
    width = draw(st.integers(2, 10))
    depth = draw(st.integers(1, max(1, int(math.log(200_000) / math.log(width)))))
    kind = draw(st.sampled_from(["list", "map"]))
    paths = [p for p in fc.paths_of(doc) if p] + [("bomb",)]
    path = draw(st.sampled_from(paths))
    if path == ("bomb",) and not isinstance(doc, dict):
        return doc
    steps.append(f"alias bomb {width}^{depth} ({kind}) at {_fmt(path)}")
    return fc.set_at(doc, path, fc.bomb(width, depth, kind))


def op_self_reference(draw, doc, steps):
    path = choose(draw, [p for p in fc.paths_of(doc) if p])
    if path is None:
        return doc
    loop: list = []
    loop.append(loop)
    steps.append(f"set {_fmt(path)} = &a [*a]")
    return fc.set_at(doc, path, loop)


def op_markup(draw, doc, steps):
    path = choose(draw, [p for p in fc.paths_of(doc) if p and isinstance(fc.get_at(doc, p), str)])
    if path is None:
        return doc
    value = draw(st.sampled_from(fc.MARKUP))
    steps.append(f"set {_fmt(path)} = {value!r}")
    return fc.set_at(doc, path, value)


OPTIONAL_SECTIONS = [
    ("scale_out",),
    ("switched", "node_local"),
    ("switched", "cross_rack"),
    ("switched", "switch_fabric"),
    ("latency", "switch_ns"),
    ("latency", "node_switch_ns"),
    ("torus", "hypercube_plane"),
    ("torus", "server_axis"),
    ("chip", "active_lanes"),
]
PLAUSIBLE_NUMBERS = [1, 2, 3, 5, 7, 16, 64, 0.001, 1e-9, 1e6, 1e9, 0.5]
ENUMS = {
    "medium": ["pcb", "backplane", "copper", "aec", "optics"],
    "kind": ["torus", "switched", "direct", "switches"],
    "wrap": [True, False],
}


def op_tweak(draw, doc, steps):
    """A change that keeps the file plausible, so that it reaches the builders and the engine: another
    positive number, a flipped flag, another enum value, an optional section dropped."""
    choice = draw(st.sampled_from(["number", "enum", "drop"]))
    if choice == "drop":
        present = [p for p in OPTIONAL_SECTIONS if _has(doc, p)]
        path = choose(draw, present)
        if path is not None:
            steps.append(f"drop {_fmt(path)}")
            return fc.delete_at(doc, path)
        return doc
    if choice == "enum":
        path = choose(draw, [p for p in fc.paths_of(doc) if p and str(p[-1]) in ENUMS])
        if path is None:
            return doc
        value = draw(st.sampled_from(ENUMS[str(path[-1])]))
    else:
        numeric = [
            p
            for p in fc.paths_of(doc)
            if isinstance(fc.get_at(doc, p), int | float) and not isinstance(fc.get_at(doc, p), bool)
        ]
        path = choose(draw, numeric)
        if path is None:
            return doc
        whole = isinstance(fc.get_at(doc, path), int)  # counts stay small: huge ones have their own test
        value = draw(st.sampled_from([1, 2, 3, 5, 7, 16, 64] if whole else PLAUSIBLE_NUMBERS))
    steps.append(f"set {_fmt(path)} = {value!r}")
    return fc.set_at(doc, path, value)


def _has(doc, path) -> bool:
    try:
        fc.get_at(doc, path)
    except (KeyError, IndexError, TypeError):
        return False
    return True


DOC_OPS = [
    op_tweak,
    op_tweak,
    op_delete,
    op_unknown_key,
    op_retype,
    op_extreme,
    op_nest,
    op_alias,
    op_bomb,
    op_self_reference,
    op_markup,
]


# ---------------------------------------------------------------------------------------------------
# Mutations of the YAML text
# ---------------------------------------------------------------------------------------------------


def tx_duplicate_key(draw, data, steps):
    lines = data.split(b"\n")
    i = choose(
        draw, [i for i, line in enumerate(lines) if b":" in line and not line.lstrip().startswith(b"#")]
    )
    if i is None:
        return data
    lines.insert(i + 1, lines[i])
    steps.append(f"duplicate line {i + 1}: {lines[i][:60]!r}")
    return b"\n".join(lines)


def tx_truncate(draw, data, steps):
    cut = draw(st.integers(0, max(0, len(data) - 1)))
    steps.append(f"truncate at byte {cut}")
    return data[:cut]


def tx_bytes(draw, data, steps):
    at = draw(st.integers(0, len(data)))
    junk = draw(st.binary(min_size=1, max_size=8))
    steps.append(f"insert {junk!r} at byte {at}")
    return data[:at] + junk + data[at:]


def tx_snippet(draw, data, steps):
    snippet = draw(st.sampled_from(fc.ODD_SNIPPETS)).encode()
    first = draw(st.booleans())
    steps.append(f"{'prepend' if first else 'append'} {snippet!r}")
    return snippet + data if first else data.rstrip(b"\n") + b"\n" + snippet


def tx_deep(draw, data, steps):
    """Nest a value a few hundred to 1,500 levels deep (deeper runs only in a child: it may crash)."""
    depth = draw(st.integers(65, 1500))
    kind = draw(st.sampled_from(["[", "{"]))
    steps.append(f"description: {depth} levels of {kind}")
    return (
        data.rstrip(b"\n")
        + b"\ndeep_"
        + str(depth).encode()
        + b": "
        + fc.nested(depth, kind).encode()
        + b"\n"
    )


def tx_whole(draw, data, steps):
    choices = {
        "empty": b"",
        "only a comment": b"# nothing here\n",
        "byte order mark": b"\xef\xbb\xbf" + data,
        "CRLF line ends": data.replace(b"\n", b"\r\n"),
        "a list document": b"- a\n- b\n",
        "a scalar document": b"just text\n",
        "two documents": data + b"\n---\n" + data,
        "NUL bytes": b"\x00" * 16,
        "UTF-16": data.decode("utf-8", "replace").encode("utf-16"),
        "tabs for indentation": data.replace(b"  ", b"\t"),
        "number document": b"1e400\n",
        "null document": b"~\n",
    }
    name = draw(st.sampled_from(sorted(choices)))
    steps.append(f"whole file: {name}")
    return choices[name]


TEXT_OPS = [tx_duplicate_key, tx_truncate, tx_bytes, tx_snippet, tx_deep, tx_whole]


# ---------------------------------------------------------------------------------------------------
# Huge counts (valid files otherwise, so that they reach the builders)
# ---------------------------------------------------------------------------------------------------


def op_huge(draw, doc, steps):
    if doc.get("kind") == "torus":
        torus = doc["torus"]
        choice = draw(st.sampled_from(["axis size", "many axes", "lanes"]))
        if draw(st.booleans()):
            torus.pop("hypercube_plane", None)
            torus.pop("server_axis", None)
            steps.append("drop hypercube_plane and server_axis")
        if choice == "axis size":
            i = draw(st.integers(0, len(torus["axes"]) - 1))
            size = draw(st.sampled_from([10**9, 10**6, 100000, 65536, 4096, 2**31, 2**63]))
            torus["axes"][i]["size"] = size
            steps.append(f"torus.axes.{i}.size = {size}")
        elif choice == "many axes":
            count, size = draw(st.sampled_from([8, 20, 32, 64])), draw(st.sampled_from([2, 3, 4]))
            torus["axes"] += [{"name": f"a{j}", "size": size, "lanes": 1} for j in range(count)]
            steps.append(f"add {count} axes of size {size}")
        else:
            value = draw(st.sampled_from([10**12, 2**63, 10**9]))
            doc["chip"]["lanes"] = value
            torus["axes"][0]["lanes"] = value
            steps.append(f"chip.lanes = torus.axes.0.lanes = {value}")
        return doc
    switched = doc["switched"]
    choice = draw(
        st.sampled_from(["racks", "nodes_per_rack", "slots", "switches_per_plane", "node switches", "planes"])
    )
    big = draw(st.sampled_from([100000, 1000, 2**20, 10**9, 10**12]))
    if choice == "racks":
        switched["racks"] = big if big % 2 == 0 else big + 1
        steps.append(f"switched.racks = {switched['racks']}")
    elif choice == "nodes_per_rack":
        switched["nodes_per_rack"] = big
        steps.append(f"switched.nodes_per_rack = {big}")
    elif choice == "slots":
        count = draw(st.sampled_from([1000, 10000, 100000]))
        switched["slots"] = switched["slots"] + [f"s{j}" for j in range(count)]
        steps.append(f"add {count} slots")
    elif choice == "switches_per_plane" and switched.get("switch_fabric"):
        switched["switch_fabric"]["switches_per_plane"] = big
        steps.append(f"switched.switch_fabric.switches_per_plane = {big}")
    elif choice == "node switches" and switched.get("node_local"):
        switched["node_local"]["switches"] = big
        switched["node_local"]["kind"] = "switches"
        switched["node_local"].setdefault("switch_model", next(iter(doc.get("switch_models") or {"x": 0})))
        steps.append(f"switched.node_local.switches = {big}")
    elif choice == "planes" and switched.get("switch_fabric"):
        count = draw(st.sampled_from([1000, 10000]))
        slots = switched["slots"]
        switched["switch_fabric"]["planes"] = [{"name": f"p{j}", "slots": slots} for j in range(count)]
        steps.append(f"{count} switch planes over every slot")
    else:
        switched["racks"] = 100000
        steps.append("switched.racks = 100000")
    return doc


# ---------------------------------------------------------------------------------------------------
# Commands run on a topology file
# ---------------------------------------------------------------------------------------------------

FORMATS = ["table", "json", "csv", "markdown"]
FILE_COMMANDS = [
    (["topo", "validate", "{F}"], True),
    (["topo", "show", "--topology", "{F}"], True),
    (["topo", "hops", "--topology", "{F}"], True),
    (["topo", "path", "--topology", "{F}", "0", "1"], True),
    (["topo", "export", "--topology", "{F}", "--format", "json"], False),
    (["topo", "export", "--topology", "{F}", "--format", "astra-sim"], False),
    (["topo", "export", "--topology", "{F}", "--format", "dot"], False),
    (["collective", "allreduce", "--topology", "{F}", "--sizes", "1M"], True),
    (["collective", "alltoall", "--topology", "{F}", "--sizes", "64K,16M"], True),
    (["collective", "allgather", "--topology", "{F}", "--sizes", "1M", "--algo", "all"], True),
    (["compare", "reducescatter", "--topology", "{F}", "--sizes", "1M"], True),
    (["sweep", "--topology", "{F}", "--op", "allreduce", "--sizes", "1M"], True),
]


class FileCase:
    """A mutated topology file and the command to run on it (its repr is the falsifying example)."""

    def __init__(self, steps, data, command, fmt):
        self.steps, self.data, self.command, self.fmt = steps, data, command, fmt

    def argv(self, path: Path) -> list[str]:
        argv = [str(path) if a == "{F}" else a for a in self.command[0]]
        return argv + (["--format", self.fmt] if self.command[1] else [])

    def __repr__(self):
        return f"FileCase({'; '.join(self.steps)} | trnsim {' '.join(self.argv(Path('FILE')))})"


def _dump(doc, steps) -> bytes:
    try:
        return fc.dump_yaml(doc).encode("utf-8")
    except Exception as exc:  # a document yaml cannot write (should not happen): use its repr
        steps.append(f"(yaml.safe_dump failed: {exc!r})")
        return repr(doc).encode("utf-8", "replace")


@st.composite
def file_cases(draw):
    base = draw(st.sampled_from(sorted(fc.DOCUMENTS)))
    doc, steps = fc.fresh(base), [f"from {base}"]
    if draw(st.integers(0, 2)) == 0:  # a third stay plausible, so that they reach the builders and engine
        doc_ops, text_ops = draw(st.lists(st.sampled_from([op_tweak, op_markup]), min_size=1, max_size=3)), []
    else:
        doc_ops = draw(st.lists(st.sampled_from(DOC_OPS), max_size=3))
        text_ops = draw(st.lists(st.sampled_from(TEXT_OPS), max_size=2))
    if not doc_ops and not text_ops:
        doc_ops = [draw(st.sampled_from(DOC_OPS))]
    for op in doc_ops:
        doc = op(draw, doc, steps)
    data = _dump(doc, steps)
    for op in text_ops:
        data = op(draw, data, steps)
    return FileCase(steps, data, draw(st.sampled_from(FILE_COMMANDS)), draw(st.sampled_from(FORMATS)))


@st.composite
def huge_cases(draw):
    base = draw(st.sampled_from(sorted(fc.DOCUMENTS)))
    doc, steps = fc.fresh(base), [f"from {base}"]
    doc = op_huge(draw, doc, steps)
    return FileCase(steps, _dump(doc, steps), draw(st.sampled_from(FILE_COMMANDS)), "table")


def _file_names(path: Path, data: bytes, argv: list[str]) -> list[str]:
    """What an error about a topology file may name: the file, the topology's own name (a refusal such
    as "X cannot be expressed in ASTRA-sim"), or a non-numeric option value given with it."""
    names = [str(path)]
    document = fc.load_yaml(data)
    if isinstance(document, dict) and isinstance(document.get("name"), str) and document["name"].strip():
        names.append(document["name"])
    values = [b for a, b in itertools.pairwise(argv) if a.startswith("-") and a != "--topology"]
    return names + [v for v in values if not v.replace(",", "").isdigit()]


def _run_file_case(test: str, workdir: Path, case: FileCase) -> None:
    path = write_case(workdir, case.data)
    argv = case.argv(path)
    run = fc.run_inprocess(argv)
    names = _file_names(path, case.data, argv)
    user = fc.strings_in(case.data)
    fc.check(test, run, {str(path): case.data}, note=repr(case), names=names, user_strings=user)


@fuzz_settings(120)
@given(case=file_cases())
def test_topology_file_mutations(workdir, case):
    """Catalog files with keys deleted, added, retyped, duplicated, nested, aliased; odd YAML; junk."""
    _run_file_case("file mutations", workdir, case)


@fuzz_settings(20, scale=0.25, minimum=10)
@given(case=huge_cases())
def test_huge_counts(workdir, case):
    """Valid files asking for a huge fabric: refused quickly, not built until memory runs out."""
    _run_file_case("huge counts", workdir, case)


# ---------------------------------------------------------------------------------------------------
# Option values
# ---------------------------------------------------------------------------------------------------


def pool(values, text_weight: int = 3):
    """Mostly the curated odd values, sometimes arbitrary text."""
    return st.one_of(*[st.sampled_from(values)] * text_weight, TEXT)


SIZE_TOKENS = [
    "1",
    "8",
    "0",
    "-1",
    "1K",
    "1M",
    "1G",
    "1T",
    "64KiB",
    "1KB",
    "1.5K",
    "1.5",
    "1e3",
    "1e18",
    "1e300",
    "1e400",
    "1e-3",
    "nan",
    "inf",
    "-inf",
    "99999999999999999999999",
    "8EiB",
    "1 K",
    " ",
    "K",
    "0x10",
    "1_000",
    "[/]",
    "[bold]x",
    "１",
]
STEP_FACTORS = [
    "2",
    "4",
    "1",
    "1.000001",
    "1.0000000001",
    "1e400",
    "inf",
    "nan",
    "0",
    "-2",
    "1e308",
    "1e-300",
    "100",
    "1e9",
    "2.5",
    "x",
]
ALPHAS = [
    "0",
    "-1",
    "1e308",
    "1e-308",
    "nan",
    "inf",
    "-inf",
    "1e400",
    "5e-324",
    "1.7976931348623157e308",
    "1.5",
    "1e30",
    "-0",
    "1e15",
]
RANKS = ["2", "1", "0", "-1", "16", "17", "64", "144", "1e3", "99999999999999999999", "nan", "x", " 2"]
GROUPS = [
    "all",
    "ALL",
    "rack:0",
    "rack:1",
    "rack:99",
    "rack:x",
    "server:2",
    "server:-1",
    "node:x",
    "node:0",
    "tray:5",
    "tray:99999999999999999999",
    "plane:A",
    "plane:[/]",
    "slot:A",
    "slot:0",
    "0-31",
    "31-0",
    "0-1",
    "0,2,5-7",
    "0,0",
    "0-999999999",
    "0-99999999999999999999",
    ",",
    "-",
    "a-b",
    "1",
    "r0.n0.A",
    "r0.n0.A,r0.n0.B",
    "x:y:z",
    ":",
    "[bold]x",
    "tpu [v2]",
]
DTYPES = ["float", "bf16", "half", "double", "int8", "FLOAT", "", "[bold]x", "x" * 300, "float32", "fp8"]
FORMAT_VALUES = ["table", "json", "csv", "markdown", "JSON", "Markdown", "md", "yaml", "", "[/]"]
ALGOS = [
    "auto",
    "all",
    "ring",
    "multiring",
    "kangaring",
    "torus",
    "rdh",
    "tree",
    "mesh",
    "direct",
    "pairwise",
    "bruck",
    "hierarchical",
    "multidim",
    "balanced",
    "RING",
    "nope",
    "[/]",
    "",
]
OPS = ["allreduce", "allgather", "reducescatter", "alltoall"]
ROOT = Path(__file__).resolve().parents[1]
CHUNK_COUNTS = ["1", "7", "1024", "0", "-3", "1000001", "99999999999999999999", "2.5", "nan", "[b]"]
ROUTINGS = [
    "ecmp",
    "single",
    "hash",
    "hash:2",
    "single,no-relay",
    "ecmp,relay",
    "no-relay",
    "hash:0",
    "hash:999",
    "single:3",
    "ECMP",
    "spray",
    "",
    ",",
    "hash,relay,extra",
    "[red]x",
]
MANY_GROUPS = [
    "tray:*",
    "rack:*",
    "plane:*",
    "stride:2",
    "stride:0",
    "blocks:4",
    "0-1;2-3",
    "0-3;2-5",
    "x:*",
    "[b]:*",
    ";",
]
FAILS = [
    "chip:0",
    "chip:5",
    "chip:999",
    "link:0,1",
    "link:0,9",
    "link:xrack:0",
    "link:x:3",
    "lanes:0:17",
    "lanes:0:16:backplane",
    "lanes:0:99999",
    "switch:r0.A.sw0",
    "switch-tray:0",
    "switch-tray:0:0",
    "plane:A:1",
    "cable:3",
    "bogus:1",
    "chip:",
    "[b]chip:0",
    "",
]
SKEWS = ["2", "1.5:4", "1", "0.5", "1e9", "nan", "2:0", "2:999", "x", "", "[b]2"]
DEGREES = ["1", "2", "4", "8", "16", "72", "0", "-1", "3", "99999999", "x"]
LAYOUT_SIZES = ["tp=16M", "ep=64M,tp=1M", "dp=1G", "cp=0", "zz=1M", "tp=", "ep=nan", "tp=[b]1"]
SHAPES = ["4096", "1", "0", "x", "100000000"]
PARAMS = ["70B", "7e9", "1", "0", "lots", "1e30", "nan"]
CALIBRATIONS = [
    "examples/measurements/calibrations/n5-allgather-32r.yaml",
    "examples/measurements/n5-allgather-32r.txt",
    "missing.yaml",
    "topologies/trn2-nl16.yaml",
]
SKU_VALUES = [
    *fc.SKUS,
    "NL16",
    " nl16 ",
    "nl16:set=torus.axes.x.lanes=16",
    "nl72x2:set=latency.switch_ns=50:set=switched.cross_rack.lanes=8",
    "nl16:set=latency.step_ns=.inf",
    "nl16:set=chip.lane_gbps=1e-300",
    "nope",
    "[/]",
    "tpu [v2]",
    "nl16:set=",
    "nl16:set=name=[bold]x",
    ":set=a=b",
    "",
]
SET_VALUES = [
    "1:30",
    "0x10",
    "1e-300",
    "1e300",
    "[/]",
    "nan",
    ".nan",
    ".inf",
    "-.inf",
    "0",
    "-1",
    "1000000000000",
    "true",
    "null",
    "~",
    "''",
    "'[bold]x'",
    "{a: 1}",
    "[1, 2]",
    "0o17",
    "1_000",
    "+1",
    "1e400",
    "-0",
    "2024-01-01",
    "!!binary aGk=",
    "&a [*a]",
    "'tpu [v2]'",
    "[bold]x",
    "16",
    "8",
    "false",
    "backplane",
    "optics",
    "switches",
    "direct",
    "torus",
    "switched",
    "x",
    "",
    "=",
    "a=b",
    "*nope",
    "!!python/object:os.system x",
]
ODD_SET_KEYS = [
    "",
    ".",
    "a..b",
    "torus.axes.99.size",
    "torus.axes.-99.size",
    "name.x",
    "chip.lanes.x",
    "switch_models.new.lanes",
    "=",
    "[/]",
    " chip.lanes",
    "CHIP.LANES",
    "latency",
    "chip",
    "torus",
    "switched",
]
SET_FIELDS = fc.schema_fields()
SET_KEYS = sorted(SET_FIELDS)


TYPED_VALUES = {
    "int": ["1", "2", "3", "8", "16", "64", "0", "-1", "1000000", str(2**31), str(2**63), "1.0", "true"],
    "float": [
        "1e-300",
        "1e300",
        "5e-324",
        "1.7976931348623157e308",
        ".inf",
        "-.inf",
        ".nan",
        "0",
        "-0.0",
        "0.5",
        "1e-9",
        "1e9",
        "-1",
    ],
    "bool": ["true", "false", "yes", "off", "1", "'true'"],
    "str": ["'[/]'", "'[bold]x'", "'tpu [v2]'", "''", "x" * 200, "'nan'", "'inf'", "0", "[]"],
}


def _key_applies(doc, key: str) -> bool:
    """Whether ``key``'s section exists in ``doc`` (list elements by index or by ``name``)."""
    node = doc
    for part in key.split(".")[:-1]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list):
            named = [item for item in node if isinstance(item, dict) and str(item.get("name")) == part]
            if named:
                node = named[0]
            elif part.lstrip("-").isdigit() and -len(node) <= int(part) < len(node):
                node = node[int(part)]
            else:
                return False
        else:
            return False
    return True


def typed_assignments(sku: str):
    """``KEY=VALUE`` for a key of ``sku``'s file with a value of the key's own type (from the schema),
    extremes included: these pass validation and reach the builders and the engine."""
    doc = fc.DOCUMENTS[fc.find_file(sku)]

    def value_for(key):
        kind = SET_FIELDS[key]
        if kind.startswith("enum:"):
            return st.sampled_from([*kind[5:].split("|"), "other"])
        return st.sampled_from(TYPED_VALUES.get(kind, TYPED_VALUES["str"]))

    leaves = [k for k, kind in SET_FIELDS.items() if kind not in ("struct", "list", "dict")]
    keys = st.sampled_from(sorted(k for k in leaves if _key_applies(doc, k)))
    return keys.flatmap(lambda key: value_for(key).map(lambda value: f"{key}={value}"))


def set_assignments():
    key = st.one_of(st.sampled_from(SET_KEYS), st.sampled_from(SET_KEYS), st.sampled_from(ODD_SET_KEYS), TEXT)
    value = st.one_of(
        st.sampled_from(SET_VALUES),
        st.sampled_from(SET_VALUES),
        st.sampled_from([repr(v) for v in fc.EXTREME_NUMBERS]),
        TEXT,
    )
    return st.tuples(key, value).map(lambda kv: f"{kv[0]}={kv[1]}")


class OptionCase:
    def __init__(self, argv, given):
        self.argv, self.given = argv, given  # given: (option, value) pairs drawn for this case

    def __repr__(self):
        import shlex

        return f"OptionCase(trnsim {shlex.join(self.argv)})"


@st.composite
def option_cases(draw):
    command = draw(
        st.sampled_from(
            ["collective"] * 4
            + ["compare"] * 2
            + ["sweep", "topo show", "topo hops", "topo path", "plot", "layout", "faults"]
            + ["cluster fabric", "cluster collective"]
        )
    )
    sku = draw(pool(SKU_VALUES, 6))
    given: list[tuple[str, str]] = []

    def maybe(option, values, weight=3, p=True):
        if p and draw(st.booleans()):
            value = draw(pool(values, weight))
            given.append((option, value))
            return [option, value]
        return []

    if command.startswith("topo"):
        sub = command.split()[1]
        argv = ["topo", sub, sku]
        if sub == "path":
            argv += [
                draw(pool(["0", "1", "143", "999", "-1", "r0.n0.A", "[/]"])),
                draw(pool(["1", "78", "x"])),
            ]
        if sub == "hops" and draw(st.booleans()):
            argv += ["--from", draw(pool(["0", "1", "-1", "99999", "r0.n0.A", "[bold]x"]))]
        for _ in range(draw(st.integers(0, 2))):
            argv += ["--set", draw(set_assignments())]
            given.append(("--set", argv[-1]))
        argv += maybe("--format", FORMAT_VALUES)
        return OptionCase(argv, given)
    if command == "faults":
        argv = ["faults", sku]
        if draw(st.booleans()):
            argv += ["--kind", draw(pool(["chip", "link xrack", "switch tray", "link x", "nope"]))]
        argv += maybe("--op", OPS, p=draw(st.booleans())) + maybe(
            "--sizes", SIZE_TOKENS, p=draw(st.booleans())
        )
        argv += maybe("--blast-radius", ["cuboid", "chip", "node", "rack", "x"], p=draw(st.booleans()))
        argv += maybe(
            "--mttf", ["chip=1e5", "switch=0", "x=1", "chip=nan", "copper link=1e9"], p=draw(st.booleans())
        )
        argv += maybe("--domains", ["1", "100", "0", "x"], p=draw(st.booleans()))
        argv += maybe("--fail", FAILS, p=draw(st.integers(0, 3)) == 0)
        if draw(st.integers(0, 3)) == 0:
            argv += ["--random", draw(pool(["1", "2", "0", "99999"])), "--samples", "2"]
        argv += maybe("--format", FORMAT_VALUES)
        return OptionCase(argv, given)
    if command.startswith("cluster"):
        sub = command.split()[1]
        argv = ["cluster", sub] + ([draw(pool(OPS, 8))] if sub == "collective" else []) + ["--sku", sku]
        argv += maybe(
            "--domains", ["1", "2", "16", "6250", "0", "-3", "x", "99999999"], p=draw(st.integers(0, 4)) > 0
        )
        argv += maybe("--chips", ["64", "400000", "1", "0", "nan"], p=draw(st.integers(0, 3)) == 0)
        for option, values in (
            ("--nic-gbit", ["200", "400", "800", "0", "nan", "1e9", "-1"]),
            ("--port-gbit", ["100", "200", "400", "0", "inf"]),
            ("--tor-tbit", ["12.8", "25.6", "51.2", "0.1", "nan"]),
            ("--fabric-tbit", ["12.8", "25.6", "51.2", "0"]),
            ("--tors-per-rack", ["1", "2", "4", "0", "65"]),
            ("--chips-per-rack", ["16", "32", "72", "0", "7"]),
            ("--design", ["tor", "rail", "x"]),
            ("--oversubscription", ["1", "2", "3", "0.5", "nan"]),
            ("--efa-routing", ["spray", "hash", "x"]),
            ("--hop-us", ["15", "0", "-1", "inf"]),
            ("--switch-layers", ["2", "3", "4", "0", "9"]),
        ):
            argv += maybe(option, values, p=draw(st.integers(0, 3)) == 0)
        if sub == "collective":
            argv += maybe("--sizes", SIZE_TOKENS, p=draw(st.booleans()))
            argv += maybe(
                "--inter-algo",
                ["auto", "ring", "rdh", "tree", "pairwise", "direct", "x"],
                p=draw(st.booleans()),
            )
            argv += maybe("--intra-algo", ALGOS, p=draw(st.integers(0, 3)) == 0)
            if draw(st.booleans()):
                argv += ["--no-overlap"]
        for _ in range(draw(st.integers(0, 1))):
            argv += ["--set", draw(set_assignments())]
            given.append(("--set", argv[-1]))
        argv += maybe("--format", FORMAT_VALUES)
        return OptionCase(argv, given)
    if command == "layout":
        argv = ["layout", "--sku", sku]
        if draw(st.booleans()):  # a layout that fits any SKU, so that the later options are reached
            argv += ["--group", "0-7", "--tp", "2", "--ep", "4", "--size", "ep=1M,tp=64K"]
        for option in ("--tp", "--cp", "--ep", "--dp", "--pp"):
            argv += maybe(option, DEGREES, p=draw(st.integers(0, 2)) == 0)
        argv += maybe("--size", LAYOUT_SIZES, p=draw(st.integers(0, 2)) == 0) + maybe(
            "--order", ["ep,tp", "tp,ep", "tp", "dp,tp,ep", ",", "x"]
        )
        for option in ("--hidden", "--tokens", "--topk", "--experts", "--layers", "--micro-batches"):
            argv += maybe(option, SHAPES, p=draw(st.integers(0, 3)) == 0)
        argv += maybe("--params", PARAMS, p=draw(st.integers(0, 2)) == 0)
        argv += maybe("--skew", SKEWS, p=draw(st.booleans())) + maybe("--dtype", DTYPES)
        argv += maybe("--routing", ROUTINGS, p=draw(st.booleans()))
        if draw(st.integers(0, 2)) == 0:
            argv += maybe("--group", GROUPS)
        if draw(st.booleans()):
            argv += ["--compare-mappings"]
        argv += maybe("--format", FORMAT_VALUES)
        return OptionCase(argv, given)
    op = draw(pool(OPS, 8))
    if command == "sweep":
        argv = ["sweep", "--sku", sku, "--op", op]
    else:
        argv = [command, op, "--sku", sku] if command != "collective" else ["collective", op, "--sku", sku]
    if command in ("compare", "plot") and draw(st.booleans()):
        argv += ["--sku", draw(pool(SKU_VALUES, 6))]
    if draw(st.booleans()):
        argv += maybe(
            "--sizes", [",".join(draw(st.lists(st.sampled_from(SIZE_TOKENS), min_size=1, max_size=4)))]
        )
    else:
        argv += maybe("-b", SIZE_TOKENS) + maybe("-e", SIZE_TOKENS) + maybe("-f", STEP_FACTORS)
    if draw(st.booleans()):
        argv += maybe("--group", GROUPS)
    else:
        argv += maybe("--ranks", RANKS)
    argv += maybe("--dtype", DTYPES) + maybe("--alpha-us", ALPHAS) + maybe("--algo", ALGOS)
    argv += maybe("--max-chunks", CHUNK_COUNTS) + maybe("--min-chunk", SIZE_TOKENS)
    argv += maybe("--routing", ROUTINGS)
    if draw(st.integers(0, 3)) == 0:
        argv += maybe("--fail", FAILS)
    if draw(st.integers(0, 5)) == 0:
        argv += maybe("--calibration", [str(ROOT / c) for c in CALIBRATIONS])
    if command in ("collective", "compare", "sweep") and draw(st.integers(0, 3)) == 0:
        argv += maybe("--groups", MANY_GROUPS)
    if command in ("collective", "compare") and draw(st.integers(0, 2)) == 0:
        argv += maybe("--skew", SKEWS)
    if command == "collective" and draw(st.booleans()):
        argv += ["--explain"]
    for _ in range(draw(st.integers(0, 1))):
        argv += ["--set", draw(set_assignments())]
        given.append(("--set", argv[-1]))
    if command == "plot":
        argv += ["--terminal"]
    else:
        argv += maybe("--format", FORMAT_VALUES)
    if command in ("compare", "sweep"):
        argv += maybe("--metric", ["busbw", "time", "efficiency", "BUSBW", "nope"])
    return OptionCase(argv, given)


def _names(argv, given) -> list[str]:
    """What an error line may name: an option or a value that was given (raw or as its repr)."""
    names = {option for option, _ in given}
    for _option, value in given:
        names |= {value, repr(value)[1:-1]} if value.strip() else set()
        for part in value.replace("=", ",").split(","):
            if part.strip():
                names |= {part.strip(), repr(part.strip())[1:-1]}
    names |= {a for a in argv if a.startswith("-")}
    names |= {a for a in argv[1:] if a not in fc._COMMAND_WORDS and a.strip()}
    names |= {repr(a) for a in argv if not a.strip()}  # an empty value is named as ''
    names |= {p for p in fc.user_strings_of(argv[1:]) if len(p.strip()) > 1}  # NAME:set=K=V pieces
    return sorted(n for n in names if n)


@fuzz_settings(100)
@given(case=option_cases())
def test_option_mutations(case):
    """--sizes, -b/-e/-f, --alpha-us, --set, --group/--ranks, --dtype, --algo, --format, SKUs, what-ifs."""
    run = fc.run_inprocess(case.argv)
    user = fc.user_strings_of(case.argv)
    fc.check("options", run, note=repr(case), names=_names(case.argv, case.given), user_strings=user)


@st.composite
def set_cases(draw):
    sku = draw(st.sampled_from(fc.SMALL_SKUS + ["nl72x2"]))
    typed = draw(st.booleans())  # half the cases keep each value's type: they pass validation
    sets = draw(st.lists(typed_assignments(sku) if typed else set_assignments(), min_size=1, max_size=3))
    form = draw(st.sampled_from(["topo show", "collective", "compare what-if", "topo validate-like hops"]))
    if form == "topo show":
        argv = ["topo", "show", sku]
        for text in sets:
            argv += ["--set", text]
    elif form == "collective":
        argv = ["collective", draw(st.sampled_from(OPS)), "--sku", sku, "--sizes", "64K,16M"]
        for text in sets:
            argv += ["--set", text]
    elif form == "compare what-if":
        argv = [
            "compare",
            draw(st.sampled_from(OPS)),
            "--sku",
            sku,
            "--sku",
            sku + "".join(f":set={s}" for s in sets),
        ]
        argv += ["--sizes", "1M"]
    else:
        argv = ["topo", "hops", sku]
        for text in sets:
            argv += ["--set", text]
    argv += ["--format", draw(st.sampled_from(FORMATS))]
    return OptionCase(argv, [("--set", s) for s in sets])


@fuzz_settings(60)
@given(case=set_cases())
def test_set_overrides(case):
    """--set KEY=VALUE (and NAME:set=KEY=VALUE what-ifs) with schema keys and odd values."""
    run = fc.run_inprocess(case.argv)
    user = fc.user_strings_of(case.argv)
    fc.check("--set", run, note=repr(case), names=_names(case.argv, case.given), user_strings=user)


# ---------------------------------------------------------------------------------------------------
# Rich markup in user text: a differential test
# ---------------------------------------------------------------------------------------------------

_NEUTRAL = str.maketrans({"[": "(", "]": ")"})
_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_SHA256 = re.compile(r"\b[0-9a-f]{64}\b")


def _comparable(text: str) -> str:
    """Output with what may differ between the bracketed and the neutral run blanked out: Markdown's
    backslash escapes (``\\[`` but plain ``(``), files' content hashes; brackets become parentheses."""
    return _SHA256.sub("SHA256", _MD_ESCAPE.sub(r"\1", text)).translate(_NEUTRAL)


MARKUP_TEXT = st.one_of(
    st.sampled_from(fc.MARKUP),
    st.sampled_from(fc.MARKUP),
    st.text(st.sampled_from("[]/\\ab =:#"), min_size=1, max_size=10).filter(lambda s: "[" in s or "]" in s),
)


def _rename(doc, where: str, text: str) -> None:
    """Put ``text`` into a topology document as a name (keeping cross-references consistent)."""
    if where == "name":
        doc["name"] = text
    elif where == "alias":
        doc["aliases"] = [text, *doc.get("aliases", [])]
    elif where == "chip name":
        doc["chip"]["name"] = text
    elif where == "description":
        doc["description"] = text
    elif where == "axis name" and doc["kind"] == "torus":
        old = doc["torus"]["axes"][0]["name"]
        doc["torus"]["axes"][0]["name"] = text
        torus = doc["torus"]
        if torus.get("server_axis") == old:
            torus["server_axis"] = text
        if torus.get("hypercube_plane"):
            torus["hypercube_plane"] = [text if n == old else n for n in torus["hypercube_plane"]]
    elif where == "slot name" and doc["kind"] == "switched":
        switched = doc["switched"]
        old = switched["slots"][0]
        switched["slots"][0] = text
        for plane in (switched.get("switch_fabric") or {}).get("planes", []):
            plane["slots"] = [text if s == old else s for s in plane["slots"]]
    elif where == "switch model" and doc.get("switch_models"):
        old = sorted(doc["switch_models"])[0]
        doc["switch_models"][text] = doc["switch_models"].pop(old)
        for section in ("switch_fabric", "node_local"):
            part = (doc.get("switched") or {}).get(section) or {}
            if part.get("switch_model") == old:
                part["switch_model"] = text
    else:
        doc["name"] = text


MARKUP_COMMANDS = [
    ["topo", "validate", "{F}"],
    ["topo", "show", "--topology", "{F}"],
    ["topo", "hops", "--topology", "{F}"],
    ["topo", "path", "--topology", "{F}", "0", "5"],
    ["topo", "export", "--topology", "{F}", "--format", "dot"],
    ["collective", "allreduce", "--topology", "{F}", "--sizes", "1M"],
    ["collective", "alltoall", "--topology", "{F}", "--sizes", "1M", "--algo", "all"],
    ["compare", "allreduce", "--topology", "{F}", "--sizes", "1M"],
]


@st.composite
def markup_cases(draw):
    text = draw(MARKUP_TEXT)
    where = draw(
        st.sampled_from(
            [
                "file name",
                "name",
                "alias",
                "chip name",
                "description",
                "axis name",
                "slot name",
                "switch model",
                "--set name",
                "what-if label",
                "option value",
            ]
        )
    )
    base = draw(st.sampled_from(sorted(fc.DOCUMENTS)))
    command = draw(st.sampled_from(MARKUP_COMMANDS))
    fmt = draw(st.sampled_from(["table", "table", "table", "markdown", "csv", "json"]))
    option = draw(st.sampled_from(["--group", "--dtype", "--sku", "--algo", "--sizes", "--alpha-us"]))
    return text, where, base, command, fmt, option


def _markup_argv(workdir: Path, text: str, where: str, base: str, command, fmt, option, tag: str):
    """The argv and files of one side of the differential (``text`` with brackets or neutralised)."""
    doc = fc.fresh(base)
    name = f"{tag}/{text}.yaml" if where == "file name" else f"{tag}/topology.yaml"
    if where not in ("file name", "--set name", "what-if label", "option value"):
        _rename(doc, where, text)
    data = fc.dump_yaml(doc).encode()
    path = write_case(workdir, data, name)
    argv = [str(path) if a == "{F}" else a for a in command]
    quoted = "'" + text.replace("'", "''") + "'"
    if where == "--set name":
        argv += ["--set", f"name={quoted}"]
    elif where == "what-if label":
        argv = ["compare", "allreduce", "--sku", f"nl16:set=description={quoted}", "--sizes", "1M"]
    elif where == "option value":
        argv = ["collective", "allreduce", "--sku", "nl16", "--sizes", "1M", option, text]
    if argv[0] != "topo" or argv[1] != "export":
        argv += ["--format", fmt]
    return argv, {str(path): data}


@fuzz_settings(25)
@given(case=markup_cases())
def test_markup_in_user_text(workdir, case):
    """Names, file names, labels and values with Rich markup ([/], [bold]x, tpu [v2]) are printed
    verbatim: the output equals that of the same run with the brackets replaced by parentheses."""
    text, where, base, command, fmt, option = case
    neutral = text.translate(_NEUTRAL)
    sub = f"mk{next(_counter):05d}"
    argv_a, files_a = _markup_argv(workdir / sub, text, where, base, command, fmt, option, "a")
    argv_b, files_b = _markup_argv(workdir / sub, neutral, where, base, command, fmt, option, "b")
    run_a, run_b = fc.run_inprocess(argv_a), fc.run_inprocess(argv_b)
    extra = []
    for stream in ("out", "err"):
        seen_a = _comparable(
            getattr(run_a, stream).replace(str(workdir / sub / "a"), str(workdir / sub / "b"))
        )
        seen_b = _comparable(getattr(run_b, stream))
        if seen_a != seen_b and not (run_a.timeout or run_a.escaped):
            diff = next(
                (
                    f"{x!r} vs {y!r}"
                    for x, y in zip(seen_a.splitlines(), seen_b.splitlines(), strict=False)
                    if x != y
                ),
                f"{len(seen_a)} vs {len(seen_b)} chars",
            )
            extra.append(
                fc.Failure(
                    "markup",
                    f"{where} in {argv_a[0]} {argv_a[1]} ({'stdout' if stream == 'out' else 'stderr'})",
                    f"{text!r} is not printed verbatim (differs from the run with {neutral!r}): {diff[:300]}",
                )
            )
    note = f"{where}={text!r} base={base}"
    names = [str(p) for p in files_a] + _names(argv_a, [])
    user = [text, *fc.user_strings_of(argv_a), *fc.strings_in(next(iter(files_a.values())))]
    fc.check("markup", run_a, files_a, note=note, extra=extra, names=names, user_strings=user)


# ---------------------------------------------------------------------------------------------------
# Baselines
# ---------------------------------------------------------------------------------------------------

BASELINE_SIZES = "64K,1M"
_SIZES = (65536, 1048576)


@pytest.fixture(scope="module")
def baseline_document(workdir):
    path = workdir / "base.json"
    run = fc.run_inprocess(
        ["compare", "allreduce", "--sku", "nl16", "--sizes", BASELINE_SIZES, "--save-baseline", str(path)]
    )
    assert run.code == 0, run.err
    return json.loads(path.read_text())


def _corrupt_metric(document, metric_key: str) -> str | None:
    """Why a baseline must be refused (exit 2): a row this run checks has a metric that is not a
    positive, finite JSON number. None when the rows this run uses are sound."""
    if not isinstance(document, dict) or document.get("schema") != "trnsim/1":
        return None
    if document.get("kind") != "baseline" or not isinstance(document.get("rows"), list):
        return None
    wanted = {("trn2-nl16", "allreduce", size) for size in _SIZES}
    for row in document["rows"]:
        if not isinstance(row, dict) or metric_key not in row:
            continue
        try:
            key = (row.get("variant"), row.get("op"), row.get("bytes"))
            if key not in wanted:
                continue
        except TypeError:  # an unhashable value: the product refuses such a row or skips it
            continue
        value = row[metric_key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"{metric_key} {value!r} is not a number"
        if not math.isfinite(value) or value <= 0:
            return f"{metric_key} {value!r} is not a finite positive number"
    return None


@st.composite
def baseline_cases(draw, document):
    doc, steps = json.loads(json.dumps(document)), []
    ops = draw(
        st.lists(st.sampled_from([op_delete, op_unknown_key, op_retype, op_extreme, op_markup]), max_size=3)
    )
    focus = draw(st.booleans())
    if draw(st.integers(0, 3)) == 0:  # a sound baseline with a metric scaled: exit 0 or 1, not 2
        ops, focus = [], False
        row = draw(st.integers(0, len(doc["rows"]) - 1))
        key = draw(st.sampled_from(["busbw_gbps", "time_us", "efficiency"]))
        factor = draw(st.sampled_from([0.5, 0.9, 0.96, 1.0, 1.04, 1.1, 2.0]))
        doc["rows"][row][key] *= factor
        steps.append(f"rows[{row}].{key} *= {factor}")
    if focus:  # aim at the metric values themselves
        row = draw(st.integers(0, len(doc["rows"]) - 1))
        key = draw(st.sampled_from(["busbw_gbps", "time_us", "efficiency", "bytes", "variant", "op"]))
        value = draw(st.one_of(st.sampled_from(fc.EXTREME_NUMBERS), VALUES))
        doc["rows"][row][key] = value
        steps.append(f"rows[{row}].{key} = {value!r}")
    for op in ops:
        doc = op(draw, doc, steps)
    data = json.dumps(doc, allow_nan=True).encode()
    if draw(st.integers(0, 5)) == 0:
        data = draw(st.sampled_from([tx_truncate, tx_bytes]))(draw, data, steps)
    metric = draw(st.sampled_from([None, "busbw", "time", "efficiency"]))
    regression = draw(
        st.one_of(st.none(), pool(["5%", "0", "0%", "-1%", "nan", "inf%", "1e400%", "100%", "5"]))
    )
    slower = draw(st.booleans())
    return steps, data, doc, metric, regression, slower


@fuzz_settings(40)
@given(data=st.data())
def test_baseline_files(workdir, baseline_document, data):
    """Baselines that are truncated, malformed, retyped, NaN, zero or negative: exit 0, 1 or 2 as
    the contract says, and a corrupt metric that this run compares is refused (exit 2)."""
    steps, blob, doc, metric, regression, slower = data.draw(baseline_cases(baseline_document))
    path = write_case(workdir, blob, suffix=".json")
    argv = ["compare", "allreduce", "--sku", "nl16", "--sizes", BASELINE_SIZES, "--baseline", str(path)]
    if metric:
        argv += ["--metric", metric]
    if regression is not None:
        argv += ["--max-regression", regression]
    if slower:
        argv += ["--set", "latency.step_ns=3000"]
    run = fc.run_inprocess(argv)
    try:
        parsed = json.loads(blob)
    except ValueError:
        parsed = None
    why = _corrupt_metric(parsed, _metric_key(metric))
    option_error = regression is not None and run.code == 2 and "threshold" in run.err
    fc.check(
        "baselines",
        run,
        {str(path): blob},
        note="; ".join(steps),
        allow_threshold=True,
        names=[str(path), *_names(argv, [])],
        expect_exit=2 if why and not option_error else None,
        expect_why=f"baseline {why}" if why else "",
    )


def _metric_key(metric):
    return {"busbw": "busbw_gbps", "time": "time_us", "efficiency": "efficiency", None: "busbw_gbps"}[metric]


# ---------------------------------------------------------------------------------------------------
# Isolated cases: a child process each (a crash, a blocking read or a runaway must not take pytest)
# ---------------------------------------------------------------------------------------------------

ISOLATED_TIMEOUT = min(fc.TIMEOUT, 10.0)
NL16 = (fc.CATALOG_DIR / "trn2-nl16.yaml").read_text()


def _special_cases(workdir: Path):
    workdir.mkdir(parents=True, exist_ok=True)
    fifo = workdir / "topology.fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    deep_list = workdir / "deep-list.yaml"
    deep_list.write_text("name: x\nkind: torus\ndescription: " + fc.nested(100_000) + "\n")
    deep_map = workdir / "deep-map.yaml"
    deep_map.write_text(fc.nested(50_000, "{") + "\n")
    laughs = workdir / "billion-laughs.yaml"
    doc = fc.fresh("trn2-nl16.yaml")
    doc["description"] = fc.bomb(9, 9)
    laughs.write_text(fc.dump_yaml(doc))
    laughs_map = workdir / "billion-laughs-map.yaml"
    doc = fc.fresh("trn3-nl32x2-gen1.yaml")
    doc["switch_models"] = fc.bomb(9, 9, "map")
    laughs_map.write_text(fc.dump_yaml(doc))
    big = workdir / "big.yaml"
    big.write_text(NL16.replace("description: ", "description: " + "x" * (16 << 20) + " ", 1))
    huge = workdir / "racks-100000.yaml"
    doc = fc.fresh("trn3-nl72x2-gen1.yaml")
    doc["switched"]["racks"] = 100000
    huge.write_text(fc.dump_yaml(doc))
    bad_name = os.fsencode(workdir) + b"/\xff\xfe.yaml"
    with open(bad_name, "w") as handle:
        handle.write("name: [\n")
    compare = ["compare", "allreduce", "--sku", "nl16", "--sizes", "1M"]
    collective_nl16 = ["collective", "allreduce", "--sku", "nl16", "--sizes", "1M"]
    return {
        "dev-zero": ["topo", "validate", "/dev/zero"],
        "dev-zero-collective": ["collective", "allreduce", "--topology", "/dev/zero", "--sizes", "1M"],
        "dev-urandom": ["topo", "show", "--topology", "/dev/urandom"],
        "dev-stdin-empty": ["topo", "show", "--topology", "/dev/stdin"],
        "fifo": ["topo", "validate", str(fifo)],
        "fifo-baseline": [*compare, "--baseline", str(fifo)],
        "dev-zero-baseline": [*compare, "--baseline", "/dev/zero"],
        "directory": ["topo", "validate", str(workdir)],
        "deep-list-100000": ["topo", "validate", str(deep_list)],
        "deep-mapping-50000": ["topo", "show", "--topology", str(deep_map)],
        "billion-laughs-list": ["topo", "validate", str(laughs)],
        "billion-laughs-map": ["collective", "allreduce", "--topology", str(laughs_map), "--sizes", "1M"],
        "16MiB-file": ["topo", "validate", str(big)],
        "racks-100000": ["topo", "show", "--topology", str(huge)],
        "non-utf8-file-name": ["topo", "validate", bad_name],
        "non-utf8-sku": [b"collective", b"allreduce", b"--sku", b"nl\xff16"],
        "non-utf8-set-name": [b"topo", b"show", b"nl16", b"--set", b"name=tpu\xff"],
        "non-utf8-group": [b"collective", b"allreduce", b"--sku", b"nl16", b"--group", b"\xff"],
        "sizes-1e400": ["collective", "allreduce", "--sku", "nl16", "--sizes", "1e400"],
        "step-factor-1.000001": ["collective", "allreduce", "--sku", "nl16", "-f", "1.000001"],
        "alpha-1e308-json": [*collective_nl16, "--alpha-us", "1e308", "--format", "json"],
    }


@pytest.fixture(scope="module")
def special_cases(workdir):
    return _special_cases(workdir / "special")


SPECIALS = [
    "dev-zero",
    "dev-zero-collective",
    "dev-urandom",
    "dev-stdin-empty",
    "fifo",
    "fifo-baseline",
    "dev-zero-baseline",
    "directory",
    "deep-list-100000",
    "deep-mapping-50000",
    "billion-laughs-list",
    "billion-laughs-map",
    "16MiB-file",
    "racks-100000",
    "non-utf8-file-name",
    "non-utf8-sku",
    "non-utf8-set-name",
    "non-utf8-group",
    "sizes-1e400",
    "step-factor-1.000001",
    "alpha-1e308-json",
]


@pytest.mark.parametrize("name", SPECIALS)
def test_isolated_special_inputs(special_cases, name):
    """Special files, giant nesting, alias bombs, non-UTF-8 arguments: in a child with limits."""
    argv = special_cases[name]
    run = fc.run_isolated(argv, timeout=ISOLATED_TIMEOUT)
    shown = [a.decode("utf-8", "surrogateescape") if isinstance(a, bytes) else a for a in argv]
    run.argv = shown
    names = [a for a in shown[2:] if len(a) > 1] + [os.fsdecode(a) for a in argv if isinstance(a, bytes)]
    fc.check("isolated", run, note=name, names=names, allow_threshold="--baseline" in shown)


@st.composite
def isolated_cases(draw):
    kind = draw(st.sampled_from(["deep", "bomb"]))
    doc = fc.fresh(draw(st.sampled_from(sorted(fc.DOCUMENTS))))
    key = draw(st.sampled_from(["description", "aliases", "name", "new_key", "chip", "whole"]))
    if kind == "deep":
        depth = draw(st.sampled_from([2_000, 5_000, 20_000, 50_000, 120_000]))
        style = draw(st.sampled_from(["[", "{"]))
        value = fc.nested(depth, style)
        label = f"{depth} levels of {style}"
        if key == "whole":
            text = value + "\n"
        else:
            doc.pop(key, None)
            text = fc.dump_yaml(doc) + f"{key}: {value}\n"
    else:
        width = draw(st.integers(2, 12))
        depth = draw(st.integers(int(math.log(2e6) / math.log(width)) + 1, 40))
        style = draw(st.sampled_from(["list", "map"]))
        label = f"alias bomb {width}^{depth} ({style})"
        if key == "whole":
            text = fc.dump_yaml(fc.bomb(width, depth, style))
        else:
            doc[key] = fc.bomb(width, depth, style)
            text = fc.dump_yaml(doc)
    command = draw(st.sampled_from(FILE_COMMANDS[:3] + FILE_COMMANDS[7:8]))
    return f"{label} at {key}", text.encode(), command


@fuzz_settings(4, scale=1 / 40, minimum=4)
@given(case=isolated_cases())
def test_isolated_yaml_attacks(workdir, case):
    """Thousands of nested brackets and alias bombs, random placement: in a child with limits."""
    label, data, command = case
    path = write_case(workdir, data)
    argv = [str(path) if a == "{F}" else a for a in command[0]]
    run = fc.run_isolated(argv, timeout=ISOLATED_TIMEOUT)
    fc.check("isolated", run, {str(path): data}, note=label, names=[str(path)])


# ---------------------------------------------------------------------------------------------------
# At the end: memory stayed bounded; in keep-going mode, fail once with every class found
# ---------------------------------------------------------------------------------------------------


def test_zz_memory_stayed_bounded():
    resource = pytest.importorskip("resource")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peak_mb = peak / 2**20 if sys.platform == "darwin" else peak / 1024
    assert peak_mb < fc.MAX_RSS_MB, f"peak RSS {peak_mb:.0f} MiB exceeds {fc.MAX_RSS_MB} MiB"


@pytest.mark.skipif(not fc.KEEP_GOING, reason="without TRNSIM_FUZZ_KEEP_GOING each test fails on its own")
def test_zz_no_failures_recorded():
    """With TRNSIM_FUZZ_KEEP_GOING=1 the cases only record their failures; report them here."""
    if fc.RECORDER.classes:
        pytest.fail(fc.printable(fc.RECORDER.summary()), pytrace=False)
