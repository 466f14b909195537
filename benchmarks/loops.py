"""Loops: `trnsim cluster collective` for 400,000 chips against 1 s, and `trnsim sweep --jobs 2`
against `--jobs 1` on the whole catalog (the default SKU set and ops) against a 1.8x speed-up.

    python benchmarks/loops.py                    # against 002923c (a git worktree), 9 rounds
    python benchmarks/loops.py --before none --runs 3

Every figure is a whole `python -m trnsim ...` process, interpreter start-up included, with trnsim's
disk cache off (each run computes its answer), run ``--runs`` times with the cases interleaved (a
busy machine slows them alike): the median wall seconds, and CPU seconds (user + system of the
process and its workers). The cluster run is a ratio to its 1 s goal, beside the import floor
(numpy, typer, rich, pyyaml, msgspec); the other ops run once each. The sweep is the speed-up of two
workers over one, with whether their CSV files are identical (byte for byte, rows in the same
order), and beside it the speed-up of the tasks alone: the time the CLI spends in
``trnsim.studies.sweep.run_sweep`` (from the first task to the last one's rows), which leaves out what
every process pays once whatever the workers (the interpreter, the imports, building the tasks,
writing the file, leaving). Last, what a perfect engine would reach: every worker still imports
what the tasks need (scipy's csgraph and optimize, timed here after the CLI's own imports), the
rest of the tasks split evenly with nothing lost to forking, results or the two workers sharing the
machine: ``rest + imports + (tasks - imports) / 2``. Nothing here asserts a time.
"""

from __future__ import annotations

import filecmp
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from common import ROOT, Goal, median, process, run_alone, tree_env

FLOOR = [sys.executable, "-c", "import numpy, typer, rich, yaml, msgspec"]
CLUSTER = ["cluster", "collective", "allreduce", "--sku", "nl64", "--domains", "6250"]  # 400,000 chips
OTHER_OPS = ("allgather", "reducescatter", "alltoall", "broadcast", "gather", "sendrecv")
CLUSTER_GOAL_S = 1.0
SWEEP_GOAL = 1.8


# the CLI in-process, timing run_sweep's generator from its first row asked for to its last
_TASKS_ALONE = """
import sys, time
import trnsim.studies.sweep as sweep
from trnsim.cli.entry import main
run, spent = sweep.run_sweep, []
def timed(*args, **kwargs):
    began = time.perf_counter()
    yield from run(*args, **kwargs)
    spent.append(time.perf_counter() - began)
sweep.run_sweep = timed
sys.argv = ["trnsim", *sys.argv[1:]]
import atexit
atexit.register(lambda: print(f"tasks {sum(spent):.6f}", file=sys.stderr, flush=True))
main()
"""


# what each worker imports that the CLI did not (the exact bounds' max-flow, Dijkstra and HiGHS)
_WORKER_IMPORTS = """
import time
import trnsim.cli.app, trnsim.studies.sweep
began = time.perf_counter()
import scipy.sparse.csgraph, scipy.optimize
print(time.perf_counter() - began)
"""


def _trnsim(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "trnsim", *args]


