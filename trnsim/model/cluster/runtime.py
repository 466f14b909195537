"""A cluster collective as a runtime runs it: NCCL's cross-node algorithms, or the Neuron runtime's
hierarchical ones, next to the ideal composition (:func:`trnsim.model.cluster.evaluate_cluster`).

- ``ideal``: the composition's rows, unchanged.
- ``nccl``: NCCL's own tuner (:mod:`trnsim.model.runtimes.nccl`) on ``D`` nodes (one node per
  domain) of ``n`` GPUs. The in-node search results (ring, tree, NVLS channels and speeds) are the
  single-domain search of :func:`~trnsim.model.runtimes.nccl_domain.nccl_system_of`. Across nodes
  each GPU has one NIC of ``nic_gbit_per_chip / 8`` GB/s, as NCCL sees it (raw). The search across
  nodes is reduced to arithmetic (:func:`inter_search`): the ring's channels each take one speed
  of NCCL's inter-node speed list once from a NIC and once from every GPU's NVLinks, as many as fit,
  at most 32; NVLS keeps one channel per head GPU, each head on its own NIC at the fastest speed that
  NIC carries. NCCL's tuner then prices ring, tree, NVLS tree, PAT (one GPU per node) and picks. The
  speeds NCCL searched are what it *expects*; what the fabric delivers is lower: every inter-node
  per-channel speed (``bw_inter``, and ``bw_intra`` of the ring and tree graphs, which NCCL's search
  sets equal to it across nodes) is scaled by the scale-out ``efficiency`` and by the share of the
  NIC rate a flow keeps when hashed flows collide on the ToR uplinks
  (:func:`~trnsim.topology.scaleout.uplink_share`; 1 under spraying). The network's latency, which
  NCCL adds per step across nodes (the plugin's reported latency), is the scale-out ``hop_ns`` (an
  assumption: 15 us by default, Neuron's documented EFA hop; a two-node p5 8-byte all-reduce of
  69 us, GX3 in the validation set, is predicted at 55). CollNet (SHARP in the
  network) is not modelled: no CollNet plugin, so NCCL does not run NVLS across nodes.
- ``neuron``: the Neuron runtime's Hierarchical algorithm across nodes
  (:mod:`trnsim.model.runtimes.neuron`), one node per domain, built by :func:`neuron_cluster_system`
  from the domain's graph: its chips, ranks per chip, NeuronLink per rank, torus shape, and the
  scale-out NIC per rank (times the collision share; the Neuron model applies its own EFA
  efficiencies) with the scale-out ``hop_ns`` as its per-EFA-hop latency.

Rows (:class:`ClusterRuntimeRow`) carry the runtime's time and bandwidth in the usual fields, its
choice as ``algorithm`` (``nvls_tree/simple``), and the ideal composition's as ``ideal_time_us``,
``ideal_busbw_gbps`` and ``ideal_algorithm``. The composition's own figures (chunks, phases, bound,
ceiling) stay the ideal's; ``efficiency`` is the bound's time over the runtime's.
"""

import math
from dataclasses import dataclass, fields, replace
from typing import ClassVar

from trnsim.errors import NotApplicableError, ParameterError
from trnsim.model.cluster.compose import ClusterEvaluation, ClusterRow
from trnsim.model.cluster.inter import flows_leaving
from trnsim.model.rows import algbw_gbps, busbw_gbps
from trnsim.topology.graph import Topology
from trnsim.topology.metrics import device_bandwidth_gbps
from trnsim.topology.scaleout import FabricPlan, uplink_share

CLUSTER_RUNTIMES = ("ideal", "nccl", "neuron")


@dataclass(kw_only=True)
class ClusterRuntimeRow(ClusterRow):
    """One size of a cluster collective as a runtime runs it, the ideal composition's beside it."""

    ideal_time_us: float
    ideal_busbw_gbps: float
    ideal_algorithm: str

    COLUMNS: ClassVar[tuple[str, ...]] = (
        *ClusterRow.COLUMNS,
        "algorithm",  # the runtime's pick
        "ideal_time_us",
        "ideal_busbw_gbps",
        "ideal_algorithm",
    )


@dataclass(kw_only=True)
class ClusterRuntimeEvaluation(ClusterEvaluation):
    """A cluster collective as a runtime runs it (``rows``), with the ideal composition kept."""

    runtime: str
    runtime_model: str  # one line: what the numbers model
    ideal: ClusterEvaluation


