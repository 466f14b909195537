"""Several parts failed at once, drawn at random by failure rate (Monte Carlo)."""

import numpy as np

from trnsim.errors import ParameterError
from trnsim.studies.faults.blast import POLICIES, default_policy, lost_with
from trnsim.studies.faults.sweep import Outcome, run_survivors
from trnsim.studies.faults.work import check_random
from trnsim.topology.faults import components
from trnsim.topology.graph import Topology


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

    Returns
    -------
    list of Outcome
        One per sample (``component`` is the first part drawn; ``note`` lists them all).
    """
    from trnsim.errors import TrnsimError

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
    out = []
    for _ in range(samples):
        drawn = [
            parts[i] for i in rng.choice(len(parts), size=count, replace=False, p=weights / weights.sum())
        ]
        lost = sorted({chip for part in drawn for chip in lost_with(topology, part, policy)})
        outcome = Outcome(drawn[0], 1, lost, note="; ".join(part.spec for part in drawn))
        out.append(outcome)
        keys = [(op, size) for op in ops for size in sizes]
        if len(lost) >= topology.n_ranks - 1:
            outcome.busbw_gbps = dict.fromkeys(keys, 0.0)
            continue
        physical = {topology.nodes[c].get("chip", c) for c in lost}
        failures = [part.spec for part in drawn]
        failures += [f"chip:{chip}" for chip in sorted(physical) if not any(chip in p.nodes for p in drawn)]
        try:
            degraded = load(failures, keep_largest=True)
        except TrnsimError:  # no two chips left connected: the domain is out of service
            outcome.lost = list(topology.chips)
            outcome.busbw_gbps = dict.fromkeys(keys, 0.0)
            continue
        outcome.lost = lost + [c for c in topology.chips if c not in degraded.rank_of and c not in lost]
        run_survivors(degraded, ops, sizes, outcome, keys, runtime)
    return out
