"""Whole-system collectives on big tori, as whole processes: the 32,768-chip torus and the 4,096-chip one.

    python benchmarks/scale.py                  # this checkout, and the commit before issue 28 side by side
    python benchmarks/scale.py --before none    # this checkout alone

Each case is ``trnsim collective OP --topology FILE --format json`` with the default sweep of sizes:
wall seconds (from trnsim's import on), peak memory, and the busbw at 1 GiB, against issue 28's
targets: under 10 s for every whole-system collective of the 32x32x32 torus, under 2 s for the
16x16x16 all-reduce, under 2 GiB for each. The other ops of ``trnsim collective`` on the 32x32x32
torus are listed too (no goal; skipped with --quick). Each source first runs two cases once untimed,
so numba's disk cache holds its kernels; trnsim's own cache of outcomes is off. The median of the timed runs is shown, with CPU seconds
beside the wall (on a shared machine the wall grows with its load; the load average is printed).
"""

from __future__ import annotations

import os
import statistics
from pathlib import Path

from common import ROOT, Goal, Measured, busbw_at, run_alone, trnsim  # benchmarks/ is on sys.path

BIG = "examples/torus-32x32x32.yaml"
MID = "examples/torus-16x16x16.yaml"
GIB = 1 << 30
# (label, op, topology file, wall-time target in seconds)
CASES = [
    ("32x32x32 allreduce", "allreduce", BIG, 10.0),
    ("32x32x32 allgather", "allgather", BIG, 10.0),
    ("32x32x32 reducescatter", "reducescatter", BIG, 10.0),
    ("32x32x32 alltoall", "alltoall", BIG, 10.0),
    ("16x16x16 allreduce", "allreduce", MID, 2.0),
]
OTHER_OPS = ("broadcast", "reduce", "gather", "scatter", "sendrecv", "permute", "alltoallv", "allgatherv",
             "reducescatterv")  # fmt: skip
MEMORY_GB = GIB * 2 / 1e9  # 2 GiB


def _run(op: str, topology: str, source: Path, runs: int) -> list[Measured]:
    args = ["collective", op, "--topology", topology, "--format", "json"]
    return [trnsim(args, source) for _ in range(runs)]  # common.trnsim turns trnsim's disk cache off


def _summary(found: list[Measured]) -> tuple[float, float, float, float | None, int]:
    """Median wall and CPU seconds, the largest peak (GB), the busbw at 1 GiB and the exit code."""
    last = found[-1]
    busbw = busbw_at(last.stdout, GIB) if last.code == 0 else None
    wall, cpu = statistics.median(m.wall_s for m in found), statistics.median(m.cpu_s for m in found)
    return wall, cpu, max(m.peak_gb for m in found), busbw, last.code


def _cell(summary) -> str:
    """``wall cpu peak busbw`` (or the exit code of a refusal), 30 characters."""
    if summary is None:
        return f"{'-':>30}"
    wall, cpu, peak, busbw, code = summary
    if code:
        return f"{wall:6.2f} {cpu:6.2f} {'refused, rc ' + str(code):>16}"
    return f"{wall:6.2f} {cpu:6.2f} {peak:5.2f} {busbw if busbw is not None else float('nan'):10.2f}"


def section(args) -> list[Goal]:
    quick = bool(getattr(args, "quick", False))
    runs = 1 if quick else max(1, min(getattr(args, "runs", 3), 3))
    before = getattr(args, "before_tree", None)
    sources = [("now", ROOT)] + ([("before", before)] if before is not None else [])
    for _, source in sources:  # numba compiles on first use; its disk cache then serves every run
        for _, op, topology, _ in (CASES[0], CASES[-1]):
            trnsim(["collective", op, "--topology", topology, "--sizes", "1G"], source)
    print(
        "\nscale: whole-system collectives on big tori, whole processes (default sizes; median of "
        f"{runs} run{'s' * (runs > 1)}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    print("  each side: wall s, CPU s, peak GB, busbw GB/s at 1 GiB; ratio = now's wall (CPU) / target")
    print(f"  {'case':24} {'before':>30} {'now':>30} {'target':>8} {'ratio':>6} {'(CPU)':>6}")  # fmt: skip
    goals = []
    for label, op, topology, target in CASES:
        now = _summary(_run(op, topology, ROOT, runs))
        then = _summary(_run(op, topology, before, runs)) if before is not None else None
        ratio, cpu_ratio = (now[0] / target, now[1] / target) if not now[4] else (float("inf"),) * 2
        print(f"  {label:24} {_cell(then)} {_cell(now)} {target:6.0f} s {ratio:6.2f} {cpu_ratio:6.2f}")
        ran = then is not None and not then[4]
        goals.append(
            Goal(
                f"scale: {label} wall (target {target:g} s)",
                now[0],
                target,
                1.0,
                "s",
                before=then[0] if ran else None,
            )
        )
        goals.append(
            Goal(
                f"scale: {label} peak GB (2 GiB)",
                now[2],
                MEMORY_GB,
                1.0,
                "GB",
                before=then[2] if ran else None,
            )
        )
    if not quick:
        print("  the other ops on the 32x32x32 torus (no goal):")
        for op in OTHER_OPS:
            now = _summary(_run(op, BIG, ROOT, 1))
            then = _summary(_run(op, BIG, before, 1)) if before is not None else None
            print(f"  {'32x32x32 ' + op:24} {_cell(then)} {_cell(now)}")
    return goals


def main() -> None:
    run_alone(
        section,
        __doc__,
        "one run each, without the other ops",
        runs=(3, "timed runs of each case (at most 3)"),
    )


if __name__ == "__main__":
    main()
