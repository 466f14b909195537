"""Reading users' YAML: nothing a file holds can hang, crash or exhaust the process."""

import os
import subprocess
import sys
import time

import pytest

from trnsim.errors import ConfigError, UsageError
from trnsim.yamlio import load_yaml


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
    assert time.perf_counter() - start < 5


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
