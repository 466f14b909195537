"""The system's share of its scale-out network, counted from the file's ``scale_out`` section.

The fabric is :func:`trnsim.topology.scaleout.plan_fabric`'s (docs/sources.md#clos-math): every
rack has ``tors_per_rack`` ToRs, each a plane, with ``d`` ports down to the chips and ``u`` up; above
the ToRs each plane is a folded Clos of radix-``k`` switches (``k`` = fabric_tbit / port speed), the
lower layers ``k/2`` down and ``k/2`` up, the top layer ``k`` down, so a cluster's fabric grows with
its ToR uplinks. The system's share of it is exact arithmetic on its own uplinks: ``U`` uplinks per
plane take ``U / (k/2)`` switches of every lower layer and ``U / k`` of the top one, and ``U`` links
cross every boundary between layers. How many layers there are depends on the cluster: the system
is taken as one of ``domains`` domains (an assumption, :data:`DEFAULT_CLUSTER_CHIPS` chips unless
the caller says), and the layers are the fewest that connect that cluster's racks.

Assumptions (named in the bill's notes): a NIC of the part's capacity serves ``capacity / rate``
chips; chip to ToR over passive copper in the rack; optics above the ToR, a transceiver at each end
of every link.
"""

import math

from trnsim.studies.cost.bill import Item
from trnsim.topology.graph import Topology

# the cluster a system's scale-out share is counted in, unless the caller gives its domains: an
# assumption, a large training cluster (Project Rainier is about 400,000 chips; range 1,000-500,000)
DEFAULT_CLUSTER_CHIPS = 32_768
NIC_PARTS = {"efa": "nic-efa", "infiniband": "nic-infiniband", "roce": "nic-roce", "dcn": "nic-dcn"}
SWITCH_PARTS = {
    "efa": "switch-ethernet",
    "infiniband": "switch-infiniband",
    "roce": "switch-ethernet",
    "dcn": "switch-ethernet",
}


def default_domains(chips: int) -> int:
    """Domains in the assumed cluster of :data:`DEFAULT_CLUSTER_CHIPS` chips (at least 1)."""
    return max(1, DEFAULT_CLUSTER_CHIPS // max(1, chips))


def scale_out_items(topology: Topology, domains: int | None = None) -> tuple[list[Item], list[str]]:
    """The NICs, ToRs, fabric switches, copper cables and optical transceivers of the system's share
    of its cluster's scale-out fabric, and notes on how they were counted.

    Returns ``([], [note])`` when the file describes no scale-out network.

    Raises
    ------
    UsageError
        When the fabric cannot be built (ports that do not split over the ToRs, a ToR too small).
    """
    from trnsim.topology.scaleout import fabric_choice, plan_fabric, radix

    spec = topology.spec
    if spec.scale_out is None:
        return [], [f"{spec.name} has no scale_out section: no scale-out network is counted"]
    chips = topology.n_chips
    racks = spec.switched.racks if spec.kind == "switched" else None
    choice = fabric_choice(spec, chips, racks)
    domains = default_domains(chips) if domains is None else domains
    plan = plan_fabric(choice, chips, domains)
    share = 1 / plan.domains  # the system's share of every per-cluster count
    planes = plan.planes
    rack_share = plan.racks * share  # racks of the system (a fraction when a rack holds several)
    network = choice.network
    items = [
        Item(
            "NIC",
            (NIC_PARTS[network],),
            None,
            gbit=chips * choice.nic_gbit_per_chip,
            fabric="scale-out",
            detail=f"{choice.nic_gbit_per_chip:g} Gbit/s per chip",
        ),
        Item(
            "ToR switch",
            (SWITCH_PARTS[network],),
            rack_share * planes,
            gbit=rack_share * planes * choice.tor_tbit * 1000,
            fabric="scale-out",
            detail=f"{choice.tor_tbit:g} Tbit/s, {planes} per rack; {plan.tor_down} ports down, {plan.tor_up} up",
        ),
        Item(  # the chips' own ports: a rack's ToRs may have ports for chips of other domains
            "link",
            ("cable-copper",),
            chips * choice.nic_gbit_per_chip / choice.port_gbit,
            gbit=chips * choice.nic_gbit_per_chip,
            medium="copper",
            length="in-rack",
            fabric="scale-out",
            detail=f"chip to ToR, {choice.port_gbit:g}G ports",
        ),
    ]
    uplinks = rack_share * plan.tor_up  # per plane
    above = plan.layers[1:]
    if above and uplinks:
        k = radix(choice.fabric_tbit, choice.port_gbit)
        for number, layer in enumerate(above):
            top = number == len(above) - 1
            switches = planes * uplinks / (k if top else k // 2)
            items.append(
                Item(
                    f"{layer.name} switch",
                    (SWITCH_PARTS[network],),
                    switches,
                    gbit=switches * choice.fabric_tbit * 1000,
                    fabric="scale-out",
                    detail=f"{choice.fabric_tbit:g} Tbit/s, radix {k}, {k if top else k // 2} ports down",
                )
            )
        links = planes * uplinks * len(above)
        items.append(
            Item(
                "transceiver",
                ("transceiver",),
                2 * links,
                gbit=2 * links * choice.port_gbit,
                medium="optics",
                length="fabric",
                fabric="scale-out",
                detail=f"2 per link; {_number(links)} {choice.port_gbit:g}G links over {len(above)} layer boundaries",
            )
        )
    notes = [
        f"scale-out: the system's 1/{plan.domains:,} share of a cluster of {plan.domains:,} domains "
        f"({plan.chips:,} chips, {plan.racks:,} racks, {plan.n_layers} switch layers with the ToR; "
        "the cluster's size is an assumption: give domains to change it); fabric switches counted by the Clos math "
        "(docs/sources.md#clos-math): per plane, U uplinks take U/(k/2) switches of each lower layer and U/k "
        "of the top",
    ]
    return items, notes


def _number(value: float) -> str:
    return f"{value:,.0f}" if math.isclose(value, round(value)) else f"{value:,.2f}"
