"""Several parts failed at once, drawn at random by failure rate (Monte Carlo)."""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from trnsim.errors import ParameterError
from trnsim.studies.engines import EngineOptions
from trnsim.studies.faults.blast import POLICIES, default_policy, lost_with
from trnsim.studies.faults.sweep import Outcome, run_survivors
from trnsim.studies.faults.work import check_random
from trnsim.topology.faults import Component, components
from trnsim.topology.graph import Topology


@dataclass(frozen=True)
class Draw:
    """One Monte Carlo draw to run: the parts failed together and what the survivors run. It goes to
    a worker when an engine spreads the draws (:mod:`trnsim.studies.engines`): ``load`` must then
    pickle (:class:`trnsim.studies.faults.study.Loader` does)."""

    load: Callable
    first: Component  # the first part drawn: named in an error of the survivors' runs
    # ``fail=`` texts: the parts drawn and the chips they take with them (None: at most one chip
    # survives the parts' blast radius, nothing to run)
    failures: tuple[str, ...] | None
    ops: tuple[str, ...]
    sizes: tuple[int, ...]
    runtime: str = "ideal"


def run_draw(draw: Draw) -> tuple[frozenset[str] | None, dict[tuple[str, int], float] | None]:
    """(the chips the survivors keep, None when no two chips are left connected; busbw per
    (op, bytes), None when the draw has nothing to run) of one draw: the system built with its
    failures (the largest connected part kept), the ops run on it."""
    from trnsim.errors import TrnsimError

    if draw.failures is None:
        return frozenset(), None
    try:
        degraded = draw.load(list(draw.failures), keep_largest=True)
    except TrnsimError:  # no two chips left connected: the domain is out of service
        return None, {}
    outcome = Outcome(draw.first, 1, [])
    keys = [(op, size) for op in draw.ops for size in draw.sizes]
    run_survivors(degraded, list(draw.ops), list(draw.sizes), outcome, keys, draw.runtime)
    return frozenset(degraded.rank_of), outcome.busbw_gbps


def random_failures(
    load,
    topology: Topology,
    ops: list[str],
    sizes: list[int],
    count: int,
    samples: int,
    seed: int,
    rates: dict[str, float],
    policy: str | None = None,
    kinds: list[str] | None = None,
    runtime: str = "ideal",
    engine: EngineOptions | None = None,
    progress: Callable | None = None,
) -> list[Outcome]:
    """``samples`` draws of ``count`` parts failed together (Monte Carlo), each part drawn with
    probability proportional to its failure rate; the survivors run ``ops`` at ``sizes``.

    Parameters
    ----------
    load : callable
        ``load(faults, keep_largest)`` builds the system with ``fail=`` edits.
    topology : Topology
        The system.
    count, samples, seed : int
        Parts failed at once, draws, and the random seed.
    rates : dict of str to float
        Mean time to failure (hours) per rate class: a part is drawn in proportion to 1 / MTTF.
    policy : str, optional
        Blast radius (default: the system's).
    kinds : list of str, optional
        Draw only parts of these classes.
    runtime : str
        What prices the runs (:mod:`trnsim.studies.runtimes`).
    engine : EngineOptions, optional
        Where the draws' runs go (:func:`trnsim.studies.engines.run_ordered`; default: here, one
        after another). The draws themselves are made here, so the outcomes do not depend on it.
    progress : callable, optional
        ``progress(draw)`` as each draw's runs are done, in order.

    Returns
    -------
    list of Outcome
        One per sample (``component`` is the first part drawn; ``note`` lists them all).
    """
    from trnsim.studies.engines import run_ordered

    outcomes, draws = _draw(topology, ops, sizes, count, samples, seed, rates, policy, kinds)
    keys = [(op, size) for op in ops for size in sizes]
    # every draw is a task, even one with nothing to run: the progress counts every draw
    todo = [
        Draw(load, outcome.component, failures, tuple(ops), tuple(sizes), runtime)
        for outcome, failures in zip(outcomes, draws, strict=True)
    ]
    results = run_ordered(run_draw, todo, engine or EngineOptions(), progress)
    for outcome, (kept, busbw) in zip(outcomes, results, strict=True):
        if busbw is None:  # every chip but one lost under the policy: nothing ran
            outcome.busbw_gbps = dict.fromkeys(keys, 0.0)
        elif kept is None:  # no two chips left connected: the domain is out of service
            outcome.lost = list(topology.chips)
            outcome.busbw_gbps = dict.fromkeys(keys, 0.0)
        else:
            lost = outcome.lost
            outcome.lost = lost + [c for c in topology.chips if c not in kept and c not in lost]
            outcome.busbw_gbps = busbw
    return outcomes


def _draw(topology, ops, sizes, count, samples, seed, rates, policy, kinds):
    """The draws: an outcome for each (chips lost under the policy) and the ``fail=`` texts its
    system is built with (None when at most one chip survives: nothing to run)."""
    policy = policy or default_policy(topology)
    if policy not in POLICIES:
        raise ParameterError(f"expected one of {', '.join(POLICIES)}", "blast_radius", repr(policy))
    parts = [
        part for part in components(topology) if part.rate is not None and (not kinds or part.kind in kinds)
    ]
    if not 1 <= count <= len(parts):
        raise ParameterError(
            f"{topology.name} has {len(parts)} parts that fail by themselves", "random", f"{count}"
        )
    check_random(topology, ops, count, samples)
    weights = np.array([1.0 / rates[part.rate] for part in parts])
    rng = np.random.default_rng(seed)
    outcomes, draws = [], []
    for _ in range(samples):
        drawn = [
            parts[i] for i in rng.choice(len(parts), size=count, replace=False, p=weights / weights.sum())
        ]
        lost = sorted({chip for part in drawn for chip in lost_with(topology, part, policy)})
        outcomes.append(Outcome(drawn[0], 1, lost, note="; ".join(part.spec for part in drawn)))
        if len(lost) >= topology.n_ranks - 1:
            draws.append(None)
            continue
        physical = {topology.nodes[c].get("chip", c) for c in lost}
        failures = [part.spec for part in drawn]
        failures += [f"chip:{chip}" for chip in sorted(physical) if not any(chip in p.nodes for p in drawn)]
        draws.append(tuple(failures))
    return outcomes, draws
