"""Re-apply the mutants issue 24's review left alive, one at a time, and check that a test kills each.

Not collected by pytest (no ``test_`` prefix). Run from the repository root:

    .venv/bin/python tests/model/mutants.py            # every mutant: apply, run its killers, revert
    .venv/bin/python tests/model/mutants.py d g        # only these
    .venv/bin/python tests/model/mutants.py --survey d # apply d, run the tests of the model, the
                                                       # collectives, studies, CLI, outputs, README
                                                       # and doctests and the regression guard, revert

Each mutant is one exact text substitution in the library (the text must occur exactly once, so a
refactoring that moves it makes this script say so instead of testing nothing). The file is restored
in a ``finally`` and its modification time moved on, so no stale bytecode of the mutant survives
(pytest runs with ``PYTHONDONTWRITEBYTECODE=1``). The list is mirrored in ``tests/model/MUTANTS.md``.
"""

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Mutant:
    name: str
    what: str
    path: str
    old: str
    new: str
    killers: tuple[str, ...]


MUTANTS = [
    Mutant(
        "a",
        "natural all-gather cut: min(a, b) where the bound takes max(a, b)",
        "trnsim/model/bounds/families.py",
        '"allgather": max(a, b) / p,',
        '"allgather": min(a, b) / p,',
        (
            "tests/model/test_bounds.py::test_natural_cuts_carry_their_closed_form_over_the_cut_bandwidth",
            "tests/model/test_bounds.py::test_the_cheap_bound_is_the_best_natural_cut_by_brute_force",
        ),
    ),
    Mutant(
        "b",
        "bruck all-gather: blocks sent at distance d = d (not min(d, p - d))",
        "trnsim/collectives/algorithms/bruck.py",
        "blocks = min(distance, p - distance)",
        "blocks = distance",
        ("tests/model/test_closed_forms.py::test_bruck_on_any_group_size_sends_each_block_once",),
    ),
    Mutant(
        "c",
        "the bound's latency part: one link fewer than the group's farthest members are apart",
        "trnsim/model/bounds/lower.py",
        "latency_us = (alpha_ns + max_links * min_link_ns) / 1e3",
        "latency_us = (alpha_ns + (max_links - 1) * min_link_ns) / 1e3",
        (
            "tests/model/test_bounds.py::test_the_latency_part_is_alpha_plus_the_hops_at_the_lowest_link_latency",
            "tests/model/test_closed_forms.py::test_the_latency_floor_is_one_alpha_and_the_diameter_in_links",
        ),
    ),
    Mutant(
        "d",
        "max_hops: the links of the longest path, not the devices passed through",
        "trnsim/model/engine.py",
        "max_hops=max(plan.max_links - 1, 0),",
        "max_hops=max(plan.max_links, 0),",
        ("tests/model/test_engine.py::test_max_hops_is_the_devices_passed_through_on_the_longest_flow",),
    ),
    Mutant(
        "e",
        "hierarchical all-reduce: the cross-group step carries S/m, not S/(m r)",
        "trnsim/collectives/algorithms/hierarchical.py",
        'across = Step.of(outer, 1 / (m * r), 1, f"across {level}s")',
        'across = Step.of(outer, 1 / m, 1, f"across {level}s")',
        ("tests/model/test_closed_forms.py::test_hierarchical_closed_forms_on_two_racks",),
    ),
    Mutant(
        "f",
        "Monte Carlo draws: the lower of the two middle losses as the median",
        "trnsim/studies/faults/summary.py",
        '"median_loss": losses[len(losses) // 2],',
        '"median_loss": losses[(len(losses) - 1) // 2],',
        ("tests/studies/faults/test_summary.py::test_draws_are_summed_up_as_their_losses_say",),
    ),
    Mutant(
        "g",
        "raw_bound_busbw_gbps: the uniform efficiency divided out instead of multiplied in",
        "trnsim/model/engine.py",
        "seconds_per_byte=bound.seconds_per_byte * share,",
        "seconds_per_byte=bound.seconds_per_byte / share,",
        ("tests/model/test_engine.py::test_the_raw_bound_is_the_bound_with_every_link_at_its_raw_rate",),
    ),
]


def _run(args: list[str]) -> int:
    """Run pytest on ``args``; print the tests that failed (its exit code: 1 when some did)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", *args]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    for line in done.stdout.splitlines():
        if line.startswith(("FAILED", "ERROR")):
            print("   ", line[:160], flush=True)
    return done.returncode


def _with(mutant: Mutant, args: list[str]) -> int:
    path = ROOT / mutant.path
    original = path.read_text()
    if original.count(mutant.old) != 1:
        raise SystemExit(f"mutant {mutant.name}: {mutant.old!r} is not in {mutant.path} exactly once")
    try:
        path.write_text(original.replace(mutant.old, mutant.new))
        return _run(args)
    finally:
        path.write_text(original)
        later = time.time() + 2  # a new modification time: no bytecode of the mutant is ever reused
        os.utime(path, (later, later))


SURVEY = [
    "tests/model",
    "tests/collectives",
    "tests/studies",
    "tests/cli",
    "tests/outputs",
    "tests/regression",
    "tests/test_readme.py",
    "tests/test_doctests.py",
]


def main(argv: list[str]) -> int:
    survey = "--survey" in argv
    names = [a for a in argv if not a.startswith("--")]
    chosen = [m for m in MUTANTS if not names or m.name in names]
    failures = 0
    for mutant in chosen:
        code = _with(mutant, SURVEY if survey else list(mutant.killers))
        killed = code == 1  # 1: tests failed; anything else (collection error, usage) is no kill
        failures += not killed
        verdict = "killed" if killed else f"NOT killed (pytest exit {code})"
        print(f"{mutant.name}: {mutant.what}: {verdict}", flush=True)
    diff = (ROOT / ".git").exists() and subprocess.run(
        ["git", "diff", "--quiet", "--", "trnsim"], cwd=ROOT
    ).returncode
    if diff:
        print("trnsim/ differs from the commit: a mutant was not reverted")
        return 2
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