def cluster_runtime(name: str | None, default: str = "ideal") -> str:
    """``name`` checked (any case); None is ``default`` (a file's ``runtime.default``) when a cluster
    can run it, else ``ideal``, today's composition.

    Raises
    ------
    ParameterError
        Not one of :data:`CLUSTER_RUNTIMES`.
    """
    if name is None:
        return default if default in CLUSTER_RUNTIMES else "ideal"
    chosen = name.strip().lower()
    if chosen not in CLUSTER_RUNTIMES:
        raise ParameterError(f"expected one of {', '.join(CLUSTER_RUNTIMES)}", "runtime", repr(name))
    return chosen


def flow_share(plan: FabricPlan, algorithm: str) -> float:
    """The share of its NIC rate a flow keeps in ``algorithm``'s busiest cross-domain step."""
    return uplink_share(plan, flows_leaving(plan, algorithm))


def _nic_gbps_per_rank(domain: Topology, plan: FabricPlan) -> float:
    """A rank's scale-out NIC rate, raw, GB/s per direction."""
    return plan.choice.nic_gbit_per_chip / domain.spec.chip.ranks / 8


def inter_search(speeds: tuple[float, ...], nic_gbps: float, nics: int, nvlink_gbps: float, limit: int):
    """The ring's (channels, speed) across nodes: at each of NCCL's speeds, as many channels as the
    NICs carry (each channel one speed from one NIC) and every GPU's NVLinks carry (each channel
    passes every GPU), at most ``limit``; the largest total wins (the faster speed on a tie).

    Examples
    --------
    Eight NICs of 50 GB/s, 370.8 GB/s of NVLink per GPU, Hopper's speeds: 48 GB/s fits 7 channels
    through the NVLinks (336), 45 fits 8 (360).

    >>> inter_search((48.0, 45.0, 42.0, 40.0), 50.0, 8, 370.8, 32)
    (8, 45.0)
    """
    best = (0, 0.0)
    for speed in speeds:
        if speed > nic_gbps:
            continue
        channels = min(
            limit, nics * math.floor(nic_gbps / speed + 1e-9), math.floor(nvlink_gbps / speed + 1e-9)
        )
        if channels * speed > best[0] * best[1] + 1e-9:
            best = (channels, speed)
    if best[0] == 0:
        return 1, min(nic_gbps, nvlink_gbps)
    return best


def tree_speed(speeds: tuple[float, ...], speed: float, channels: int, nvlink_gbps: float) -> float:
    """The tree graph's ``bwIntra`` across nodes: search.cc's pass 2 (lines 1279-1282) raises it one
    speed at a time from the ring's ``speed`` while it is under twice ``bwInter`` (``speed``) and
    ``channels`` of it still fit a GPU's NVLinks (which a tree, not closing on the NIC, counts as
    ``n / (n - 1)`` of them, line 1163).

    >>> tree_speed((48.0, 45.0, 42.0), 45.0, 8, 423.8)
    48.0
    >>> tree_speed((12.0, 10.0, 9.0, 7.0, 6.0), 6.0, 8, 400.0)
    12.0
    """
    index = speeds.index(speed) if speed in speeds else len(speeds)
    current = speed
    while index > 0 and current < 2 * speed and channels * speeds[index - 1] <= nvlink_gbps + 1e-9:
        index -= 1
        current = speeds[index]
    return current


def nccl_cluster_system(domain: Topology, plan: FabricPlan):
    """The :class:`~trnsim.model.runtimes.nccl.NcclSystem` of every GPU of ``plan.domains`` copies
    of ``domain`` (see the module docstring).

    Raises
    ------
    NotApplicableError
        As :func:`~trnsim.model.runtimes.nccl_domain.nccl_system_of`, for the domain.
    """
    from trnsim.model.runtimes import nccl_constants as c
    from trnsim.model.runtimes.nccl_domain import nccl_system_of
    from trnsim.model.runtimes.nccl_system import NcclGraph

    local = nccl_system_of(domain, list(domain.chips))
    d = plan.domains
    if d == 1:
        return local
    n, cc = local.n_ranks, local.compute_capability
    nic = _nic_gbps_per_rank(domain, plan)
    key = 100 if cc >= 100 else 90 if cc >= 90 else 0
    nvlink = local.ring.total_intra_gbps
    channels, speed = inter_search(c.SPEEDS_INTER[key], nic, n, nvlink, c.RING_MAX_CHANNELS)
    kept = plan.choice.efficiency
    ring = speed * kept * flow_share(plan, "ring")
    tree_share = kept * flow_share(plan, "tree")
    tree_intra = tree_speed(c.SPEEDS_INTER[key], speed, channels, nvlink * n / (n - 1) if n > 1 else nvlink)
    nvls = None
    if local.nvls is not None:
        head = max((s for s in c.SPEEDS_INTER[key] if s <= nic), default=nic)
        nvls = NcclGraph(
            local.nvls.n_channels, local.nvls.bw_intra_gbps, head * kept * flow_share(plan, "tree")
        )
    hop = plan.choice.hop_ns / 1e3
    if nvls is not None:
        nvls = replace(nvls, latency_inter_us=hop)
    return replace(
        local,
        n_ranks=n * d,
        n_nodes=d,
        ring=NcclGraph(channels, ring, ring, hop),
        tree=NcclGraph(channels, tree_intra * tree_share, speed * tree_share, hop),
        nvls=nvls,
    )


