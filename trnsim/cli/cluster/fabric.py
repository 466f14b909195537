"""``trnsim cluster fabric``: the scale-out fabric a cluster of domains needs."""

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
    TorsPerRack,
    TorTbit,
    domain_and_fabric,
    n,
)
from trnsim.cli.compat import renamed
from trnsim.cli.options import (
    FormatOption,
    SetOption,
    SkuOption,
    TopologyOption,
)
from trnsim.outputs.render import Column, Format, Table, emit, kv_table


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
    domain, cluster = domain_and_fabric(
        sku, topology, overrides, domains, chips, nic_gbit, port_gbit, tor_tbit, fabric_tbit, tors, per_rack,
        design, oversubscription, policy, hop_us, layers,
    )  # fmt: skip
    plan = cluster.plan(domain)
    choice = plan.choice
    shown = range(2, max(4, plan.n_layers) + 1)
    k_tor = radix(choice.tor_tbit, choice.port_gbit)
    k = radix(choice.fabric_tbit, choice.port_gbit)
    summary = [
        ("domains", f"{plan.domains:,} x {plan.chips_per_domain} chips = {plan.chips:,} chips"),
        ("racks", f"{plan.racks:,} of {choice.chips_per_rack} chips, {n(choice.tors_per_rack, 'ToR')} each ({n(plan.planes, 'plane')})"),
        ("scale-out NIC per chip", f"{choice.nic_gbit_per_chip:g} Gbit/s = {choice.nic_gbps:g} GB/s = {n(plan.ports_per_chip, 'port')} of {choice.port_gbit:g}G"),
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
        ("network, design, routing", f"{choice.network}, {choice.design}, {choice.policy}"),
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
