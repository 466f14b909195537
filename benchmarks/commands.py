"""Whole-process commands on the 1,152-chip switched fabric and NL72x2, against their targets.

Times ``trnsim layout`` and ``trnsim collective --groups`` on ``benchmarks/switched-1152.yaml`` and
the single-failure sweep ``trnsim faults nl72x2`` as a user runs them (a fresh process each), and
prints for each its wall and CPU seconds, its peak memory, and the ratios to issue 28's targets
(5 s for layout and --groups, 3 s for faults, 2 GiB of memory: a ratio of 1 or less meets the
target). With ``--before`` (a checkout's directory or a git revision, checked out in a temporary
worktree) the same commands run from that source too, interleaved run by run, with whether each
command's JSON output is byte-identical.

    python benchmarks/commands.py                     # this checkout
    python benchmarks/commands.py --before 002923c    # and the commit before, side by side
    python benchmarks/commands.py --runs 3 --only faults

Every process runs once untimed first (numba compiles its kernels into its disk cache, as on any
first run). The figures are medians over the runs; nothing here asserts a time. The earlier code
refuses the layout past its shared-link work limit, so every run raises that limit.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GIB = 1 << 30
FABRIC = "benchmarks/switched-1152.yaml"  # relative to the source tree run
CASES = {
    # name: (label, arguments, target in seconds)
    "layout": (
        "layout --ep 576 --tp 2 (switched-1152)",
        ["layout", "--topology", FABRIC, "--ep", "576", "--tp", "2", "--size", "ep=64M,tp=16M"],
        5.0,
    ),
    "pairs": (
        "--groups 576 x 2 chips, all-reduce 1 GiB",
        ["collective", "allreduce", "--topology", FABRIC, "--groups", "{pairs}", "--sizes", "1G"],
        5.0,
    ),
    "halves": (
        "--groups 2 x 576 chips, all-reduce 1 GiB",
        ["collective", "allreduce", "--topology", FABRIC, "--groups", "{halves}", "--sizes", "1G"],
        5.0,
    ),
    "faults": ("faults nl72x2 (3,348 parts)", ["faults", "nl72x2"], 3.0),
}
# the child reports its own CPU seconds and peak memory (the parent times the whole process)
_CHILD = (
    "import resource, runpy, sys\n"
    "sys.argv = ['trnsim', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('trnsim', run_name='__main__')\n"
    "except SystemExit as exit:\n"
    "    code = exit.code\n"
    "else:\n"
    "    code = 0\n"
    "usage = resource.getrusage(resource.RUSAGE_SELF)\n"
    "sys.stderr.write(f'@@ {usage.ru_utime + usage.ru_stime} {usage.ru_maxrss} {code}\\n')\n"
)


def replica_groups(directory: Path) -> dict[str, Path]:
    """The two replica-group files (nccom-test's form; the fabric has no NeuronCores, so ranks are
    chips): 576 pairs of consecutive chips, and the two halves of 576 chips."""
    files = {
        "pairs": [[2 * i, 2 * i + 1] for i in range(576)],
        "halves": [list(range(576)), list(range(576, 1152))],
    }
    out = {}
    for name, groups in files.items():
        out[name] = directory / f"{name}.json"
        out[name].write_text(json.dumps({"replica_groups": [groups]}))
    return out


def run(source: Path, args: list[str]) -> dict:
    """``trnsim ARGS --format json`` from ``source``: wall and CPU seconds, peak GB, its output."""
    env = dict(os.environ, PYTHONPATH=str(source), TRNSIM_MAX_SHARED_WORK=str(1 << 40), COLUMNS="200")
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *args, "--format", "json"],
        capture_output=True, text=True, env=env, cwd=source, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - start
    marker = next((line for line in done.stderr.splitlines() if line.startswith("@@ ")), None)
    if marker is None:
        raise RuntimeError(f"trnsim {' '.join(args)} from {source} failed:\n{done.stderr[-2000:]}")
    _, cpu, rss_kb, code = marker.split()
    if code not in ("0", "None"):
        raise RuntimeError(f"trnsim {' '.join(args)} from {source} exited {code}:\n{done.stderr[-2000:]}")
    return {"wall": wall, "cpu": float(cpu), "peak_gb": float(rss_kb) * 1024 / 1e9, "out": done.stdout}


@contextmanager
def checkout(before: str | None):
    """The source tree to compare against: a directory as given, a revision in a temporary git
    worktree (removed afterwards), or None."""
    if before is None or Path(before).is_dir():
        yield None if before is None else Path(before).resolve()
        return
    tree = Path(tempfile.mkdtemp(prefix="trnsim-before-"))
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), before],
                   check=True, capture_output=True)  # fmt: skip
    try:
        yield tree
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                       check=False, capture_output=True)  # fmt: skip
        shutil.rmtree(tree, ignore_errors=True)


def section(args) -> None:
    """Print the table. ``args`` may carry ``commands_before`` (a directory or revision),
    ``command_runs`` and ``commands_only`` (comma-separated case names); see the module docstring."""
    before = getattr(args, "commands_before", None)
    runs = max(1, int(getattr(args, "command_runs", None) or 1))
    only = getattr(args, "commands_only", None)
    names = [name for name in CASES if not only or name in only.split(",")]
    with tempfile.TemporaryDirectory(prefix="trnsim-groups-") as scratch, checkout(before) as then:
        files = replica_groups(Path(scratch))
        trees = {"now": ROOT} | ({f"before {before}": then} if then is not None else {})
        print("\nwhole-process commands (medians; ratios to the target: 1 or less meets it)")
        print(f"{'command':42} {'source':>18} {'wall s':>7} {'CPU s':>6} {'peak GB':>8} {'wall/target':>12}"
              f" {'peak/2 GiB':>11}  output")  # fmt: skip
        for name in names:
            label, template, target = CASES[name]
            argv = [str(files[a[1:-1]]) if a.startswith("{") else a for a in template]
            for tree in trees.values():
                run(tree, argv)  # once untimed: numba's disk cache, imports warm
            found = {key: [] for key in trees}
            for _ in range(runs):  # interleaved, so that the machine's load falls on both alike
                for key, tree in trees.items():
                    found[key].append(run(tree, argv))
            reference = found["now"][0]["out"]
            for key, results in found.items():
                wall = statistics.median(r["wall"] for r in results)
                cpu = statistics.median(r["cpu"] for r in results)
                peak = max(r["peak_gb"] for r in results)
                same = "" if key == "now" else ("identical" if results[0]["out"] == reference else "DIFFERS")
                print(f"{label:42} {key:>18} {wall:7.2f} {cpu:6.2f} {peak:8.2f} {wall / target:11.2f}x"
                      f" {peak * 1e9 / (2 * GIB):10.2f}x  {same}")  # fmt: skip
                label = ""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", dest="commands_before", help="a checkout's directory or a git revision")
    parser.add_argument("--runs", dest="command_runs", type=int, default=1, help="timed runs of each command")
    parser.add_argument("--only", dest="commands_only", help=f"comma-separated cases of {', '.join(CASES)}")
    section(parser.parse_args())


if __name__ == "__main__":
    main()