def neuron_cluster_system(domain: Topology, plan: FabricPlan):
    """The :class:`~trnsim.model.runtimes.neuron.NeuronSystem` of every rank of ``plan.domains``
    copies of ``domain``: one node per domain, read from its graph (see the module docstring).

    Raises
    ------
    NotApplicableError
        The domain's chips do not all have the same scale-up bandwidth.
    """
    from trnsim.model.runtimes.neuron import NeuronSystem

    spec = domain.spec
    _neuron_applies(domain, plan)
    facts = getattr(spec.runtime, "neuron", None)  # runtime.neuron (HBM, call cost) where the schema has it
    per_chip = device_bandwidth_gbps(domain)
    low, high = min(per_chip.values()), max(per_chip.values())
    if not math.isclose(low, high, rel_tol=1e-9):
        raise NotApplicableError(
            f"{{runtime}} neuron on {domain.name}: the chips' scale-up bandwidth differs ({low:g} to "
            f"{high:g} GB/s); the Neuron model takes equal chips"
        )
    ranks = spec.chip.ranks
    dims = tuple(axis.size for axis in spec.torus.axes) if spec.kind == "torus" else None
    return NeuronSystem(
        chips_per_node=domain.planner.n_chips,
        ranks_per_chip=ranks,
        link_gbps_per_rank=high / ranks,
        nodes=plan.domains,
        efa_gbps_per_rank=_nic_gbps_per_rank(domain, plan) * flow_share(plan, "ring"),
        torus_dims=dims,
        efa_hop_latency_us=plan.choice.hop_us,
        **_neuron_facts(facts),
    )


def _neuron_facts(facts) -> dict:
    """What a file's ``runtime.neuron`` section adds: HBM bandwidth and the per-call cost."""
    given = {}
    if getattr(facts, "hbm_gbps", None) is not None:
        given["hbm_gbps_per_chip"] = facts.hbm_gbps
    if getattr(facts, "call_us", None) is not None:
        given["call_overhead_us"] = facts.call_us
    return given


def _neuron_applies(domain: Topology, plan: FabricPlan) -> None:
    """Refuse what the Neuron runtime does not run: GPUs (a file with NCCL's facts), a scale-out
    network other than EFA, a file whose schema knows ``runtime.neuron`` but gives none."""
    runtime = domain.spec.runtime
    why = None
    if runtime.nccl is not None:
        why = "its chips are GPUs (the file gives runtime.nccl): NCCL runs their collectives"
    elif plan.choice.network != "efa":
        why = f"the Neuron runtime crosses nodes over EFA, the file's scale-out is {plan.choice.network}"
    elif hasattr(runtime, "neuron") and runtime.neuron is None:
        why = "the file has no runtime.neuron section"
    if why:
        raise NotApplicableError(f"{{runtime}} neuron on {domain.name}: {why}")


def _row(ideal: ClusterEvaluation, row: ClusterRow, time_us: float, choice: str) -> ClusterRuntimeRow:
    """``row`` with the runtime's time and choice in place of the ideal's, which it keeps beside."""
    bound_us = row.efficiency * row.time_us
    kept = {f.name: getattr(row, f.name) for f in fields(ClusterRow)}
    kept.update(
        time_us=time_us,
        algbw_gbps=algbw_gbps(row.bytes, time_us),
        busbw_gbps=busbw_gbps(_op(ideal.op), ideal.ranks, row.bytes, time_us),
        algorithm=choice,
        efficiency=bound_us / time_us if time_us > 0 else 0.0,
    )
    return ClusterRuntimeRow(
        **kept, ideal_time_us=row.time_us, ideal_busbw_gbps=row.busbw_gbps, ideal_algorithm=row.algorithm
    )


def _op(name: str):
    from trnsim.collectives.ops import get_op

    return get_op(name)


def check_cluster_runtime(domain: Topology, plan: FabricPlan, name: str) -> None:
    """Refuse, before any work, a runtime that cannot model this cluster (the
    :class:`~trnsim.errors.NotApplicableError` :func:`apply_cluster_runtime` would raise)."""
    name = cluster_runtime(name)
    if name == "nccl":
        nccl_cluster_system(domain, plan)
    elif name == "neuron":
        neuron_cluster_system(domain, plan)


