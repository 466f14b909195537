"""Reading users' YAML: nothing a file holds can hang, crash or exhaust the process."""

import os
import subprocess
import sys
import time

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from trnsim.errors import ConfigError, UsageError
from trnsim.yamlio import depth_bound, load_yaml


def _file(tmp_path, text, name="t.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_plain_files_load(tmp_path):
    assert load_yaml(_file(tmp_path, "a: [1, 2]\nb: {c: x}\n")) == {"a": [1, 2], "b": {"c": "x"}}


@pytest.mark.parametrize("levels", [100, 3_000, 25_000, 300_000])
def test_deep_nesting_is_refused_before_parsing(tmp_path, levels):
    path = _file(tmp_path, "a: " + "[" * levels + "]" * levels)
    start = time.perf_counter()
    with pytest.raises(
        UsageError, match=r"line 1: the document reaches 65 levels of nesting.*TRNSIM_MAX_YAML_DEPTH"
    ):
        load_yaml(path)
    assert (
        time.perf_counter() - start < 60
    )  # refused, not parsed: a hang would take far longer (a loaded CI machine took 8 s)


def test_deep_block_nesting_is_refused(tmp_path):
    text = "".join(" " * i + f"k{i}:\n" for i in range(200)) + " " * 200 + "x\n"
    with pytest.raises(UsageError, match="levels of nesting"):
        load_yaml(_file(tmp_path, text))


def test_depth_limit_can_be_raised(tmp_path, monkeypatch):
    path = _file(tmp_path, "a: " + "[" * 100 + "]" * 100)
    monkeypatch.setenv("TRNSIM_MAX_YAML_DEPTH", "200")
    assert load_yaml(path) is not None


def test_alias_bomb_is_refused_quickly(tmp_path):
    lines = ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for name, previous in zip("bcdefghi", "abcdefgh", strict=True):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
    start = time.perf_counter()
    with pytest.raises(UsageError, match="YAML nodes once aliases are expanded.*TRNSIM_MAX_YAML_NODES"):
        load_yaml(_file(tmp_path, "\n".join(lines) + "\n"))
    assert time.perf_counter() - start < 2


def test_small_aliases_are_fine(tmp_path):
    data = load_yaml(_file(tmp_path, "m: &m {lanes: 8}\nx: *m\ny: {<<: *m, ports: 2}\n"))
    assert data["x"] == {"lanes": 8} and data["y"] == {"lanes": 8, "ports": 2}


def test_recursive_alias_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="alias \\*a refers to a collection that contains it"):
        load_yaml(_file(tmp_path, "a: &a [1, *a]\n"))


def test_duplicate_and_unhashable_keys_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="key 'a' appears twice"):
        load_yaml(_file(tmp_path, "a: 1\na: 2\n"))
    with pytest.raises(ConfigError, match="a key must be a plain value"):
        load_yaml(_file(tmp_path, "? [1, 2]\n: 3\n"))


def test_special_files_are_refused_without_reading(tmp_path):
    with pytest.raises(ConfigError, match="not a regular file"):
        load_yaml(__import__("pathlib").Path("/dev/zero"))
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="not a regular file"):
        load_yaml(fifo)  # opening a FIFO with no writer would block forever
    with pytest.raises(ConfigError, match="is a folder"):
        load_yaml(tmp_path)
    with pytest.raises(ConfigError, match="no such file"):
        load_yaml(tmp_path / "missing.yaml")


def test_oversized_and_binary_files_are_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("TRNSIM_MAX_FILE_BYTES", "1000")
    with pytest.raises(UsageError, match="the file has 2,000 bytes, more than the limit of 1,000"):
        load_yaml(_file(tmp_path, "#" * 2000))
    monkeypatch.delenv("TRNSIM_MAX_FILE_BYTES")
    path = tmp_path / "b.yaml"
    path.write_bytes(b"a: \xff\xfe\n")
    with pytest.raises(ConfigError, match="not a text file"):
        load_yaml(path)


def test_a_bad_limit_variable_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.setenv("TRNSIM_MAX_YAML_DEPTH", "lots")
    with pytest.raises(UsageError, match="TRNSIM_MAX_YAML_DEPTH='lots': expected a whole number > 0"):
        load_yaml(_file(tmp_path, "a: 1\n"))


