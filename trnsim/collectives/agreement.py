"""Is the program the schedule that is costed? Compare the bytes each pair of ranks carries in both.

A schedule is costed (:mod:`trnsim.model.cost`) from its flows: a :class:`~trnsim.collectives.schedule.Step`
moves ``weight x S`` from ``src`` to ``dst`` ``repeat`` times, one round each; a
:class:`~trnsim.collectives.schedule.Pipeline` runs, with one chunk, stage ``i`` of every chain in
round ``i``; an in-network step moves ``up[i] x S`` from member ``i`` into the switches and
``down[i] x S`` back. A program (:mod:`trnsim.collectives.program`) moves chunks whose sizes are
known. :func:`agreement` unrolls both into rounds of ``(src, dst) -> share of S`` (the switches as
:data:`~trnsim.collectives.program.NETWORK`) and compares them round by round and in total, so a
proven-correct program also proves what the cost model charges is the data the algorithm moves.
"""

from dataclasses import dataclass

import numpy as np

from trnsim.collectives.program import NETWORK, Program
from trnsim.collectives.schedule import Pipeline, Step

Loads = dict[tuple[int, int], float]


def _add(loads: Loads, step: Step, times: float = 1.0) -> None:
    if step.in_network:
        pairs = [((i, NETWORK), w) for i, w in enumerate(step.up)]
        pairs += [((NETWORK, i), w) for i, w in enumerate(step.down)]
    else:
        src, dst, weight = step.flows()
        pairs = [((int(a), int(b)), float(w)) for a, b, w in zip(src, dst, weight, strict=True)]
    for pair, w in pairs:
        loads[pair] = loads.get(pair, 0.0) + float(w) * times


def schedule_rounds(schedule: list[Step | Pipeline]) -> list[Loads]:
    """The schedule unrolled into rounds: a step's repeats, a pipeline's stages (with one chunk)."""
    rounds: list[Loads] = []
    for item in schedule:
        if isinstance(item, Pipeline):
            for i in range(item.depth):
                loads: Loads = {}
                for chain in item.chains:
                    for step in chain[i] if i < len(chain) else ():
                        _add(loads, step, step.repeat)  # the cost model charges a stage's repeats at once
                rounds.append(loads)
        else:
            loads = {}
            _add(loads, item)
            rounds += [loads] * item.repeat
    return rounds


def program_rounds(program: Program) -> list[Loads]:
    """The program's rounds as the share of ``S`` each ``(src, dst)`` pair carries."""
    rounds: list[Loads] = [{} for _ in range(program.rounds)]
    for t in program.transfers:
        pair = (t.src, t.dst)
        rounds[t.round][pair] = rounds[t.round].get(pair, 0.0) + program.fraction(t)
    return rounds


def program_totals(program: Program) -> Loads:
    """The share of ``S`` each ``(src, dst)`` pair carries over the whole program."""
    return _total(program_rounds(program))


def _total(rounds: list[Loads]) -> Loads:
    out: Loads = {}
    for loads in rounds:
        for pair, w in loads.items():
            out[pair] = out.get(pair, 0.0) + w
    return out


def _difference(mine: Loads, theirs: Loads, rel: float) -> str | None:
    """The first pair whose shares differ (zero shares count as absent), in words."""
    for pair in sorted(set(mine) | set(theirs)):
        a, b = mine.get(pair, 0.0), theirs.get(pair, 0.0)
        if not np.isclose(a, b, rtol=rel, atol=1e-15):
            src, dst = ("switches" if x == NETWORK else str(x) for x in pair)
            return f"{src} -> {dst} carries {a:.6g} x S in the program, {b:.6g} x S in the schedule"
    return None


@dataclass(frozen=True)
class Agreement:
    """Whether program and schedule move the same bytes: per round, and in total."""

    rounds: bool
    total: bool
    detail: str | None  # the first difference, in words

    @property
    def ok(self) -> bool:
        return self.rounds and self.total

    def __str__(self) -> str:
        return "agree round by round" if self.ok else f"disagree: {self.detail}"


def agreement(program: Program, schedule: list[Step | Pipeline], rel: float = 1e-9) -> Agreement:
    """Compare the program's bytes with the schedule's, round by round and in total (module docstring)."""
    mine, theirs = program_rounds(program), schedule_rounds(schedule)
    total = _difference(_total(mine), _total(theirs), rel)
    if len(mine) != len(theirs):
        detail = f"the program has {len(mine)} rounds, the schedule {len(theirs)}"
        return Agreement(False, total is None, total or detail)
    for number, (a, b) in enumerate(zip(mine, theirs, strict=True)):
        diff = _difference(a, b, rel)
        if diff is not None:
            return Agreement(False, total is None, f"round {number}: {diff}")
    return Agreement(True, total is None, total)
