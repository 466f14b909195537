"""Catalog commands against the light import floor: issue 28 asks the nl72x2 all-reduce sweep (the table
the README pastes) to cost at most 1.3x a process that only imports numpy, typer, rich, pyyaml and
msgspec.

    python benchmarks/startup.py                  # against 002923c (a git worktree), 9 runs
    python benchmarks/startup.py --before none --runs 15

Every figure is a whole process, interpreter start-up included, run ``--runs`` times with the cases
interleaved (a busy machine slows them alike): the median and the best, in CPU seconds (the child's
rusage, user + system: what the process itself cost) and wall seconds, each as a ratio to the floor
measured in the same rounds. ``cold`` runs start from an empty cache folder (``TRNSIM_CACHE_DIR``, a
new one per run); ``warm`` ones from a folder a run of the same command filled (what a user's second
run sees). The earlier commit has no cache: its cold and warm runs are the same. Nothing here asserts
a time.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from common import ROOT, Goal, median, process, run_alone

FLOOR = "import numpy, typer, rich, yaml, msgspec"
ALLREDUCE = ["collective", "allreduce", "--sku", "nl72x2"]
# (label, trnsim arguments, cache state): the floor is no trnsim command
CASES = [
    ("floor: python -c 'import numpy, typer, rich, yaml, msgspec'", None, None),
    ("collective allreduce --sku nl72x2, cold", ALLREDUCE, "cold"),
    ("collective allreduce --sku nl72x2, warm", ALLREDUCE, "warm"),
    ("topo list, warm", ["topo", "list"], "warm"),
    ("topo show nl72x2, warm", ["topo", "show", "nl72x2"], "warm"),
]
# the other catalog commands (not with --quick)
MORE = [
    ("topo list, cold", ["topo", "list"], "cold"),
    ("topo show nl72x2, cold", ["topo", "show", "nl72x2"], "cold"),
    ("compare allreduce nl72x2 vs nl16 (1M,1G), warm",
     ["compare", "allreduce", "--sku", "nl72x2", "--sku", "nl16", "--sizes", "1M,1G"], "warm"),
    ("faults nl16, warm", ["faults", "nl16"], "warm"),
    ("sweep --sku nl16, warm", ["sweep", "--sku", "nl16"], "warm"),
]  # fmt: skip


def _command(args: list[str] | None) -> list[str]:
    if args is None:
        return [sys.executable, "-c", FLOOR]
    return [sys.executable, "-m", "trnsim", *args]


def _measure(cases, trees: dict[str, Path], runs: int, scratch: Path) -> dict:
    """(tree, label) -> [(wall, cpu), ...], every case of every tree once per round."""
    warm = {}
    for name, tree in trees.items():  # fill each warm folder with one untimed run
        for label, args, state in cases:
            if state == "warm":
                warm[name, label] = Path(tempfile.mkdtemp(dir=scratch))
                process(_command(args), tree, {"TRNSIM_CACHE_DIR": str(warm[name, label])})
    found: dict = {}
    for _ in range(runs):
        for name, tree in trees.items():
            for label, args, state in cases:
                if args is None and name != "now":
                    continue  # one floor
                folder = warm.get((name, label)) or Path(tempfile.mkdtemp(dir=scratch))
                found.setdefault((name, label), []).append(
                    process(_command(args), tree, {"TRNSIM_CACHE_DIR": str(folder)})
                )
                if state == "cold":
                    shutil.rmtree(folder, ignore_errors=True)
    return found


def section(args) -> list[Goal]:
    runs = max(1, getattr(args, "runs", 9) or 9)
    cases = CASES if getattr(args, "quick", False) else CASES + MORE
    trees = {"now": ROOT}
    if getattr(args, "before_tree", None) is not None:
        trees["before"] = args.before_tree
    print(
        f"\ncatalog commands, whole processes, {runs} rounds interleaved (median / best; ratio: median to the floor's):"
    )
    scratch = Path(tempfile.mkdtemp(prefix="trnsim-startup-"))
    try:
        found = _measure(cases, trees, runs, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    floor = found["now", cases[0][0]]
    floor_cpu, floor_wall = median([c for _, c in floor]), median([w for w, _ in floor])
    print(f"  {'case':52} {'tree':6} {'CPU s':>15} {'x floor':>8} {'wall s':>15} {'x floor':>8}")
    figures = {}
    for label, _, _ in cases:
        for name in trees:
            if (name, label) not in found:
                continue
            times = found[name, label]
            cpu, wall = [c for _, c in times], [w for w, _ in times]
            figures[name, label] = median(cpu)
            print(
                f"  {label:52} {name:6} {median(cpu):7.3f}/{min(cpu):<7.3f} {median(cpu) / floor_cpu:8.2f}"
                f" {median(wall):7.3f}/{min(wall):<7.3f} {median(wall) / floor_wall:8.2f}"
            )
    label = CASES[2][0]
    return [
        Goal(
            "collective allreduce --sku nl72x2 (warm), CPU vs import floor",
            figures["now", label],
            floor_cpu,
            1.3,
            before=figures.get(("before", label)),
        )
    ]


def main() -> None:
    run_alone(section, __doc__, "the issue's cases only", runs=(9, "rounds of every case"))


if __name__ == "__main__":
    main()
