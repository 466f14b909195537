"""``trnsim cluster collective``: a collective across domains over the scale-out network."""

from typing import Annotated

import typer

from trnsim.cli.cluster.common import (
    ASSUMPTIONS,
    Chips,
    ChipsPerRack,
    Design,
    Domains,
    FabricTbit,
    HopUs,
    Layers,
    NicGbit,
    OldLayers,
    OldPolicy,
    Oversubscription,
    Policy,
    PortGbit,
    RuntimeChoice,
    TorsPerRack,
    TorTbit,
    domain_and_fabric,
    n,
)
from trnsim.cli.compat import renamed
from trnsim.cli.flags import edits_text
from trnsim.cli.options import (
    CalibrationOption,
    FailOption,
    FormatOption,
    MaxBytes,
    MinBytes,
    RoutingOption,
    SetOption,
    Sizes,
    SkuOption,
    StepFactor,
    TopologyOption,
    algorithm,
    edits,
    note_calibration_target,
    resolve_sizes,
)
from trnsim.outputs.render import Column, Format, Table, emit


def collective(
    op: Annotated[
        str,
        typer.Argument(
            help="allreduce, allgather, reducescatter, alltoall, broadcast, reduce, gather, scatter, sendrecv, "
            "permute, allgatherv, reducescatterv or alltoallv."
        ),
    ],
    sku: SkuOption = None,
    topology: TopologyOption = None,
    overrides: SetOption = None,
    domains: Domains = None,
    chips: Chips = None,
    minbytes: MinBytes = None,
    maxbytes: MaxBytes = None,
    stepfactor: StepFactor = None,
    sizes: Sizes = None,
    inter_algo: Annotated[
        str,
        typer.Option(
            "--inter-algo",
            help="Across domains: auto (fastest per size), ring, rdh (halving-doubling), tree; for all-to-all, "
            "gather and scatter pairwise (D-1 steps) or direct (every send at once); for broadcast and reduce "
            "chain or tree (pipelined); for sendrecv direct.",
        ),
    ] = "auto",
    intra_algo: Annotated[
        str, typer.Option("--intra-algo", help="Inside each domain (auto: the fastest).")
    ] = "auto",
    no_overlap: Annotated[
        bool,
        typer.Option("--no-overlap", help="Run the phases one after the other (no pipelining in chunks)."),
    ] = False,
    nic_gbit: NicGbit = None,
    port_gbit: PortGbit = None,
    tor_tbit: TorTbit = None,
    fabric_tbit: FabricTbit = None,
    tors: TorsPerRack = None,
    per_rack: ChipsPerRack = None,
    design: Design = None,
    oversubscription: Oversubscription = None,
    policy: Policy = None,
    hop_us: HopUs = None,
    layers: Layers = None,
    routing: RoutingOption = None,
    calibration: CalibrationOption = None,
    fail: FailOption = None,
    runtime: RuntimeChoice = None,
    old_policy: OldPolicy = None,
    old_layers: OldLayers = None,
    fmt: FormatOption = Format.table,
) -> None:
    """A collective over every chip of a cluster: inside each domain on its graph, across domains over
    the scale-out network (EFA, InfiniBand, RoCE or a TPU's DCN: the file's scale_out.network).

    Each op composes phases inside domains (on the domain's graph) and one across them (closed form),
    pipelined in chunks (--runtime ideal); the root is rank 0 of the cluster, a sendrecv's each rank
    sends to the next:

    - allreduce: reduce-scatter in each domain, all-reduce across among same-position ranks, all-gather in each domain
    - allgather: all-gather across among same-position ranks, then in each domain; reducescatter: the mirror
    - alltoall: all-to-all in each domain, then each rank's sends to its counterparts across
    - broadcast: scatter in the root's domain, broadcast of each piece across (chain or tree), all-gather in every domain
    - reduce: reduce-scatter in every domain, reduce of each piece across to the root's domain, gather there
    - gather: each rank's block to its counterpart in the root's domain, then gather there; scatter: the mirror
    - sendrecv, permute: the pairs inside each domain on its graph, each domain's last rank to the next domain's first over the NICs, side by side
    - allgatherv, reducescatterv, alltoallv: even counts, as allgather, reducescatter, alltoall

    Busbw follows nccl-tests over all the cluster's ranks; the bound is the tighter of the NICs' cut
    and each rank's own links. --runtime nccl prices NCCL's own cross-node algorithms (ring, tree,
    NVLS tree, PAT; broadcast and reduce ring) and names its pick per size; --runtime neuron the
    Neuron runtime's hierarchical ones; the ideal busbw stays beside. A runtime whose model does not
    cover the op refuses it when named; the file's default gives way to ideal with a note.

    Assumed (not published; --set scale_out.KEY=VALUE or the options change them): the NIC at 90% of
    its rate (scale_out.efficiency), 15 us per step between domains (Neuron's documented EFA figure),
    each ToR its own plane, non-blocking above the ToR; RoCE and DCN hash each flow onto one uplink
    (ECMP), EFA sprays, InfiniBand routes adaptively (sprays: --efa-routing hash for static routes).

    Examples:

        trnsim cluster collective allreduce --sku nl64 --domains 6250
        trnsim cluster collective alltoall --sku nl64 --domains 16 --efa-routing hash
        trnsim cluster collective allreduce --sku nl72x2 --domains 16 --fail cable:5
        trnsim cluster collective allreduce --sku nvl72 --domains 20 --runtime nccl
        trnsim cluster collective allreduce --sku h100 --domains 2 --runtime nccl
        trnsim cluster collective broadcast --sku nl16 --domains 4 --sizes 1M,1G
    """
    from dataclasses import replace

    from trnsim.collectives.arguments import Arguments
    from trnsim.collectives.ops import get_op
    from trnsim.model.backend import Selection
    from trnsim.model.cluster.runtime import apply_cluster_runtime, choose_cluster_runtime, cluster_runtime
    from trnsim.outputs.render import print_error
    from trnsim.routing.policy import routing_of
    from trnsim.spec.schema import NETWORK_NAMES

    op = get_op(op).name
    policy = renamed("--policy", "--efa-routing", old_policy, policy)
    layers = renamed("--layers", "--switch-layers", old_layers, layers)
    size_list = resolve_sizes(minbytes, maxbytes, stepfactor, sizes)
    intra_algo = algorithm(intra_algo, "--intra-algo")
    domain, cluster = domain_and_fabric(
        sku, topology, overrides, domains, chips, nic_gbit, port_gbit, tor_tbit, fabric_tbit, tors, per_rack,
        design, oversubscription, policy, hop_us, layers, routing, calibration, fail,
    )  # fmt: skip
    note_calibration_target(calibration, [domain.name])
    cluster_runtime(runtime)  # an unknown name is refused first
    cluster = replace(cluster, inter_algo=inter_algo, overlap=not no_overlap)
    backend = Selection(fabric=cluster).backend(domain)
    plan = backend.plan
    runtime, note = choose_cluster_runtime(domain, plan, runtime, op)
    if note is not None:
        print_error(note, label="note")
    result = apply_cluster_runtime(domain, backend.evaluate(op, size_list, intra_algo), runtime)
    shares = ", ".join(f"{name} {share:.2f}" for name, share in result.uplink_share.items())
    network = NETWORK_NAMES[plan.choice.network]
    shape = Arguments().describe(get_op(op), result.ranks)  # a cluster takes no root, pairs or counts
    header = (
        f"{domain.name} x {plan.domains:,} domains = {result.ranks:,} ranks, {result.op}"
        f"{f' ({shape})' if shape else ''}; {network} "
        f"{plan.choice.nic_gbit_per_chip:g} Gbit/s per chip at {plan.choice.efficiency:.0%} "
        f"({result.nic_gbps:.2f} GB/s per rank), {plan.choice.hop_us:g} us per step across domains; "
        f"{plan.choice.design} design, {plan.choice.policy} ({'share of the NIC rate per flow: ' + shares}); "
        f"{n(plan.n_layers, 'switch layer')}; {'pipelined' if not no_overlap else 'phases in sequence'}"
    )
    applied = tuple(edits(overrides, routing, calibration, fail))
    if applied:
        header += f"; every domain with {edits_text(applied)}"
    header += f"; runtime {runtime}" + (
        f": {result.runtime_model}" if runtime != "ideal" else " (trnsim's composition)"
    )
    rows = [row.as_dict() for row in result.rows]
    document = {
        "schema": "trnsim/1",
        "sku": domain.name,
        "op": result.op,
        "op_shape": shape or None,
        "runtime": runtime,
        "network": plan.choice.network,
        "policy": plan.choice.policy,
        "domains": plan.domains,
        "ranks": result.ranks,
        "ranks_per_domain": result.ranks_per_domain,
        "uplink_share": result.uplink_share,
        "nic_gbps": result.nic_gbps,
        "layers": plan.n_layers,
        "overrides": list(applied),
        "routing": routing_of(domain.spec).label,
        "dropped_sizes": result.dropped,
        "rows": rows,
    }
    notes = _notes(result)
    tables = [Table(header, _columns(runtime), rows, notes)]
    emit(document, tables, fmt)


