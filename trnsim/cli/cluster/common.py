"""What both ``trnsim cluster`` commands share: the sub-app, the scale-out options and the domain's plan."""

from typing import Annotated

import typer

from trnsim.cli.compat import hidden
from trnsim.cli.options import (
    edits,
)
from trnsim.errors import UsageError

app = typer.Typer(
    help="Clusters of scale-up domains over a scale-out network (EFA, InfiniBand, RoCE, DCN): the fabric "
    "and collectives across domains."
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
    float | None,
    typer.Option("--nic-gbit", help="Scale-out NIC Gbit/s per chip (default: the file's scale_out)."),
]
PortGbit = Annotated[
    float | None,
    typer.Option(
        "--port-gbit",
        help="Logical port speed, Gbit/s (default: the file's, else the network's: 100 for EFA, AWS's "
        "logical port; 400 for InfiniBand and RoCE; 100 for DCN).",
    ),
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
    typer.Option(
        "--tors-per-rack",
        help="ToR switches per rack, each its own plane (default: the file's, else 2 for EFA, dual ToR; 1 "
        "for the others).",
    ),
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
        help="How flows use the scale-out paths (any network; the name is historical): spray (every "
        "flow's packets over all paths, as EFA's SRD; EFA's default) or hash (ECMP: one path per flow, so "
        "flows collide on ToR uplinks, expected throughput by Monte Carlo; the default of InfiniBand, RoCE "
        "and DCN).",
    ),
]
HopUs = Annotated[
    float | None,
    typer.Option(
        "--hop-us",
        help="Latency of one step across domains, us (default 15: Neuron's documented EFA figure, assumed "
        "for every network unless the file says).",
    ),
]
Layers = Annotated[
    int | None,
    typer.Option("--switch-layers", help="Switch layers, the ToR counted (default: the fewest)."),
]
RuntimeChoice = Annotated[
    str | None,
    typer.Option(
        "--runtime",
        help="What the numbers model: ideal (trnsim's composition: the fabric's limit under its best "
        "schedule), nccl (NCCL 2.30.7's tuner on one node per domain: its cross-node ring, tree, NVLS tree "
        "or PAT per size, the NIC rate times scale_out.efficiency and the flow-collision share) or neuron "
        "(the Neuron runtime's hierarchical algorithms, one node per domain). Default: the file's "
        "runtime.default when a cluster can run it, else ideal.",
        show_default=False,
    ),
]
OldPolicy = Annotated[str | None, hidden("--policy")]
OldLayers = Annotated[int | None, hidden("--layers")]

ASSUMPTIONS = (
    "assumed: each ToR of a rack is its own plane, a chip's ports split evenly over them; non-blocking "
    "above the ToR; NIC efficiency 0.9 and 15 us per cross-domain step unless the file says otherwise"
)


def domain_and_fabric(
    sku, topology, overrides, domains, chips, nic_gbit, port_gbit, tor_tbit, fabric_tbit, tors, per_rack,
    design, oversubscription, policy, hop_us, layers, routing=None, calibration=None, fail=None,
):  # fmt: skip
    """Load the domain and say which cluster of it the options ask for (a
    :class:`trnsim.model.backend.Fabric`); every option is checked here.

    ``--routing``, ``--calibration`` and ``--fail`` edit the domain's graph as on ``collective``;
    the fabric is counted for the healthy domain (its racks and NICs do not change when a part fails).
    """
    from trnsim.cli.options import load
    from trnsim.model.backend import Fabric

    if (sku is None) == (topology is None):
        raise UsageError("name the domain: --sku NAME or --topology FILE")
    if domains is not None and chips is not None:
        raise UsageError(f"--domains {domains} and --chips {chips}: give one of them, not both")
    if domains is None and chips is None:
        named = f"--sku {sku}" if sku is not None else f"--topology {topology}"
        raise UsageError(f"{named}: give the cluster's size: --domains N or --chips N")
    domain = load(sku, topology, edits(overrides, routing, calibration, fail))
    if chips is not None:
        if not 1 <= chips <= 1 << 30:
            raise UsageError(f"--chips: expected 1 to 1,073,741,824, got {chips}")
        domains = -(-chips // domain.planner.n_chips)
    if not 1 <= domains <= 1 << 24:
        raise UsageError(f"--domains: expected 1 to 16,777,216, got {domains}")
    choices = {
        "nic_gbit_per_chip": nic_gbit,
        "port_gbit": port_gbit,
        "tor_tbit": tor_tbit,
        "fabric_tbit": fabric_tbit,
        "tors_per_rack": tors,
        "chips_per_rack": per_rack,
        "design": design.strip().lower() if design else None,
        "oversubscription": oversubscription,
        "policy": policy.strip().lower() if policy else None,
        "hop_us": hop_us,
    }
    return domain, Fabric(domains, tuple(choices.items()), layers)


def n(count: float, noun: str) -> str:
    """``1 ToR``, ``2 planes``, ``0.5 ports`` (a count with its noun, plural unless exactly one)."""
    return f"{count:g} {noun}{'' if count == 1 else 's'}"
