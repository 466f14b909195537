"""trnsim's disk cache: where it lives, what it keys on, and that a damaged entry, a folder that cannot
be written or concurrent runs never change an answer (nor raise)."""

import os
import pickle
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from trnsim import cache


def test_the_folder_is_the_environments_or_the_users(monkeypatch, tmp_path):
    monkeypatch.setenv("TRNSIM_CACHE_DIR", str(tmp_path / "given"))
    assert cache.root() == tmp_path / "given"
    monkeypatch.delenv("TRNSIM_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.root() == tmp_path / "xdg" / "trnsim"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.root() == tmp_path / "home" / ".cache" / "trnsim"


def test_a_value_comes_back_as_it_went_and_is_computed_once():
    calls = []

    def compute():
        calls.append(1)
        return {"rows": [1.5, float("inf")], "label": "cut x"}

    key = cache.digest("test", [1, 2], {"b": 2, "a": 1})
    first = cache.cached("test", key, compute)
    assert cache.cached("test", key, compute) == first == compute() and len(calls) == 2
    assert cache.recall("test", cache.digest("test", [1, 2], {"a": 1, "b": 2})) == first  # key order


@pytest.mark.parametrize("word", ["off", "OFF", "0", "false", "no"])
def test_off_reads_and_writes_nothing(monkeypatch, word):
    key = cache.digest("off")
    cache.remember("test", key, 1)
    monkeypatch.setenv("TRNSIM_CACHE", word)
    assert cache.recall("test", key) is cache.MISSING
    cache.remember("test", cache.digest("other"), 2)
    monkeypatch.delenv("TRNSIM_CACHE")
    assert cache.recall("test", cache.digest("other")) is cache.MISSING
    assert cache.recall("test", key) == 1


def _entry(key: str) -> Path:
    return cache._path("test", key)


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: b"",
        lambda data: data[: len(data) // 2],  # a write cut short
        lambda data: data[:-1] + bytes([data[-1] ^ 1]),  # one bit of the body flipped
        lambda data: b"garbage" + data,
        # a body that checks but does not load (a class that is gone)
        lambda data: (
            cache._MAGIC
            + cache._checksum(b"\x80\x04c__nowhere__\nGone\n.")
            + b"\x80\x04c__nowhere__\nGone\n."
        ),
    ],
)
def test_a_damaged_entry_is_ignored_and_replaced(damage):
    key = cache.digest("damaged")
    cache.remember("test", key, [1, 2, 3])
    path = _entry(key)
    path.write_bytes(damage(path.read_bytes()))
    assert cache.recall("test", key) is cache.MISSING
    assert cache.cached("test", key, lambda: [1, 2, 3]) == [1, 2, 3]
    assert cache.recall("test", key) == [1, 2, 3]  # computed afresh and kept again


def test_a_folder_that_cannot_be_written_leaves_the_run_uncached(monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("TRNSIM_CACHE_DIR", str(blocker))
    assert cache.cached("test", cache.digest("x"), lambda: 7) == 7
    assert cache.recall("test", cache.digest("x")) is cache.MISSING


def test_a_value_that_cannot_be_kept_is_not(monkeypatch):
    key = cache.digest("lambda")
    cache.remember("test", key, lambda: 1)  # no pickle of a lambda: not kept, no error
    assert cache.recall("test", key) is cache.MISSING
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", 10)
    cache.remember("test", key, "x" * 100)
    assert cache.recall("test", key) is cache.MISSING


def test_the_trnsim_environment_is_part_of_every_key(monkeypatch):
    key = cache.digest("limits")
    cache.remember("test", key, "default")
    monkeypatch.setenv("TRNSIM_MAX_SIZES", "12")
    assert cache.recall("test", key) is cache.MISSING
    cache.remember("test", key, "limited")
    monkeypatch.delenv("TRNSIM_MAX_SIZES")
    assert cache.recall("test", key) == "default"


def test_a_new_version_folder_removes_all_but_the_newest(monkeypatch, tmp_path):
    monkeypatch.setenv("TRNSIM_CACHE_DIR", str(tmp_path))
    for age in range(6):
        old = tmp_path / f"old{age}"
        (old / "test").mkdir(parents=True)
        os.utime(old, (1_000_000 + age, 1_000_000 + age))
    cache.remember("test", cache.digest("new"), 1)
    left = sorted(entry.name for entry in tmp_path.iterdir())
    assert len(left) == cache._KEEP_VERSIONS
    assert cache._version()[:16] in left and {"old5", "old4", "old3"} <= set(left)


def test_editing_trnsim_starts_a_new_version(tmp_path):
    # trnsim's files as the version sees them, in a copy that a test may edit
    package = tmp_path / "trnsim"
    package.mkdir()
    (package / "__init__.py").write_text('__version__ = "0"\n')
    (package / "cache.py").write_bytes(Path(cache.__file__).read_bytes())
    probe = "import trnsim.cache as c; print(c._version())"
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}

    def version():
        done = subprocess.run(
            [sys.executable, "-c", probe], env=env, cwd=tmp_path, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    before = version()
    assert version() == before
    (package / "module.py").write_text("X = 1\n")
    added = version()
    (package / "module.py").write_text("X = 22\n")
    assert len({before, added, version()}) == 3


def _worker(args):
    folder, rounds = args
    os.environ["TRNSIM_CACHE_DIR"] = folder
    seen = []
    for n in range(rounds):
        key = cache.digest("shared", n % 3)
        seen.append(cache.cached("test", key, lambda n=n: {"n": n % 3, "big": list(range(20_000))}))
    return [value["n"] for value in seen], all(value["big"] == list(range(20_000)) for value in seen)


def test_concurrent_runs_read_whole_entries(tmp_path):
    with ProcessPoolExecutor(4) as pool:
        results = list(pool.map(_worker, [(str(tmp_path), 30)] * 4))
    for ns, whole in results:
        assert whole and ns == [n % 3 for n in range(30)]
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]  # no temporary left