def _columns(runtime: str) -> list:
    """The table's columns: the composition's; a runtime's pick and the ideal busbw beside when one runs."""
    picked = []
    if runtime != "ideal":
        picked = [
            Column("algorithm", f"{runtime} picks", align="left"),
            # a runtime's table says what it runs first: the ideal's figures give way on 80 columns
            Column("ideal_busbw_gbps", "ideal busbw", "{:,.2f}", drop_priority=0),
        ]
    return [
        Column("bytes", "size (B)"),
        Column("time_us", "time (us)", "{:,.2f}"),
        Column("algbw_gbps", "algbw (GB/s)", "{:,.2f}", drop_priority=7),
        Column("busbw_gbps", "busbw (GB/s)", "{:,.2f}"),
        *picked,
        Column(
            "inter_algorithm",
            "across" if runtime == "ideal" else "ideal across",
            align="left",
            drop_priority=None if runtime == "ideal" else 1,
        ),
        # "ring + multidim" wraps between the phases' algorithms on a narrow terminal
        Column("intra_algorithms", "inside", lambda v: v.replace("+", " + "), "left", drop_priority=2),
        Column("chunks", "chunks", drop_priority=4),
        Column("intra_us", "inside/chunk (us)", "{:,.2f}", drop_priority=6),
        Column("inter_us", "across/chunk (us)", "{:,.2f}", drop_priority=5),
        Column("ceiling_busbw_gbps", "ceiling", "{:,.1f}", drop_priority=3),
        Column("bound_busbw_gbps", "bound", "{:,.1f}"),
        Column("efficiency", "eff %", lambda v: f"{100 * v:.1f}"),
    ]


def _notes(result) -> list[str]:
    """What the table rests on: the bound's limit, the assumptions, sizes left out or rounded."""
    notes = [
        f"# bound: {result.rows[-1].bound_limited_by} at the largest size; ceiling: this composition's "
        "busiest resource (scale-up links or NICs) without latency",
        f"# {ASSUMPTIONS}",
    ]
    if result.dropped:
        notes.append(
            f"# sizes left out (below one nccl-tests unit on {result.ranks:,} ranks): {result.dropped}"
        )
    if any(row.bytes != row.requested_bytes for row in result.rows):
        notes.append("# sizes rounded down as nccl-tests does on all the cluster's ranks")
    return notes