@pytest.mark.parametrize("levels", [3_000, 25_000])
def test_cli_survives_deep_files(tmp_path, levels):
    """The process itself: no RecursionError, no SIGSEGV (exit 139), one line, exit 2."""
    path = _file(tmp_path, "name: " + "[" * levels + "]" * levels)
    process = subprocess.run(
        [sys.executable, "-m", "trnsim", "topo", "validate", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert process.returncode == 2, process.stderr
    assert "levels of nesting" in process.stderr and "Traceback" not in process.stderr


def test_a_quote_that_fools_the_lexical_bound_still_gets_trnsims_message(tmp_path):
    """`x 'y` looks like the start of a quoted scalar to the lexical pass and hides the brackets
    after it; libyaml then refuses at its own limit, and the exact measure gives trnsim's message."""
    text = "a: x 'y\nb: " + "[" * 3000 + "]" * 3000 + "\nc: z'\n"
    assert depth_bound(text) < 64  # the lexical pass was fooled
    with pytest.raises(UsageError, match=r"line 2: the document reaches 65 levels.*TRNSIM_MAX_YAML_DEPTH"):
        load_yaml(_file(tmp_path, text))


def test_depth_beyond_libyaml_loads_when_the_limit_is_raised(tmp_path, monkeypatch):
    """libyaml stops at 1,000 levels; with the limit raised, trnsim reads deeper on its own parser
    (up to what Python's stack allows, then one clear line)."""
    monkeypatch.setenv("TRNSIM_MAX_YAML_DEPTH", "5000")
    assert load_yaml(_file(tmp_path, "a: " + "[" * 150 + "]" * 150))["a"] is not None
    with pytest.raises(ConfigError, match="nested too deeply to read|levels"):
        load_yaml(_file(tmp_path, "a: " + "[" * 3000 + "]" * 3000, "deep.yaml"))


def _depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


_SCALARS = st.one_of(
    st.integers(), st.booleans(), st.text(alphabet=" :-?#'\"[]{},ab\n", max_size=8), st.none()
)
_TREES = st.recursive(
    _SCALARS,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text(alphabet="ab-: '", min_size=1, max_size=4), children, max_size=3)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(
    tree=st.dictionaries(st.text(alphabet="ab", min_size=1, max_size=2), _TREES, max_size=3),
    flow=st.sampled_from([True, False, None]),
    indent=st.integers(2, 6),
)
@example(tree={"a": [{"-'": [], "':'": ""}]}, flow=False, indent=2)  # `-'` begins a plain scalar
def test_the_lexical_bound_is_never_below_the_true_depth(tree, flow, indent):
    """Whatever the style PyYAML writes (block, flow, mixed, any indentation, awkward strings)."""
    text = yaml.safe_dump(tree, default_flow_style=flow, indent=indent)
    assert depth_bound(text) >= _depth(tree)


def test_a_text_read_again_is_parsed_once_and_handed_out_as_a_copy(tmp_path, monkeypatch):
    from trnsim import yamlio

    parses = []
    parse = yamlio._parse
    monkeypatch.setattr(yamlio, "_parse", lambda text, where: parses.append(where) or parse(text, where))
    monkeypatch.setattr(yamlio, "_PARSED", {})
    path = tmp_path / "t.yaml"
    path.write_text("a: {b: [1, 2]}\n")
    first = load_yaml(path)
    first["a"]["b"].append(3)  # a caller's edit stays its own
    again = load_yaml(path)
    assert again == {"a": {"b": [1, 2]}} and again is not first and parses == [str(path)]
    path.write_text("a: {b: [1, 3]}\n")  # the same size, new content: parsed, whatever the clock says
    assert load_yaml(path) == {"a": {"b": [1, 3]}} and len(parses) == 2


def test_a_text_kept_under_one_bound_is_checked_again_under_a_lower_one(tmp_path, monkeypatch):
    from trnsim import yamlio

    monkeypatch.setattr(yamlio, "_PARSED", {})
    path = tmp_path / "deep.yaml"
    path.write_text("a: " + "[" * 12 + "]" * 12 + "\n")
    assert load_yaml(path)  # within the default depth, and kept
    monkeypatch.setenv("TRNSIM_MAX_YAML_DEPTH", "5")
    with pytest.raises(UsageError, match="levels of nesting"):
        load_yaml(path)


def test_the_parsed_texts_kept_are_bounded(monkeypatch):
    from trnsim import yamlio

    monkeypatch.setattr(yamlio, "_PARSED", {})
    for n in range(yamlio._PARSED_KEEP + 5):
        assert yamlio.load_text(f"n: {n}", "t") == {"n": n}
    assert len(yamlio._PARSED) == yamlio._PARSED_KEEP
    assert yamlio.load_text("x: " + "y" * (yamlio._PARSED_LARGEST + 1), "big")
    assert len(yamlio._PARSED) == yamlio._PARSED_KEEP and all(len(k[0]) < 100 for k in yamlio._PARSED)


def test_a_document_too_deep_to_copy_is_read_all_the_same(tmp_path, monkeypatch):
    """Past copying's recursion (a depth limit raised by the user), the document is not kept, and
    the reader gets it, or the file's own refusal, never an internal error."""
    from trnsim import yamlio

    monkeypatch.setattr(yamlio, "_PARSED", {})
    monkeypatch.setenv("TRNSIM_MAX_YAML_DEPTH", "2000")
    path = tmp_path / "deep.yaml"
    path.write_text("name: deep\nx: " + "[" * 490 + "]" * 490 + "\n")
    try:
        document = load_yaml(path)
    except ConfigError as refused:  # deeper than this interpreter's stack: said, not crashed
        assert "nested too deeply" in str(refused)
    else:
        assert document["name"] == "deep"
