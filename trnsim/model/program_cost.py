"""Cost a program: its rounds as the schedule the cost model routes, so the data moved is what is costed.

A :class:`~trnsim.collectives.program.Program` says which chunks cross between which ranks in each
round; :func:`schedule_of` turns it into the :class:`~trnsim.collectives.schedule.Step` and
:class:`~trnsim.collectives.schedule.Pipeline` items :mod:`trnsim.model.plan` routes and costs:

* a round's transfers between ranks are one step whose flow ``src -> dst`` carries the sum of the
  program's :meth:`~trnsim.collectives.program.Program.fraction` of its transfers ``src -> dst``;
  a round in which every position sends the same share to every other is the all-pairs step (the
  router's shortcut);
* its transfers to and from :data:`~trnsim.collectives.program.NETWORK` are one in-network step
  through the group's reducing switches (``up[i]``, ``down[i]``: what member ``i`` sends into them
  and receives from them);
* a plain program runs its rounds one after another, equal consecutive rounds as one step repeated
  (what a ring's schedule says); a round with both kinds of transfer is one stage costed as one step
  (both at once, one alpha);
* a ``pipelined`` program is one pipeline whose stages are its rounds: the chains of a schedule
  (trees, streams) share the chunk count and run stage ``i`` together, so their union stage by stage
  costs the same.

A round without transfers moves nothing but is a step all the same (its alpha), as a schedule's step
whose flows carry nothing is; a transfer of zero bytes is a flow of zero bytes (its path's latency
counts). Link classes are not part of a program: its flows take the routing's paths (measured: an
algorithm that pins its flows to link classes, ``multidim``, costs the same unpinned on the catalog
and on the test graphs; :mod:`tests.model.test_program_cost` proves it for every algorithm).
"""

import numpy as np

from trnsim.collectives.program import NETWORK, Program, Transfer
from trnsim.collectives.schedule import Pipeline, Step
from trnsim.errors import UsageError

Loads = dict[tuple[int, int], float]


def _loads(program: Program, transfers: list[Transfer]) -> Loads:
    loads: Loads = {}
    for t in transfers:
        loads[t.src, t.dst] = loads.get((t.src, t.dst), 0.0) + program.fraction(t)
    return loads


def _link_step(loads: Loads, positions: int) -> Step:
    """Flows between positions; all pairs at one share as the all-pairs step."""
    values = np.fromiter(loads.values(), dtype=float, count=len(loads))
    if (
        loads
        and len(loads) == positions * (positions - 1)
        and np.allclose(values, values[0], rtol=1e-12, atol=0)
    ):
        return Step.everyone(positions, float(values.mean()))
    pairs = np.array(list(loads), dtype=np.int64).reshape(-1, 2)
    return Step.of((pairs[:, 0], pairs[:, 1]), values)


def _network_step(loads: Loads, positions: int, switches: list[str]) -> Step:
    if not switches:
        raise UsageError(
            "the program reduces or multicasts in the network, but no switch that reduces reaches "
            "every member of this group"
        )
    up, down = np.zeros(positions), np.zeros(positions)
    for (src, dst), share in loads.items():
        if dst == NETWORK:
            up[src] += share
        else:
            down[dst] += share
    return Step.through_switches(switches, up, down)


def round_steps(program: Program, transfers: list[Transfer], switches: list[str]) -> tuple[Step, ...]:
    """One round's transfers as steps: the flows between positions, then the in-network step."""
    positions = program.p + program.relays
    loads = _loads(program, transfers)
    links = {pair: w for pair, w in loads.items() if NETWORK not in pair}
    network = {pair: w for pair, w in loads.items() if NETWORK in pair}
    steps = []
    if links or not network:  # a round without transfers is a step of no flows: its alpha
        steps.append(_link_step(links, positions))
    if network:
        steps.append(_network_step(network, positions, switches))
    return tuple(steps)


def _same(a: Loads, b: Loads) -> bool:
    return a.keys() == b.keys() and all(np.isclose(a[k], b[k], rtol=1e-12, atol=0) for k in a)


def schedule_of(program: Program, switches: list[str] | None = None) -> list[Step | Pipeline]:
    """The schedule that costs ``program`` (module docstring); ``switches`` are the reducing switches
    its :data:`~trnsim.collectives.program.NETWORK` transfers go through."""
    switches = list(switches or [])
    rounds = program.by_round()
    label = program.algorithm or "imported"
    if program.pipelined:
        stages = tuple(round_steps(program, transfers, switches) for transfers in rounds)
        return [Pipeline((stages,), label)] if stages else []
    out: list[Step | Pipeline] = []
    previous: Loads | None = None
    for transfers in rounds:
        loads = _loads(program, transfers)
        last = out[-1] if out else None
        if previous is not None and isinstance(last, Step) and not last.in_network and _same(loads, previous):
            out[-1] = _repeated(last)
            continue
        steps = round_steps(program, transfers, switches)
        out.append(steps[0] if len(steps) == 1 else Pipeline(((steps,),), label))
        previous = loads if len(steps) == 1 and not steps[0].in_network else None
    return out


def _repeated(step: Step) -> Step:
    """``step`` once more (the same flows, ``repeat + 1``)."""
    from dataclasses import replace

    return replace(step, repeat=step.repeat + 1)
