"""Issue 28's benchmark: every speed figure as a ratio against its reference, in one run.

Each section runs its cases as child processes of this checkout and, side by side, of a git
worktree of an earlier commit (``--before``, the commit before the speed work by default), then
the figures are printed together, each against its reference: the import floor for catalog
commands, the best graph library (igraph, rustworkx) for graph work, a target time or memory for
big fabrics, ``--jobs 1`` for ``--jobs 2``.

    python benchmarks/bench.py                       # every section (about half an hour)
    python benchmarks/bench.py --only startup,loops  # some sections
    python benchmarks/bench.py --before none         # this checkout alone
    python benchmarks/SECTION.py                     # one section on its own

Sections: startup (catalog commands against the import floor), graphs (BFS, path counts and ECMP
loads against igraph and rustworkx; `pip install -e '.[bench]'`), scale (the 32,768- and
4,096-chip tori), commands (layout, --groups and faults on big switched fabrics), loops (cluster
collective at 400,000 chips, sweep --jobs 2), bounds (the exact bounds per op; no goal).
Times are wall-clock seconds on this machine; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import importlib

from common import BEFORE, before_rev, print_goals, worktree  # benchmarks/ is the script's folder

SECTIONS = ("startup", "graphs", "scale", "commands", "loops", "bounds")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections to run")
    parser.add_argument("--before", default=BEFORE, help="the commit to run side by side ('none': skip)")
    parser.add_argument("--runs", type=int, default=9, help="runs of each short whole-process timing")
    parser.add_argument("--quick", action="store_true", help="fewer runs, skip the slowest references")
    args = parser.parse_args()
    chosen = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(SECTIONS))
    if unknown:
        parser.error(f"--only: unknown section {', '.join(unknown)} (choose from {', '.join(SECTIONS)})")
    goals = []
    with worktree(before_rev(args.before)) as tree:
        args.before_tree = tree
        for name in chosen:
            goals += importlib.import_module(name).section(args) or []
    print_goals(goals)


if __name__ == "__main__":
    main()
