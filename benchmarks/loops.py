"""Loops (issue 28): `trnsim cluster collective` for 400,000 chips against 1 s, and `trnsim sweep
--jobs 2` against `--jobs 1` on the whole catalog against 1.8x.

Every figure is a whole `python -m trnsim ...` process (a child of this one), run from a checkout:
wall seconds (the median of interleaved runs, so that load on the machine hits every command alike)
and CPU seconds (user + system, the process and its workers). The cluster run is shown as a ratio to
its 1 s goal beside the import floor (numpy, typer, rich, pyyaml, msgspec); the sweep as the speed-up
of two workers over one, with whether their rows are identical (byte for byte, in the same order).

    python benchmarks/loops.py                    # this checkout, 3 runs of each
    python benchmarks/loops.py --runs 5 --before 002923c   # and a commit's, side by side

Nothing here asserts a time.
"""

import argparse
import filecmp
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = ["cluster", "collective", "allreduce", "--sku", "nl64", "--domains", "6250"]  # 400,000 chips
CLUSTER_OPS = ("allgather", "reducescatter", "alltoall", "broadcast", "sendrecv")
CLUSTER_GOAL_S = 1.0
SWEEP_GOAL = 1.8
FLOOR = "import numpy, typer, rich, yaml, msgspec"


def _timed(argv: list[str], source: Path, module: bool = True) -> tuple[float, float]:
    """Wall and CPU seconds of ``python -m trnsim ARGV`` (or ``python -c ARGV[0]``) run from ``source``."""
    env = dict(os.environ, PYTHONPATH=str(source), COLUMNS="100")
    command = [sys.executable, "-m", "trnsim", *argv] if module else [sys.executable, "-c", *argv]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        command, cwd=source, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def _median(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def _cluster(trees: dict[str, Path], runs: int) -> None:
    print(f"\ncluster collective allreduce --sku nl64 --domains 6250 (400,000 chips), median of {runs}:")
    found: dict[str, list] = {label: [] for label in ("floor", *trees)}
    for _ in range(runs):  # interleaved
        found["floor"].append(_timed([FLOOR], ROOT, module=False))
        for label, tree in trees.items():
            found[label].append(_timed(CLUSTER, tree))
    floor, _ = _median(found["floor"])
    print(f"  {'import floor':<22} {floor:6.3f} s wall  {_median(found['floor'])[1]:6.3f} s CPU")
    for label in trees:
        wall, cpu = _median(found[label])
        print(
            f"  {label:<22} {wall:6.3f} s wall  {cpu:6.3f} s CPU   = {wall / CLUSTER_GOAL_S:.2f} x the 1 s goal, "
            f"{wall / floor:.1f} x the floor"
        )
    print("  the other ops, one run each (wall / CPU s):")
    for op in CLUSTER_OPS:
        cells = []
        for label, tree in trees.items():
            wall, cpu = _timed([CLUSTER[0], CLUSTER[1], op, *CLUSTER[3:]], tree)
            cells.append(f"{label} {wall:.3f} / {cpu:.3f}")
        print(f"    {op:<14} " + "   ".join(cells))


def _sweep(trees: dict[str, Path], runs: int) -> None:
    print(
        f"\nsweep -o out.csv (the whole catalog, the default ops) --jobs 1 against --jobs 2, median of {runs}:"
    )
    folder = Path(tempfile.mkdtemp(prefix="trnsim-loops-"))
    try:
        found: dict[tuple[str, int], list] = {(label, jobs): [] for label in trees for jobs in (1, 2)}
        for _ in range(runs):  # interleaved: one, two, one, two...
            for label, tree in trees.items():
                for jobs in (1, 2):
                    out = folder / f"{label}-{jobs}.csv"
                    found[label, jobs].append(_timed(["sweep", "-o", str(out), "--jobs", str(jobs)], tree))
        for label in trees:
            (one, one_cpu), (two, two_cpu) = _median(found[label, 1]), _median(found[label, 2])
            same = filecmp.cmp(folder / f"{label}-1.csv", folder / f"{label}-2.csv", shallow=False)
            print(
                f"  {label:<10} --jobs 1 {one:6.2f} s ({one_cpu:5.2f} s CPU)   --jobs 2 {two:6.2f} s "
                f"({two_cpu:5.2f} s CPU)   speed-up {one / two:.2f}x (goal {SWEEP_GOAL}x)   "
                f"rows {'identical' if same else 'DIFFER'}"
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def section(args) -> None:
    """Print the loops' figures: this checkout, and ``args.before`` (a commit) beside it if given."""
    runs = getattr(args, "loops_runs", None) or 3  # its own names: bench.py's --runs and --before mean others
    before = getattr(args, "loops_before", None)
    trees = {"now": ROOT}
    worktree = None
    if before:
        worktree = Path(tempfile.mkdtemp(prefix="trnsim-before-"))
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(worktree), before],
            check=True,
            capture_output=True,
        )
        trees = {before: worktree, "now": ROOT}
    for tree in trees.values():  # bytecode, as `make` writes it: else a run compiles what changed since
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "trnsim")], check=True)
    try:
        _cluster(trees, runs)
        _sweep(trees, runs)
    finally:
        if worktree is not None:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)],
                check=False,
                capture_output=True,
            )
            shutil.rmtree(worktree, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--runs", dest="loops_runs", type=int, default=3, help="interleaved runs of each command (medians)"
    )
    parser.add_argument(
        "--before", dest="loops_before", help="a commit to measure beside this checkout (a worktree)"
    )
    section(parser.parse_args())
