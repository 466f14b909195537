"""The exact bound's entry point: :func:`optimum` picks the method for the op and caches the result.

* All-gather and reduce-scatter: the min-ratio cut (:mod:`trnsim.model.optimum.gather`). trnsim's
  links carry the same bandwidth both ways, so reversal maps the graph onto itself and the two are
  equal; a graph without that symmetry is solved reversed for reduce-scatter.
* All-reduce: the larger of (a) injection (:func:`trnsim.model.bounds.families.injection`: with
  equal chips ``2(p-1)/p S`` over a chip's link bandwidth, Patarasuk and Yuan, JPDC 2009), and (b)
  the reduction cut: every member's result depends on every input, so ``S`` crosses any cut splitting
  the group, each way: ``S / min B(X)`` (:func:`trnsim.model.optimum.cuts.member_cut`). Both bind
  every schedule, trees included. The reduce-scatter optimum plus the all-gather optimum would be
  tighter on some irregular groups but binds only schedules that run the two in sequence (a
  pipelined reduce-then-broadcast through a thin link beats it by nearly 2x), so it is not used. It
  is exact when it is injection and the reduce-scatter and all-gather optima add up to it: running
  those two optimal schedules in turn then reaches it (every catalog system, whole).
* All-to-all: the maximum concurrent multicommodity flow (:mod:`trnsim.model.optimum.alltoall`).
"""

from dataclasses import dataclass

from trnsim.model.bounds.families import TIE, Candidate, injection, largest
from trnsim.model.optimum.alltoall import solve_alltoall
from trnsim.model.optimum.cuts import member_cut
from trnsim.model.optimum.disk import kept
from trnsim.model.optimum.gather import cut_label, gather_optimum
from trnsim.model.optimum.graph import network
from trnsim.topology.graph import Topology


@dataclass(frozen=True)
class Optimum:
    """A bandwidth lower bound for one op on one group, and what attains it."""

    seconds_per_byte: float
    limited_by: str  # e.g. "injection (r0.n0.A)", "cut rack-halves (72|72 members)", "link classes xrack"
    exact: bool  # proven optimal, or a valid bound that may be loose


def optimum(topology: Topology, group: list[str], op_name: str) -> Optimum:
    """The exact (or, where flagged, a valid) bandwidth lower bound of ``op_name`` on ``group``.

    Kept in the topology's cache per group and op, and on disk between runs (:mod:`.disk`).

    Parameters
    ----------
    topology : Topology
        The built system; every device may relay.
    group : list of str
        Member chips, in rank order.
    op_name : str
        ``allreduce``, ``allgather``, ``reducescatter`` or ``alltoall``.

    Returns
    -------
    Optimum
        Seconds per byte of the nccl-tests size, what attains it, and whether it is proven optimal.

    Examples
    --------
    Four chips, every pair joined by a 100 GB/s link: a chip's three links carry 300 GB/s, and an
    all-gather must bring ``3/4`` of the size into each chip, so the optimum is ``(3/4) / 300e9``
    seconds per byte (busbw ``(3/4) / that`` = 300 GB/s, the chip's whole bandwidth).

    >>> from trnsim.topology.synthetic import complete_topology
    >>> square = complete_topology(4, bw_gbps=100.0)
    >>> found = optimum(square, square.chips, "allgather")
    >>> round(found.seconds_per_byte * 300e9, 12), found.limited_by, found.exact
    (0.75, 'injection (c0)', True)
    >>> reduce = optimum(square, square.chips, "allreduce")  # 2(p-1)/p = 1.5 of the size
    >>> round(reduce.seconds_per_byte * 300e9, 12), reduce.exact
    (1.5, True)
    >>> spread = optimum(square, square.chips, "alltoall")  # 1/4 of the size on every link each way
    >>> round(spread.seconds_per_byte / 2.5e-12, 9), spread.limited_by, spread.exact
    (1.0, 'link classes link', True)
    """
    cache = topology.cache.optimum
    key = (tuple(group), op_name)
    if key not in cache:
        cache[key] = Optimum(*kept(topology, "optimum", key, lambda: _plain(topology, group, op_name)))
    return cache[key]


def _plain(topology: Topology, group: list[str], op_name: str) -> tuple[float, str, bool]:
    found = _optimum(topology, list(group), op_name)
    return float(found.seconds_per_byte), found.limited_by, bool(found.exact)


def _optimum(topology: Topology, group: list[str], op_name: str) -> Optimum:
    p = len(group)
    if p < 2:
        return Optimum(0.0, "a single member: nothing to move", True)
    net = network(topology, group)
    symmetric = net.is_symmetric()
    if op_name in ("allgather", "reducescatter"):
        # reduce-scatter's data flows the other way; on symmetric links reversal changes nothing
        reverse = op_name == "reducescatter" and not symmetric
        seconds, label, exact = gather_optimum(topology, group, reverse)
        return Optimum(seconds, label, exact)
    if op_name == "allreduce":
        return _allreduce(topology, group, net, symmetric)
    if op_name == "alltoall":
        return Optimum(*solve_alltoall(topology, group, net))
    raise ValueError(f"unknown collective {op_name!r}")


def _allreduce(topology: Topology, group: list[str], net, symmetric: bool) -> Optimum:
    """The larger of injection and the reduction cut (see the module docstring)."""
    candidates = injection(topology, group, "allreduce")
    ag, _, ag_exact = gather_optimum(topology, group, False)
    rs, _, rs_exact = (ag, None, ag_exact) if symmetric else gather_optimum(topology, group, True)
    # with symmetric links every cut splitting the group has B(X) >= (p/2) lambda*, so the
    # reduction cut is at most twice the all-gather optimum: no max-flows when that cannot bind
    if not symmetric or 2 * ag > candidates[0].seconds_per_byte * (1 + TIE):
        cut = member_cut(net)
        label = f"reduction {cut_label(topology, group, net, cut.side)}"
        candidates.append(Candidate(1.0 / (cut.ratio * 1e9), label, "cut"))
    best = largest(candidates)
    top, label = best.seconds_per_byte, best.label
    # exact when reduce-scatter + all-gather, each at its own (achievable) optimum, reach it
    exact = label.startswith("injection") and ag_exact and rs_exact and ag + rs <= top * (1 + TIE)
    return Optimum(top, label, exact)
