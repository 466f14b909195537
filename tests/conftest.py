"""Shared fixtures: the catalog, loaded topologies and an in-process CLI runner; the ``slow``
marker (skipped unless ``--runslow`` or ``TRNSIM_SLOW=1``)."""

import itertools
import os
import tempfile
from dataclasses import dataclass
from functools import cache

import pytest
from hypothesis import settings

from trnsim.cli.app import main
from trnsim.spec.catalog import catalog_files
from trnsim.topology import load_topology

# CI (the slow run) draws the same examples every time: a gate must not turn red by the luck of the
# draw. A local run explores new examples each time, and a failure it finds becomes an @example.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI") or os.environ.get("TRNSIM_SLOW") == "1":
    settings.load_profile("ci")

CATALOG = catalog_files()

# trnsim's disk cache (trnsim.cache) in a test run is the run's own, never a developer's, and each
# test starts with an empty one: no answer depends on what ran before, here or in CI. Processes a
# test starts inherit the test's folder. TRNSIM_CACHE (off) is left to the tests that set it.
_CACHES = tempfile.TemporaryDirectory(prefix="trnsim-test-cache-")
_COUNT = itertools.count()
os.environ["TRNSIM_CACHE_DIR"] = _CACHES.name
os.environ.pop("TRNSIM_CACHE", None)


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch):
    monkeypatch.setenv("TRNSIM_CACHE_DIR", os.path.join(_CACHES.name, str(next(_COUNT))))


RAW = ("efficiency.default=1", "efficiency.classes={}")


@cache
def topology(sku: str, raw: bool = False):
    """A catalog topology, built once per test session; ``raw``: every link at its raw rate."""
    return load_topology(sku, overrides=list(RAW) if raw else [])


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys):
    """Run ``trnsim ARGS...`` in-process; return exit code, stdout and stderr."""

    def run(*args: str) -> Result:
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def cli_commands() -> list[tuple[tuple[str, ...], object]]:
    """Every command of the CLI as ``(path, click command)``, e.g. ``(("topo", "show"), ...)``."""
    from trnsim.cli.app import command_tree

    def walk(command, path):
        if getattr(command, "commands", None):
            for name, sub in command.commands.items():
                yield from walk(sub, (*path, name))
        else:
            yield path, command

    return list(walk(command_tree(), ()))


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="run the tests marked slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow") or os.environ.get("TRNSIM_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow or TRNSIM_SLOW=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
