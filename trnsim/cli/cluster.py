"""``trnsim cluster``: many scale-up domains over the EFA scale-out network: the fabric, and collectives."""

from typing import Annotated

import typer

from trnsim.cli.compat import hidden, renamed
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
from trnsim.errors import UsageError
from trnsim.outputs.render import Column, Format, Table, emit, kv_table
from trnsim.spec.overrides import edits_text

app = typer.Typer(
    help="Clusters of scale-up domains over EFA: the scale-out fabric and collectives across domains."
    "\n\nExamples:\n\ntrnsim cluster fabric --sku nl64 --chips 400000\n"
    "trnsim cluster collective allreduce --sku nl64 --domains 6250",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

Domains = Annotated[int | None, typer.Option("--domains", help="Scale-up domains in the cluster.")]
Chips = Annotated[
    int | None,
    typer.Option("--chips", help="Chips in the cluster instead of --domains (rounded up to whole domains)."),
]
NicGbit = Annotated[
    float | None, typer.Option("--nic-gbit", help="EFA Gbit/s per chip (default: the file's scale_out).")
]
PortGbit = Annotated[
    float | None,
    typer.Option("--port-gbit", help="Logical port speed, Gbit/s (default 100: AWS's default logical port)."),
]
TorTbit = Annotated[
    float | None,
    typer.Option("--tor-tbit", help="ToR switch capacity, Tbit/s (default: the file's, else 12.8)."),
]
FabricTbit = Annotated[
    float | None,
    typer.Option(
        "--fabric-tbit", help="Leaf/spine switch capacity, Tbit/s (default: the file's, else as the ToR)."
    ),
]
TorsPerRack = Annotated[
    int | None,
    typer.Option("--tors-per-rack", help="ToR switches per rack, each its own plane (default 2: dual ToR)."),
]
ChipsPerRack = Annotated[
    int | None,
    typer.Option(
        "--chips-per-rack", help="Chips per rack (default: the file's; a switched file's rack size)."
    ),
]
Design = Annotated[
    str | None,
    typer.Option("--design", help="tor (every chip of a rack on its ToRs) or rail (rail-optimised leaves)."),
]
Oversubscription = Annotated[
    float | None,
    typer.Option("--oversubscription", help="ToR ports down per port up (default 1: non-blocking)."),
]
Policy = Annotated[
    str | None,
    typer.Option(
        "--efa-routing",
        help="How flows use the scale-out paths: spray (SRD: every flow's packets over all paths; the default) or hash (ECMP: one path per "
        "flow, so flows collide on ToR uplinks; expected throughput by Monte Carlo).",
    ),
]
HopUs = Annotated[
    float | None,
    typer.Option(
        "--hop-us", help="Latency of one step across EFA, us (default 15: Neuron's documented figure)."
    ),
]
Layers = Annotated[
    int | None,
    typer.Option("--switch-layers", help="Switch layers, the ToR counted (default: the fewest)."),
]
OldPolicy = Annotated[str | None, hidden("--policy")]
OldLayers = Annotated[int | None, hidden("--layers")]

ASSUMPTIONS = (
    "assumed: each ToR of a rack is its own plane, a chip's ports split evenly over them; non-blocking "
    "above the ToR; EFA efficiency 0.9 and 15 us per cross-domain step unless the file says otherwise"
)


def _domain_and_plan(
    sku, topology, overrides, domains, chips, nic_gbit, port_gbit, tor_tbit, fabric_tbit, tors, per_rack,
    design, oversubscription, policy, hop_us, layers, routing=None, calibration=None, fail=None,
):  # fmt: skip
    """Load the domain and count the fabric (the checks of every option happen here).

    ``--routing``, ``--calibration`` and ``--fail`` edit the domain's graph as on ``collective``;
    the fabric is counted for the healthy domain (its racks and NICs do not change when a part fails).
    """
    from trnsim.cli.options import load
    from trnsim.topology.scaleout import fabric_choice, plan_fabric

    if (sku is None) == (topology is None):
        raise UsageError("name the domain: --sku NAME or --topology FILE")
    if domains is not None and chips is not None:
        raise UsageError(f"--domains {domains} and --chips {chips}: give one of them, not both")
    if domains is None and chips is None:
        named = f"--sku {sku}" if sku is not None else f"--topology {topology}"
        raise UsageError(f"{named}: give the cluster's size: --domains N or --chips N")
    domain = load(sku, topology, edits(overrides, routing, calibration, fail))
    healthy = load(sku, topology, edits(overrides, routing, calibration)) if fail else domain
    per_domain = healthy.n_chips
    if chips is not None:
        if not 1 <= chips <= 1 << 30:
            raise UsageError(f"--chips: expected 1 to 1,073,741,824, got {chips}")
        domains = -(-chips // per_domain)
    if not 1 <= domains <= 1 << 24:
        raise UsageError(f"--domains: expected 1 to 16,777,216, got {domains}")
    choice = fabric_choice(
        domain.spec,
        per_domain,
        domain.spec.switched.racks if domain.spec.switched else None,
        nic_gbit_per_chip=nic_gbit,
        port_gbit=port_gbit,
        tor_tbit=tor_tbit,
        fabric_tbit=fabric_tbit,
        tors_per_rack=tors,
        chips_per_rack=per_rack,
        design=design.strip().lower() if design else None,
        oversubscription=oversubscription,
        policy=policy.strip().lower() if policy else None,
        hop_ns=None if hop_us is None else hop_us * 1e3,
    )
    return domain, plan_fabric(choice, per_domain, domains, layers)


def fabric(
    sku: SkuOption = None,
    topology: TopologyOption = None,
    overrides: SetOption = None,
    domains: Domains = None,
    chips: Chips = None,
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
    old_policy: OldPolicy = None,
    old_layers: OldLayers = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Size the scale-out fabric of a cluster: layers, switches, links, bisection, the largest cluster.

    Switch math: a switch of C Tbit/s in P Gbit/s ports has radix k = C/P; a folded Clos reaches k^2/2
    endpoints on 2 layers and k^3/4 on 3. The plan puts every rack's chips on its ToRs (each ToR a
    plane) and a non-blocking Clos above them.

    Assumed (not published): a chip's ports split evenly over its rack's ToRs, each ToR its own plane;
    no oversubscription above the ToR; copper from chip to ToR, optics above.

    Examples:

        trnsim cluster fabric --sku nl64 --chips 400000
        trnsim cluster fabric --sku nl72x2 --domains 256 --design rail
    """
    from trnsim.topology.scaleout import endpoints, radix

    policy = renamed("--policy", "--efa-routing", old_policy, policy)
    layers = renamed("--layers", "--switch-layers", old_layers, layers)
    domain, plan = _domain_and_plan(
        sku, topology, overrides, domains, chips, nic_gbit, port_gbit, tor_tbit, fabric_tbit, tors, per_rack,
        design, oversubscription, policy, hop_us, layers,
    )  # fmt: skip
    choice = plan.choice
    shown = range(2, max(4, plan.n_layers) + 1)
    k_tor = radix(choice.tor_tbit, choice.port_gbit)
    k = radix(choice.fabric_tbit, choice.port_gbit)
    summary = [
        ("domains", f"{plan.domains:,} x {plan.chips_per_domain} chips = {plan.chips:,} chips"),
        ("racks", f"{plan.racks:,} of {choice.chips_per_rack} chips, {_n(choice.tors_per_rack, 'ToR')} each ({_n(plan.planes, 'plane')})"),
        ("scale-out NIC per chip", f"{choice.nic_gbit_per_chip:g} Gbit/s = {choice.nic_gbps:g} GB/s = {_n(plan.ports_per_chip, 'port')} of {choice.port_gbit:g}G"),
        ("ToR", f"{choice.tor_tbit:g}T: radix {k_tor}, {plan.tor_down} ports down, {plan.tor_up} up"),
        ("fabric switch", f"{choice.fabric_tbit:g}T: radix {k}"),
        ("layers", f"{plan.n_layers} (the ToR counted)"),
        ("switches", f"{plan.switches:,}"),
        ("chip-ToR links (copper)", f"{plan.chip_links:,}"),
        ("links above the ToR (optics)", ", ".join(f"{n:,}" for n in plan.fabric_links) or "-"),
        ("bisection (per direction)", f"{plan.bisection_gbps:,.1f} GB/s"),
        ("largest cluster, these switches", ", ".join(f"{plan.largest(n):,} chips on {n} layers" for n in shown)),
        (
            "switch math",
            f"radix {k}: k^2/2 = {endpoints(k, 2):,} endpoints on 2 layers, k^3/4 = {endpoints(k, 3):,} on 3",
        ),
        ("design, routing", f"{choice.design}, {choice.policy}"),
    ]  # fmt: skip
    layer_rows = [
        {
            "layer": layer.name,
            "radix": layer.radix,
            "switches": layer.switches * plan.planes,
            "per_plane": layer.switches,
            "down": layer.ports_down,
            "up": layer.ports_up,
        }
        for layer in plan.layers
    ]
    document = {
        "schema": "trnsim/1",
        "sku": domain.name,
        "chips_per_domain": plan.chips_per_domain,
        "domains": plan.domains,
        "chips": plan.chips,
        "racks": plan.racks,
        "planes": plan.planes,
        "layers": layer_rows,
        "switches": plan.switches,
        "chip_links": plan.chip_links,
        "fabric_links": plan.fabric_links,
        "bisection_gbps": plan.bisection_gbps,
        "largest_chips": {str(n): plan.largest(n) for n in shown},
        "endpoints_2_layers": endpoints(k, 2),
        "endpoints_3_layers": endpoints(k, 3),
        "choice": dict(choice.__dict__),
    }
    tables = [
        kv_table("scale-out fabric", summary),
        Table(
            "switches per layer (all planes; ports per switch used down and up)",
            [
                Column("layer", "layer", align="left"),
                Column("radix", "radix"),
                Column("switches", "switches", "{:,}"),
                Column("per_plane", "per plane", "{:,}"),
                Column("down", "down"),
                Column("up", "up"),
            ],
            layer_rows,
            [f"# {ASSUMPTIONS}"],
        ),
    ]
    emit(document, tables, fmt)


def collective(
    op: Annotated[str, typer.Argument(help="allreduce, allgather, reducescatter or alltoall.")],
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
            help="Across domains: auto (fastest per size), ring, rdh (halving-doubling), tree; for all-to-all "
            "pairwise (D-1 steps) or direct (every send at once).",
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
    old_policy: OldPolicy = None,
    old_layers: OldLayers = None,
    fmt: FormatOption = Format.table,
) -> None:
    """A collective over every chip of a cluster: inside each domain on its graph, across domains over EFA.

    All-reduce = reduce-scatter in each domain, all-reduce across domains among same-position ranks,
    all-gather in each domain, pipelined in chunks. Busbw follows nccl-tests over all the cluster's
    ranks; the bound is the tighter of the EFA cut and each rank's own links.

    Assumed (not published; --set scale_out.KEY=VALUE or the options change them): EFA at 90% of its
    rate (scale_out.efficiency), 15 us per step between domains (Neuron's documented figure), each
    ToR its own plane, non-blocking above the ToR.

    Examples:

        trnsim cluster collective allreduce --sku nl64 --domains 6250
        trnsim cluster collective alltoall --sku nl64 --domains 16 --efa-routing hash
        trnsim cluster collective allreduce --sku nl72x2 --domains 16 --fail cable:5
    """
    from trnsim.model.cluster import evaluate_cluster
    from trnsim.routing.policy import routing_of

    policy = renamed("--policy", "--efa-routing", old_policy, policy)
    layers = renamed("--layers", "--switch-layers", old_layers, layers)
    size_list = resolve_sizes(minbytes, maxbytes, stepfactor, sizes)
    intra_algo = algorithm(intra_algo, "--intra-algo")
    domain, plan = _domain_and_plan(
        sku, topology, overrides, domains, chips, nic_gbit, port_gbit, tor_tbit, fabric_tbit, tors, per_rack,
        design, oversubscription, policy, hop_us, layers, routing, calibration, fail,
    )  # fmt: skip
    note_calibration_target(calibration, [domain.name])
    result = evaluate_cluster(domain, plan, op, size_list, inter_algo, intra_algo, overlap=not no_overlap)
    shares = ", ".join(f"{name} {share:.2f}" for name, share in result.uplink_share.items())
    header = (
        f"{domain.name} x {plan.domains:,} domains = {result.ranks:,} ranks, {result.op}; EFA "
        f"{plan.choice.nic_gbit_per_chip:g} Gbit/s per chip at {plan.choice.efficiency:.0%} "
        f"({result.nic_gbps:.2f} GB/s per rank), {plan.choice.hop_ns / 1e3:g} us per step across domains; "
        f"{plan.choice.design} design, {plan.choice.policy} ({'share of the NIC rate per flow: ' + shares}); "
        f"{plan.n_layers} switch layers; {'pipelined' if not no_overlap else 'phases in sequence'}"
    )
    applied = tuple(edits(overrides, routing, calibration, fail))
    if applied:
        header += f"; every domain with {edits_text(applied)}"
    rows = [row.as_dict() for row in result.rows]
    document = {
        "schema": "trnsim/1",
        "sku": domain.name,
        "op": result.op,
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
    tables = [
        Table(
            header,
            [
                Column("bytes", "size (B)"),
                Column("time_us", "time (us)", "{:,.2f}"),
                Column("algbw_gbps", "algbw (GB/s)", "{:,.2f}", drop_priority=7),
                Column("busbw_gbps", "busbw (GB/s)", "{:,.2f}"),
                Column("inter_algorithm", "across", align="left"),
                # "ring + multidim" wraps between the phases' algorithms on a narrow terminal
                Column(
                    "intra_algorithms", "inside", lambda v: v.replace("+", " + "), "left", drop_priority=2
                ),
                Column("chunks", "chunks", drop_priority=4),
                Column("intra_us", "inside/chunk (us)", "{:,.2f}", drop_priority=6),
                Column("inter_us", "across/chunk (us)", "{:,.2f}", drop_priority=5),
                Column("ceiling_busbw_gbps", "ceiling", "{:,.1f}", drop_priority=3),
                Column("bound_busbw_gbps", "bound", "{:,.1f}"),
                Column("efficiency", "eff %", lambda v: f"{100 * v:.1f}"),
            ],
            rows,
            notes,
        )
    ]
    emit(document, tables, fmt)


app.command("fabric")(fabric)
app.command("collective")(collective)


def _n(count: float, noun: str) -> str:
    """``1 ToR``, ``2 planes``, ``0.5 ports`` (a count with its noun, plural unless exactly one)."""
    return f"{count:g} {noun}{'' if count == 1 else 's'}"
