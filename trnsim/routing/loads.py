"""Link loads of demands among a group's members: one interface, several strategies.

:func:`loads` takes a group's shortest paths (:class:`~trnsim.routing.paths.GroupPaths`) and demands
(:class:`~trnsim.routing.strategies.base.Demand`: flows between group positions, or every member to
every other) and gives each demand's bytes per directed edge, with the latency and length of the
paths its flows take (:class:`~trnsim.routing.strategies.base.LinkLoads`). Each demand goes to the
first strategy of :data:`STRATEGIES` that applies to it; each strategy routes all of its demands in
one batch. The strategies give the same numbers a plain per-flow computation would (tests hold them
equal); they differ in speed:

========================================  ==============================================
strategy (module)                         used for
========================================  ==============================================
:mod:`~.strategies.walked`                ``single`` and ``hash``: one path per flow
:mod:`~.strategies.translation`           a wrapped torus, every chip the same pattern
:mod:`~.strategies.orbits`                all pairs on a large fabric with automorphisms
:mod:`~.strategies.pairs`                 sparse demands: flow by flow, vectorised
:mod:`~.strategies.compiled`              dense demands on large groups (compiled kernels)
:mod:`~.strategies.dense`                 every other ECMP demand (numpy, per source)
========================================  ==============================================

A new strategy is a module under :mod:`trnsim.routing.strategies` with a ``STRATEGY`` record
(``applies`` and ``loads``), placed in :data:`STRATEGIES` before the ones it should overtake.
"""

from trnsim.routing.paths import GroupPaths
from trnsim.routing.strategies import compiled, dense, orbits, pairs, translation, walked
from trnsim.routing.strategies.base import Demand, LinkLoads, Strategy

# in order of preference: the first that applies routes the demand (dense takes every ECMP demand,
# walked every other one)
STRATEGIES: tuple[Strategy, ...] = (
    walked.STRATEGY,
    translation.STRATEGY,
    orbits.STRATEGY,
    pairs.STRATEGY,
    compiled.STRATEGY,
    dense.STRATEGY,
)


def choose(paths: GroupPaths, demand: Demand) -> Strategy:
    """The strategy that routes ``demand``: the first of :data:`STRATEGIES` that applies."""
    for strategy in STRATEGIES:
        if strategy.applies(paths, demand):
            return strategy
    raise ValueError(f"no load strategy applies under routing {paths.policy.label}")  # a policy unknown


def loads(paths: GroupPaths, demands: list[Demand], seed: int = 0) -> list[LinkLoads]:
    """Each demand's link loads, in order.

    Parameters
    ----------
    paths : GroupPaths
        The group's shortest paths on its graph, under its routing policy.
    demands : list of Demand
        Flows between group positions (weights: shares of the collective's size).
    seed : int
        The hash function's seed (``hash`` routing only).

    Raises
    ------
    NotApplicable
        Single-path routing of more flows than it walks (:data:`.strategies.walked.WALK_LIMIT`).
    """
    batches: dict[str, tuple[Strategy, list[int]]] = {}
    for i, demand in enumerate(demands):
        strategy = choose(paths, demand)
        batches.setdefault(strategy.name, (strategy, []))[1].append(i)
    found: list[LinkLoads | None] = [None] * len(demands)
    for strategy, members in batches.values():
        routed = strategy.loads(paths, [demands[i] for i in members], seed)
        for i, result in zip(members, routed, strict=True):
            found[i] = result
    return found
