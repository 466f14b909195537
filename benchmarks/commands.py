"""Whole commands on the 1,152-chip switched fabric and NL72x2, against issue 28's targets.

Times ``trnsim layout`` and ``trnsim collective --groups`` on ``benchmarks/switched-1152.yaml`` and
the single-failure sweep ``trnsim faults nl72x2`` as a user runs them (a fresh process each), and
gives for each its wall and CPU seconds and peak memory, against the targets: 5 s for layout and
--groups, 3 s for faults, 2 GiB of memory (a ratio of 1 or less meets one). Side by side, the same
commands from the earlier commit (``--before``), interleaved run by run, and whether each command's
JSON output is byte-identical to this checkout's.

    python benchmarks/commands.py                     # against 002923c (the commit before issue 28)
    python benchmarks/commands.py --before none       # this checkout alone
    python benchmarks/commands.py --quick             # one timed run each

Every command runs once untimed first from each source (numba compiles its kernels into its disk
cache, as on any first run); the figures are medians. trnsim's disk cache of results is off
(TRNSIM_CACHE=off: every run computes its answer), and the earlier code refuses the layout past its
shared-link work limit (TRNSIM_MAX_SHARED_WORK), so every run raises that limit.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from common import ROOT, Goal, median, run_alone, trnsim  # benchmarks/ is on sys.path

GIB = 1 << 30
FABRIC = "benchmarks/switched-1152.yaml"  # relative to the source tree run
CASES = {
    # name: (label, arguments, target seconds)
    "layout": (
        "layout --ep 576 --tp 2, switched-1152",
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
ENV = {"TRNSIM_MAX_SHARED_WORK": str(1 << 40), "TRNSIM_CACHE": "off"}  # computed, never recalled


def replica_groups(directory: Path) -> dict[str, Path]:
    """The replica-group files (nccom-test's form; the fabric has no NeuronCores, so its ranks are
    its chips): 576 pairs of consecutive chips, and the two halves of 576 chips."""
    files = {
        "pairs": [[2 * i, 2 * i + 1] for i in range(576)],
        "halves": [list(range(576)), list(range(576, 1152))],
    }
    out = {}
    for name, groups in files.items():
        out[name] = directory / f"{name}.json"
        out[name].write_text(json.dumps({"replica_groups": [groups]}))
    return out


def _measure(argv: list[str], sources: dict[str, Path], runs: int) -> dict[str, list]:
    """Each source's runs of ``trnsim ARGV --format json``, after one untimed run, interleaved."""
    for source in sources.values():
        trnsim(argv, source, ENV)
    found: dict[str, list] = {key: [] for key in sources}
    for _ in range(runs):  # the machine's load falls on every source alike
        for key, source in sources.items():
            run = trnsim(argv, source, ENV)
            if run.code != 0:
                raise RuntimeError(f"trnsim {' '.join(argv)} from {source} exited {run.code}")
            found[key].append(run)
    return found


def section(args) -> list[Goal]:
    """Time the commands from this checkout and ``args.before_tree`` (None: this checkout alone);
    ``args.runs`` timed runs each (at most 3; 1 with ``args.quick``)."""
    before = getattr(args, "before_tree", None)
    runs = 1 if getattr(args, "quick", False) else max(1, min(getattr(args, "runs", 3), 3))
    sources = {"now": ROOT} | ({"before": Path(before)} if before is not None else {})
    goals = []
    print("\nwhole commands on big switched fabrics (medians of fresh processes; target ratio <= 1):")
    print(f"  {'command':42} {'source':>7} {'wall s':>7} {'CPU s':>6} {'peak GB':>8} {'/target':>8} "
          f"{'/2 GiB':>7}  output")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="trnsim-groups-") as scratch:
        files = replica_groups(Path(scratch))
        for label, template, target in CASES.values():
            argv = [str(files[a[1:-1]]) if a.startswith("{") else a for a in template] + ["--format", "json"]
            found = _measure(argv, sources, runs)
            figures = {}
            for key, results in found.items():
                wall, cpu = median([r.wall_s for r in results]), median([r.cpu_s for r in results])
                peak = max(r.peak_gb for r in results)
                figures[key] = (wall, peak)
                same = "" if key == "now" else _same(results[0].stdout, found["now"][0].stdout)
                print(f"  {label if key == 'now' else '':42} {key:>7} {wall:7.2f} {cpu:6.2f} {peak:8.2f} "
                      f"{wall / target:8.2f} {peak * 1e9 / (2 * GIB):7.2f}  {same}")  # fmt: skip
            then = figures.get("before")
            wall, peak = figures["now"]
            goals.append(Goal(f"{label}: wall", wall, target, 1.0, before=then and then[0]))
            goals.append(
                Goal(f"{label}: peak memory", peak, 2 * GIB / 1e9, 1.0, "GB", before=then and then[1])
            )
    return goals


def _same(output: str, reference: str) -> str:
    return "identical" if output == reference else "DIFFERS"


def main() -> None:
    run_alone(
        section, __doc__, "one timed run of each command", runs=(3, "timed runs of each command (at most 3)")
    )


if __name__ == "__main__":
    main()