def test_entries_are_pickles_behind_a_checksum():
    key = cache.digest("format")
    cache.remember("test", key, ("a", 1))
    data = _entry(key).read_bytes()
    assert data.startswith(cache._MAGIC)
    body = data[len(cache._MAGIC) + cache._DIGEST :]
    assert pickle.loads(body) == ("a", 1)


def test_the_cache_is_named_where_a_user_looks(cli):
    import re

    text = " ".join(cli("--help").out.split())
    for name in (cache.ENV_DIR, f"{cache.ENV_SWITCH}=off", "~/.cache/trnsim", "$XDG_CACHE_HOME/trnsim"):
        assert name in text
    page = (Path(__file__).resolve().parent.parent / "docs" / "reference" / "output.md").read_text()
    section = page[page.index("## The cache") :].split("\n## ")[0]
    for name in (cache.ENV_DIR, cache.ENV_SWITCH, "~/.cache/trnsim", "$XDG_CACHE_HOME/trnsim"):
        assert name in section
    assert re.search(rf"last {('two', 'three', 'four', 'five')[cache._KEEP_VERSIONS - 2]} versions", section)


def test_parts_that_make_no_key_are_computed_and_not_kept(monkeypatch, tmp_path):
    for parts in (("\udcff",), (object(),), ({"a": {1, "b"}},)):
        with pytest.raises(cache.Unkeyable):
            cache.digest(*parts)
    key = cache.digest("x")
    cache.remember("test", key, 1)
    monkeypatch.setenv("TRNSIM_UNDECODABLE", "\udcff")  # an environment of undecodable bytes
    assert cache.recall("test", key) is cache.MISSING
    assert cache.cached("test", key, lambda: 2) == 2  # computed, and nothing raised


def test_a_system_named_in_undecodable_bytes_is_computed(tmp_path):
    # the command line's bytes 0xff reach Python as a lone surrogate, which no key can hold
    line = ["collective", "allreduce", "--sku", "nl16", "--sizes", "1M", "--set", "name=x\udcff"]

    def run(**env):
        done = subprocess.run(
            [sys.executable, "-m", "trnsim", *line], capture_output=True, env={**os.environ, **env}
        )
        return done.returncode, done.stdout, done.stderr

    first = run(TRNSIM_CACHE_DIR=str(tmp_path))
    assert first[0] == 0 and b"internal error" not in first[2]
    assert run(TRNSIM_CACHE_DIR=str(tmp_path)) == first == run(TRNSIM_CACHE="off")


def test_entries_are_not_forced_to_the_disk_but_outputs_are(monkeypatch, tmp_path):
    """A cache entry skips fsync (a torn one fails its checksum); an output of the run waits for it."""
    from trnsim.atomic import write_atomic

    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real(fd))
    cache.remember("test", cache.digest("not forced"), [1, 2, 3])
    assert synced == [] and cache.recall("test", cache.digest("not forced")) == [1, 2, 3]
    write_atomic(tmp_path / "out.csv", "a,b\n")
    assert len(synced) == 2 and (tmp_path / "out.csv").read_text() == "a,b\n"  # the file, then its folder
