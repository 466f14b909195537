"""What every benchmark section shares: running trnsim as a measured child process (from this checkout
or from a git worktree of an earlier commit), and the goals a section reports.

Times are wall-clock seconds on this machine, CPU seconds from the child's own rusage, and peak
memory its maximum resident set; nothing here asserts a time.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the commit before issue 28 (speed): what `--before` compares against by default
BEFORE = "002923c"

# Runs the trnsim CLI in this process and reports its own wall time, CPU time and peak memory on
# stderr, so that the figures are the command's and not the benchmark's.
_CHILD = (
    "import os, resource, runpy, sys, time\n"
    "sys.argv = ['trnsim', *sys.argv[1:]]\n"
    "start = time.perf_counter()\n"
    "def report(code):\n"
    "    use = resource.getrusage(resource.RUSAGE_SELF)\n"
    "    peak = use.ru_maxrss\n"
    "    try:  # ru_maxrss can carry the parent's peak over a fork; VmHWM is this process's own\n"
    "        peak = int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])\n"
    "    except (OSError, StopIteration, ValueError):\n"
    "        pass\n"
    "    sys.stderr.write(f'@@ {time.perf_counter() - start} {use.ru_utime + use.ru_stime} {peak} {code}\\n')\n"
    "    sys.stderr.flush()\n"
    "leave = os._exit\n"
    "def report_and_leave(code):  # trnsim leaves with os._exit, past the code below\n"
    "    report(code)\n"
    "    leave(code)\n"
    "os._exit = report_and_leave\n"
    "code = 0\n"
    "try:\n"
    "    runpy.run_module('trnsim', run_name='__main__')\n"
    "except SystemExit as exit:\n"
    "    code = exit.code if isinstance(exit.code, int) else 1\n"
    "report(code)\n"
)


@dataclass(frozen=True)
class Measured:
    """One child process: wall and CPU seconds (interpreter start-up excluded), peak memory, exit code."""

    wall_s: float
    cpu_s: float
    peak_gb: float
    code: int
    stdout: str


@dataclass(frozen=True)
class Goal:
    """One figure of issue 28: ``value`` against ``reference``; met when value/reference is at most
    ``limit`` (or, with ``at_least``, at least ``limit``)."""

    figure: str
    value: float
    reference: float
    limit: float
    unit: str = "s"
    at_least: bool = False
    before: float | None = None

    @property
    def ratio(self) -> float:
        return self.value / self.reference if self.reference else float("inf")

    @property
    def met(self) -> bool:
        return self.ratio >= self.limit if self.at_least else self.ratio <= self.limit


def tree_env(source: Path, **settings: str) -> dict:
    """This process's environment for running trnsim from ``source`` (a checkout), plus ``settings``.

    The checkout's catalog is named too (``TRNSIM_CATALOG``): the editable install maps the package's
    catalog to this checkout's ``topologies/``, whose files an earlier commit's schema may refuse
    (issue 29 added ``parts:`` to them).
    """
    return {**os.environ, "PYTHONPATH": str(source), "TRNSIM_CATALOG": str(source / "topologies"), **settings}


def trnsim(args: list[str], source: Path = ROOT, env: dict | None = None, timeout: float = 900) -> Measured:
    """Run ``trnsim ARGS`` from ``source`` (a checkout) in a fresh interpreter and measure it.

    The interpreter's own start-up is outside the figures, which count from the import of trnsim;
    use :func:`process` for a whole process, start-up included.
    """
    # the disk cache off unless asked for: a repeated command would print its kept answer
    environment = tree_env(source, **{"COLUMNS": "200", "TRNSIM_CACHE": "off", **(env or {})})  # env wins
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, env=environment,
        cwd=source, check=False, timeout=timeout,
    )  # fmt: skip
    marker = [line for line in done.stderr.splitlines() if line.startswith("@@ ")]
    if not marker:
        raise RuntimeError(f"trnsim {' '.join(args)} from {source} died: {done.stderr[-2000:]}")
    _, wall, cpu, rss_kb, code = marker[-1].split()
    return Measured(float(wall), float(cpu), float(rss_kb) / 1e6, int(code), done.stdout)


def process(command: list[str], source: Path = ROOT, env: dict | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of a whole process (interpreter start-up included), children's rusage."""
    import resource
    import time

    # the disk cache off unless a run names its folder (a cold or warm run of benchmarks/startup.py)
    switch = {} if "TRNSIM_CACHE_DIR" in (env or {}) else {"TRNSIM_CACHE": "off"}
    environment = tree_env(source, **{**switch, **(env or {})})  # env's keys win
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment,
                   cwd=source, check=True)  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def median(values: list[float]) -> float:
    return statistics.median(values)


def busbw_at(stdout: str, size: int | None = None) -> float | None:
    """The busbw (GB/s) of a ``--format json`` output's row at ``size`` (the last row by default)."""
    try:
        rows = json.loads(stdout)["rows"]
    except (ValueError, KeyError, TypeError):
        return None
    chosen = [row for row in rows if size is None or row.get("size_bytes") == size] or rows
    return chosen[-1].get("busbw_gbps") if chosen else None


@contextlib.contextmanager
def worktree(rev: str | None) -> Iterator[Path | None]:
    """A detached git worktree of ``rev`` for side-by-side runs (None: no before run)."""
    if not rev:
        yield None
        return
    tree = Path(tempfile.mkdtemp(prefix="trnsim-before-"))
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), rev],
                   check=True, capture_output=True)  # fmt: skip
    try:
        yield tree
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                       check=False, capture_output=True)  # fmt: skip
        shutil.rmtree(tree, ignore_errors=True)


def print_goals(goals: list[Goal]) -> None:
    """The issue's figures, each as a ratio against its reference, with the before run's where made."""
    print("\nissue 28's figures (ratio = this checkout against the reference; goal on the ratio):")
    print(f"  {'figure':58} {'before':>9} {'now':>9} {'reference':>10} {'ratio':>7} {'goal':>7}  met")
    for goal in goals:
        before = f"{goal.before:9.3f}" if goal.before is not None else f"{'-':>9}"
        sign = ">=" if goal.at_least else "<="
        print(
            f"  {goal.figure:58} {before} {goal.value:9.3f} {goal.reference:10.3f} {goal.ratio:7.2f} "
            f"{sign}{goal.limit:<5g}  {'yes' if goal.met else 'NO'}"
        )


def before_rev(text: str) -> str | None:
    """The ``--before`` option's commit, or None for ``none`` (no side-by-side run)."""
    return None if text.lower() == "none" else text


def run_alone(section, doc: str, quick_help: str, runs: tuple[int, str] | None = None) -> None:
    """A section run on its own (``python benchmarks/SECTION.py``): the options bench.py gives every
    section (``--before``, ``--quick`` and, when ``runs`` names its default and help, ``--runs``),
    then its goals."""
    import argparse

    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default=BEFORE, help="the commit to run side by side ('none': skip)")
    if runs is not None:
        parser.add_argument("--runs", type=int, default=runs[0], help=runs[1])
    parser.add_argument("--quick", action="store_true", help=quick_help)
    args = parser.parse_args()
    with worktree(before_rev(args.before)) as tree:
        args.before_tree = tree
        goals = section(args)
    print_goals(goals)