def choose_cluster_runtime(
    domain: Topology, plan: FabricPlan, name: str | None, op: str | None = None
) -> tuple[str, str | None]:
    """The runtime a cluster run uses, and a note when the file's default gave way to ``ideal``.

    ``name`` (asked for) is checked and kept: a runtime that cannot model the cluster, or whose model
    does not cover ``op`` (:func:`trnsim.model.runtime.modelled_ops`: NCCL's broadcast, reduce and
    the four basic ops; the Neuron runtime's four), refuses it, in one line. With no ``name`` the
    file's ``runtime.default`` prices the run when it can; when it cannot (a failed part left the
    chips unequal, an op its model does not cover), the run is the ideal composition and the note
    says why, as :func:`trnsim.model.runtime.choose_runtime` does for one domain.

    Raises
    ------
    ParameterError, NotApplicableError
        ``name`` is unknown, or cannot model this cluster or this op.
    """
    chosen = cluster_runtime(name, domain.spec.runtime.default)
    if chosen == "ideal":
        return chosen, None
    uncovered = _uncovered(chosen, op)
    if name is not None:
        if uncovered is not None:
            raise NotApplicableError(f"{{runtime}} {chosen}: {uncovered}; run with {{runtime}} ideal")
        check_cluster_runtime(domain, plan, chosen)
        return chosen, None
    reason = uncovered
    if reason is None:
        try:
            check_cluster_runtime(domain, plan, chosen)
        except NotApplicableError as exc:
            reason = exc.template.removeprefix(f"{{runtime}} {chosen} on {domain.name}: ")
    if reason is None:
        return chosen, None
    return "ideal", (
        f"{domain.name}'s default runtime {chosen} does not model this cluster ({reason}): ideal numbers"
    )


def _uncovered(runtime: str, op: str | None) -> str | None:
    """Why ``runtime``'s model does not price ``op`` (None: it does, or no op was named)."""
    from trnsim.model.runtime import modelled_ops

    ops = modelled_ops(runtime)
    if op is None or ops is None or op in ops:
        return None
    return f"its model covers {', '.join(ops)}, not {op}"


def apply_cluster_runtime(domain: Topology, ideal: ClusterEvaluation, name: str | None) -> ClusterEvaluation:
    """``ideal`` (a cluster collective over ``ideal.plan``) as runtime ``name`` runs it; ``ideal``
    returns ``ideal`` itself.

    Raises
    ------
    NotApplicableError
        The runtime cannot model this cluster or this op; the line says why.
    """
    name = cluster_runtime(name)
    if name == "ideal":
        return ideal
    uncovered = _uncovered(name, ideal.op)
    if uncovered is not None:
        raise NotApplicableError(f"{{runtime}} {name}: {uncovered}; run with {{runtime}} ideal")
    rows = []
    if name == "nccl":
        from trnsim.model.runtimes import nccl

        system = nccl_cluster_system(domain, ideal.plan)
        for row in ideal.rows:
            pick = nccl.predict(system, ideal.op, row.bytes).pick
            rows.append(_row(ideal, row, pick.time_us, f"{pick.algorithm}/{pick.protocol}"))
        model = _describe_nccl(system)
    else:
        from trnsim.model.runtimes import neuron

        system = neuron_cluster_system(domain, ideal.plan)
        for row in ideal.rows:
            pick = neuron.predict(system, ideal.op, row.bytes).pick
            rows.append(_row(ideal, row, pick.time_us, pick.algorithm))
        model = (
            f"the Neuron runtime's hierarchical algorithms ({system.nodes} nodes of {system.chips_per_node} "
            f"chips x {system.ranks_per_chip} ranks, {system.efa_gbps_per_rank:.2f} GB/s of NIC per rank "
            f"after collisions, {system.efa_hop_latency_us:g} us per EFA hop)"
        )
    kept = {f.name: getattr(ideal, f.name) for f in fields(ClusterEvaluation) if f.init}
    kept["rows"] = rows
    return ClusterRuntimeEvaluation(**kept, runtime=name, runtime_model=model, ideal=ideal)


def _describe_nccl(system) -> str:
    from trnsim.model.runtimes import nccl_constants

    ring, nvls = system.ring, system.nvls
    text = (
        f"NCCL {nccl_constants.NCCL_VERSION}'s tuner on {system.n_nodes} nodes of {system.ranks_per_node} "
        f"GPUs (compute capability {system.compute_capability}; ring {ring.n_channels} channels x "
        f"{ring.bw_inter_gbps:.2f} GB/s across nodes"
    )
    if nvls is not None:
        text += (
            f", NVLS {nvls.n_channels} x {nvls.bw_intra_gbps:g} GB/s inside, {nvls.bw_inter_gbps:.2f} across"
        )
    return text + ")"