def _tasks_alone(args: list[str], tree: Path) -> float:
    """Seconds the sweep ``args`` spends running its tasks (see :data:`_TASKS_ALONE`)."""
    done = subprocess.run(
        [sys.executable, "-c", _TASKS_ALONE, *args],
        env=tree_env(tree, TRNSIM_CACHE="off"),
        cwd=tree, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return float(done.stderr.rsplit("tasks ", 1)[1].split()[0])


def _worker_imports(tree: Path) -> float:
    """Seconds a worker spends importing what its first task needs (see :data:`_WORKER_IMPORTS`)."""
    done = subprocess.run(
        [sys.executable, "-c", _WORKER_IMPORTS], env=tree_env(tree), cwd=tree,
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return float(done.stdout)


def _cluster(trees: dict[str, Path], runs: int) -> dict[str, float]:
    """Each tree's median wall seconds for the 400,000-chip all-reduce (and the floor's)."""
    found: dict[str, list] = {name: [] for name in ("floor", *trees)}
    for _ in range(runs):
        found["floor"].append(process(FLOOR))
        for name, tree in trees.items():
            found[name].append(process(_trnsim(CLUSTER), tree))
    walls = {name: median([w for w, _ in times]) for name, times in found.items()}
    print(
        f"\ncluster collective allreduce --sku nl64 --domains 6250 (400,000 chips), {runs} rounds (median):"
    )
    for name, times in found.items():
        cpu, wall = median([c for _, c in times]), walls[name]
        ratio = (
            ""
            if name == "floor"
            else f"  = {wall / CLUSTER_GOAL_S:.2f} x the 1 s goal, {wall / walls['floor']:.1f} x the floor"
        )
        print(f"  {name:8} {wall:6.3f} s wall {cpu:6.3f} s CPU{ratio}")
    print("  the other ops, one run each (wall / CPU s):")
    for op in OTHER_OPS:
        args = [*CLUSTER[:2], op, *CLUSTER[3:]]
        cells = [
            f"{name} {w:.3f} / {c:.3f}"
            for name, tree in trees.items()
            for w, c in [process(_trnsim(args), tree)]
        ]
        print(f"    {op:14} " + "   ".join(cells))
    return walls


def _sweep(trees: dict[str, Path], runs: int) -> dict[str, float]:
    """Each tree's speed-up of --jobs 2 over --jobs 1 (median walls), after checking both write the same file."""
    scratch = Path(tempfile.mkdtemp(prefix="trnsim-loops-"))
    try:
        found: dict[tuple[str, int], list] = {}
        alone: dict[tuple[str, int], list] = {}
        imports: dict[str, list] = {}
        for _ in range(runs):  # one, two, one, two...
            for name, tree in trees.items():
                imports.setdefault(name, []).append(_worker_imports(tree))
                for jobs in (1, 2):
                    out = scratch / f"{name}-{jobs}.csv"
                    args = ["sweep", "-o", str(out), "--jobs", str(jobs)]
                    found.setdefault((name, jobs), []).append(process(_trnsim(args), tree))
                    alone.setdefault((name, jobs), []).append(_tasks_alone(args, tree))
        print(
            f"\nsweep -o out.csv (the whole catalog, default ops), --jobs 1 against --jobs 2, {runs} rounds (median):"
        )
        speedups = {}
        for name in trees:
            one, two = found[name, 1], found[name, 2]
            wall1, wall2 = median([w for w, _ in one]), median([w for w, _ in two])
            same = filecmp.cmp(scratch / f"{name}-1.csv", scratch / f"{name}-2.csv", shallow=False)
            speedups[name] = wall1 / wall2
            print(
                f"  {name:8} --jobs 1 {wall1:6.2f} s ({median([c for _, c in one]):5.2f} s CPU)   --jobs 2 "
                f"{wall2:6.2f} s ({median([c for _, c in two]):5.2f} s CPU)   speed-up {wall1 / wall2:.2f}x   "
                f"rows {'identical' if same else 'DIFFER'}"
            )
            task1, task2 = median(alone[name, 1]), median(alone[name, 2])
            print(
                f"  {'':8} the tasks alone: --jobs 1 {task1:6.2f} s   --jobs 2 {task2:6.2f} s   speed-up "
                f"{task1 / task2:.2f}x; the rest of the process {wall1 - task1:.2f} s and {wall2 - task2:.2f} s"
            )
            each = median(imports[name])
            perfect = (wall1 - task1) + each + (task1 - each) / 2
            print(
                f"  {'':8} a perfect engine (each worker imports scipy's parts, {each:.2f} s, and nothing "
                f"else is lost): --jobs 2 {perfect:6.2f} s, speed-up {wall1 / perfect:.2f}x"
            )
        return speedups
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def section(args) -> list[Goal]:
    runs = max(1, getattr(args, "runs", 9) or 9)
    if getattr(args, "quick", False):
        runs = min(runs, 3)
    trees = {"now": ROOT}
    if getattr(args, "before_tree", None) is not None:
        trees["before"] = args.before_tree
    for tree in trees.values():  # bytecode, as `make` writes it: else a run compiles what changed
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "trnsim")], check=True)
    walls = _cluster(trees, runs)
    speedups = _sweep(trees, runs)
    return [
        Goal(
            "cluster collective allreduce, 400,000 chips (s vs 1 s)",
            walls["now"],
            CLUSTER_GOAL_S,
            1.0,
            before=walls.get("before"),
        ),
        Goal(
            "sweep --jobs 2 speed-up over --jobs 1, whole catalog",
            speedups["now"],
            1.0,
            SWEEP_GOAL,
            unit="x",
            at_least=True,
            before=speedups.get("before"),
        ),
    ]


def main() -> None:
    run_alone(section, __doc__, "at most 3 rounds", runs=(9, "rounds of every case"))


if __name__ == "__main__":
    main()
