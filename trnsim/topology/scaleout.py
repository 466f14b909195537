"""The scale-out fabric behind the scale-up domains: NICs, ToR switches and a folded Clos above them.

Switch math (docs/sources.md#clos-math): a switch of ``C`` Tbit/s cut into logical ports of ``s`` Gbit/s has radix
``k = C / s``. A folded Clos whose lower layers use half their ports down reaches ``k (k/2)^(L-1)``
endpoints on ``L`` layers: ``k^2/2`` on 2 and ``k^3/4`` on 3.

The plan built here (:func:`plan_fabric`) follows the ToR design of the Trainium racks
(docs/sources.md#scale-out-efa): every rack has ``tors_per_rack`` ToR switches, each ToR its own plane (a chip's ports
are split evenly over its rack's ToRs, so a dual-ToR rack makes two independent planes); a ToR has
``d`` ports down to chips and ``ceil(d / oversubscription)`` up. Above the ToRs, each plane is a
folded Clos of ``fabric_tbit`` switches: a top layer of ``k`` ports down and, below it, layers of
``k/2`` down and ``k/2`` up, so ``L`` layers in all (the ToR counted) connect ``k (k/2)^(L-2)`` ToRs
per plane. Everything above the ToR is non-blocking; only the ToR may be oversubscribed.

Assumptions (named in docs/model.md and ``--help``): a ToR per plane, even splitting of a chip's ports
over its ToRs, no oversubscription above the ToR, copper from chip to ToR and optics above it.
"""

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from trnsim.errors import ConfigError, ParameterError, UsageError
from trnsim.spec.schema import NETWORK_DEFAULTS

MAX_LAYERS = 6  # beyond any building or campus: a plan that needs more is refused
MAX_CHIPS = 1 << 30  # chips in a cluster (Project Rainier is 400,000)
COLLISION_TRIALS = 4096  # Monte Carlo trials of ECMP hashing (fixed seed: reproducible)


def radix(tbit: float, port_gbit: float, parameter: str = "") -> int:
    """Logical ports of a switch: ``floor(capacity / port speed)``.

    Raises
    ------
    UsageError
        If the switch has fewer than 2 ports of that speed.
    """
    k = math.floor(tbit * 1000 / port_gbit + 1e-9)
    if k < 2:
        message = (
            f"a {tbit:g} Tbit/s switch has {k} port(s) of {port_gbit:g} Gbit/s: a fabric needs 2 or more"
        )
        if parameter:
            raise ParameterError(message, parameter, f"{tbit:g}")
        raise UsageError(message)
    return k


def endpoints(k: int, layers: int) -> int:
    """Endpoints of a folded Clos of radix-``k`` switches on ``layers`` layers (leaves half down):
    ``k`` on 1, ``k^2/2`` on 2, ``k^3/4`` on 3, ``k (k/2)^(L-1)`` in general."""
    if layers < 1:
        raise ValueError("layers must be at least 1")
    return k * (k // 2) ** (layers - 1)


def leaves_reached(k: int, layers_above: int) -> int:
    """Leaves (ToRs) that ``layers_above`` layers of radix-``k`` switches connect: a top layer of
    ``k`` ports down over layers of ``k/2`` down; 1 with nothing above."""
    if layers_above <= 0:
        return 1
    return k * (k // 2) ** (layers_above - 1)


@dataclass(frozen=True)
class FabricChoice:
    """What a cluster is built from: the NIC and switch choices (a file's ``scale_out``, edited)."""

    nic_gbit_per_chip: float
    port_gbit: float
    tor_tbit: float
    fabric_tbit: float
    tors_per_rack: int
    chips_per_rack: int
    design: str
    oversubscription: float
    policy: str
    hop_ns: float
    efficiency: float
    network: str = "efa"  # efa, infiniband, roce or dcn (:data:`trnsim.spec.schema.NETWORK_DEFAULTS`)

    @property
    def nic_gbps(self) -> float:
        """A chip's scale-out NIC bandwidth in GB/s (10^9 B/s) per direction, raw."""
        return self.nic_gbit_per_chip / 8

    @property
    def hop_us(self) -> float:
        """The latency of one step across domains, in microseconds."""
        return self.hop_ns / 1e3


@dataclass
class Layer:
    """One switch layer of one plane."""

    name: str
    radix: int
    switches: int  # per plane
    ports_down: int  # used per switch (the most loaded switch)
    ports_up: int


@dataclass
class FabricPlan:
    """A cluster's scale-out fabric, counted."""

    choice: FabricChoice
    chips: int
    domains: int
    chips_per_domain: int
    racks: int
    planes: int
    ports_per_chip: float
    tor_down: int  # ports per ToR to chips
    tor_up: int  # ports per ToR to the layer above
    layers: list[Layer] = field(default_factory=list)  # per plane, the ToR first

    @property
    def n_layers(self) -> int:
        return len(self.layers)

    @property
    def switches(self) -> int:
        """Switches in all planes and layers."""
        return self.planes * sum(layer.switches for layer in self.layers)

    @property
    def chip_links(self) -> int:
        """Chip-to-ToR links (logical ports; copper: DAC or AEC)."""
        return self.racks * self.planes * self.tor_down

    @property
    def fabric_links(self) -> list[int]:
        """Links between consecutive layers, all planes (optics): ToR up, then each layer up."""
        per_plane = self.racks * self.tor_up
        return [self.planes * per_plane for _ in self.layers[1:]]

    @property
    def bisection_gbps(self) -> float:
        """Bytes per second (GB/s, per direction) across the fabric's bisection: half the chips'
        NIC bandwidth, less what the ToRs' oversubscription takes."""
        if self.racks <= 1:
            return self.chips * self.choice.nic_gbps / 2
        return self.chips * self.choice.nic_gbps / 2 * min(1.0, self.tor_up / self.tor_down)

    def largest(self, layers: int) -> int:
        """The most chips this choice connects on ``layers`` layers (the ToR counted)."""
        k = radix(self.choice.fabric_tbit, self.choice.port_gbit)
        return leaves_reached(k, layers - 1) * self.choice.chips_per_rack


def fabric_choice(spec, chips_per_domain: int, domain_racks: int | None, **edits) -> FabricChoice:
    """The fabric choices of a topology file's ``scale_out`` section, with the user's edits.

    Parameters
    ----------
    spec : trnsim.spec.schema.Spec
        The domain's file; its ``scale_out`` section gives the defaults.
    chips_per_domain : int
        Chips of one domain.
    domain_racks : int, optional
        Racks one domain spans (a switched file's ``racks``); None for a torus.
    edits : dict
        Overrides by field name (None values are ignored).

    Raises
    ------
    ConfigError
        If the file has no ``scale_out`` section and the edits do not give the NIC bandwidth.
    """
    base = spec.scale_out
    given = {key: value for key, value in edits.items() if value is not None}
    if base is None and "nic_gbit_per_chip" not in given:
        raise ConfigError(
            f"{spec.name}: scale_out: the file describes no scale-out network; add a scale_out section "
            "or give {nic_gbit_per_chip}",
            names="nic_gbit_per_chip",
        )
    network = base.network if base else "efa"
    implied = NETWORK_DEFAULTS[network]
    defaults = {
        "nic_gbit_per_chip": base.nic_gbit if base else None,
        "port_gbit": base.default("port_gbit") if base else implied["port_gbit"],
        "tor_tbit": base.tor_tbit if base else 12.8,
        "fabric_tbit": (base.fabric_tbit or base.tor_tbit) if base else None,
        "tors_per_rack": base.default("tors_per_rack") if base else implied["tors_per_rack"],
        "chips_per_rack": (base.chips_per_rack if base else None),
        "design": base.design if base else "tor",
        "oversubscription": base.oversubscription if base else 1.0,
        "policy": base.default("policy") if base else implied["policy"],
        "hop_ns": base.hop_ns if base else 15_000.0,
        "efficiency": base.efficiency if base else 0.9,
        "network": network,
    }
    defaults.update(given)
    if defaults["fabric_tbit"] is None or ("tor_tbit" in given and "fabric_tbit" not in given and not base):
        defaults["fabric_tbit"] = defaults["tor_tbit"]
    if defaults["chips_per_rack"] is None:
        defaults["chips_per_rack"] = chips_per_domain // domain_racks if domain_racks else chips_per_domain
    return FabricChoice(**defaults)


def _check_choice(choice: FabricChoice) -> None:
    checks = [
        ("nic_gbit_per_chip", choice.nic_gbit_per_chip, 1e-3, 1e6),
        ("port_gbit", choice.port_gbit, 1, 1e5),
        ("tor_tbit", choice.tor_tbit, 1e-3, 1e4),
        ("fabric_tbit", choice.fabric_tbit, 1e-3, 1e4),
        ("oversubscription", choice.oversubscription, 1, 64),
        ("hop_us", choice.hop_ns / 1e3, 0, 1e6),
        ("scale_out.efficiency", choice.efficiency, 0.01, 1),  # a file key, named as the file does
    ]
    for name, value, low, high in checks:
        if not (math.isfinite(value) and low <= value <= high):
            raise ParameterError(f"expected {low:g} to {high:g}, got {value:g}", name)
    if not 1 <= choice.tors_per_rack <= 64:
        raise ParameterError(f"expected 1 to 64, got {choice.tors_per_rack}", "tors_per_rack")
    if not 1 <= choice.chips_per_rack <= 1 << 20:
        raise ParameterError(f"expected 1 to 1,048,576, got {choice.chips_per_rack}", "chips_per_rack")
    if choice.design not in ("tor", "rail"):
        raise ParameterError("expected tor or rail", "design", repr(choice.design))
    if choice.policy not in ("spray", "hash"):
        raise ParameterError("expected spray or hash", "efa_routing", repr(choice.policy))


def _check_ports(choice: FabricChoice, per_rack: int, rack_ports: float) -> None:
    """Refuse ports that do not split evenly over a rack's ToRs, or a chip that cannot reach every
    plane (each ToR is one)."""
    tors = choice.tors_per_rack
    if abs(rack_ports - round(rack_ports)) > 1e-9 or round(rack_ports) % tors:
        raise UsageError(
            f"a rack of {per_rack} chips at {choice.nic_gbit_per_chip:g} Gbit/s has {rack_ports:g} ports of "
            f"{choice.port_gbit:g} Gbit/s, which do not split evenly over {tors} ToRs: change {{port_gbit}} "
            "or {tors_per_rack}",
            names=("port_gbit", "tors_per_rack"),
        )
    per_chip = choice.nic_gbit_per_chip / choice.port_gbit
    whole = abs(per_chip - round(per_chip)) < 1e-9 and round(per_chip) >= 1
    if whole and round(per_chip) % tors:
        raise ParameterError(
            f"a chip's {round(per_chip)} port(s) of {choice.port_gbit:g}G cannot reach "
            f"{tors} planes evenly (each ToR is a plane, and every chip needs a port on each)",
            "tors_per_rack",
            f"{tors}",
        )
    if not whole and tors > 1:
        raise ParameterError(
            f"a chip's {choice.nic_gbit_per_chip:g} Gbit/s is {per_chip:g} ports, shared between chips, so "
            f"it cannot reach {tors} planes: use smaller ports or one ToR",
            "port_gbit",
            f"{choice.port_gbit:g}",
        )


def plan_fabric(
    choice: FabricChoice, chips_per_domain: int, domains: int, layers: int | None = None
) -> FabricPlan:
    """Count the fabric that connects ``domains`` domains of ``chips_per_domain`` chips.

    Parameters
    ----------
    layers : int, optional
        Switch layers (the ToR counted); by default the fewest that connect every rack.

    Raises
    ------
    UsageError
        If a ToR has too few ports for its rack, racks and domains do not tile, or ``layers`` is too few.
    """
    _check_choice(choice)
    if domains < 1:
        raise ParameterError(f"expected 1 or more, got {domains}", "domains")
    chips = chips_per_domain * domains
    if chips > MAX_CHIPS:
        raise ParameterError(
            f"{chips:,} chips, more than {MAX_CHIPS:,} (Project Rainier is 400,000)",
            "domains",
            f"{domains:,}",
        )
    per_rack = choice.chips_per_rack
    if per_rack % chips_per_domain and chips_per_domain % per_rack:
        raise ParameterError(
            f"a rack must hold whole domains of {chips_per_domain} chips or a domain whole racks",
            "chips_per_rack",
            f"{per_rack}",
        )
    racks = math.ceil(chips / per_rack)
    rack_ports = per_rack * choice.nic_gbit_per_chip / choice.port_gbit
    tors = choice.tors_per_rack
    _check_ports(choice, per_rack, rack_ports)
    down = round(rack_ports) // tors
    up = math.ceil(down / choice.oversubscription) if racks > 1 else 0
    k_tor = radix(choice.tor_tbit, choice.port_gbit, "tor_tbit")
    if down + up > k_tor:
        raise UsageError(
            f"a ToR needs {down} ports down and {up} up of {choice.port_gbit:g} Gbit/s, but a "
            f"{choice.tor_tbit:g} Tbit/s switch has {k_tor}: use a larger {{tor_tbit}}, more "
            "{tors_per_rack} or {oversubscription}",
            names=("tor_tbit", "tors_per_rack", "oversubscription"),
        )
    k = radix(choice.fabric_tbit, choice.port_gbit, "fabric_tbit")
    needed = 1
    while leaves_reached(k, needed - 1) < racks:
        needed += 1
        if needed > MAX_LAYERS:
            raise UsageError(
                f"{racks:,} racks need more than {MAX_LAYERS} switch layers of radix {k}: use larger "
                "switches ({fabric_tbit}) or smaller ports",
                names="fabric_tbit",
            )
    if layers is not None:
        if not 1 <= layers <= MAX_LAYERS:
            raise ParameterError(f"expected 1 to {MAX_LAYERS}, got {layers}", "switch_layers")
        if layers < needed:
            raise ParameterError(
                f"{racks:,} racks need {needed} layers of radix {k} "
                f"({layers} reach {leaves_reached(k, layers - 1) * per_rack:,} chips)",
                "switch_layers",
                f"{layers}",
            )
        needed = layers
    plan = FabricPlan(choice, chips, domains, chips_per_domain, racks, tors, rack_ports / per_rack, down, up)
    plan.layers.append(Layer("ToR", k_tor, racks, down, up))
    bundles = racks * up  # uplinks leaving the ToRs of one plane; every layer above carries as many
    for level in range(2, needed + 1):
        top = level == needed
        per_switch_down = k if top else k // 2
        switches = math.ceil(bundles / per_switch_down)
        name = {2: "leaf" if needed > 2 else "spine", 3: "spine" if needed == 3 else "aggregation"}.get(
            level, "core" if top else f"layer {level}"
        )
        plan.layers.append(Layer(name, k, switches, min(per_switch_down, bundles), 0 if top else k // 2))
    return plan


@lru_cache(maxsize=256)  # a pure function of its arguments; runtimes ask again for the same step
def expected_max_load(flows: int, bins: int, trials: int = COLLISION_TRIALS, seed: int = 0) -> float:
    """The expected largest number of ``flows`` hashed uniformly onto ``bins`` equal links.

    Monte Carlo with a fixed seed (reproducible); exact when ``bins`` is 1 or ``flows`` is at most 1.
    """
    if flows <= 1 or bins <= 1:
        return float(flows)
    rng = np.random.default_rng(seed)
    choice = rng.integers(0, bins, size=(trials, flows))
    counts = np.zeros((trials, bins), dtype=np.int32)
    np.add.at(counts, (np.repeat(np.arange(trials), flows), choice.ravel()), 1)
    return float(counts.max(axis=1).mean())


def uplink_share(plan: FabricPlan, flows_leaving_per_tor: int) -> float:
    """The share of its NIC rate a flow gets in a step whose flows leave their ToR together.

    Each flow runs from one chip port at the port rate. With spraying (SRD) every flow's packets
    spread over all of the ToR's uplinks, so only oversubscription slows them: ``min(1, up / flows)``.
    With hashing each flow takes one uplink and the step lasts until the most loaded uplink drains:
    ``1 / E[largest load]`` (:func:`expected_max_load`). Only the ToR's uplinks are modelled; the
    layers above are taken as evenly loaded (optimistic for a hashed fabric).
    """
    if plan.racks <= 1 or flows_leaving_per_tor <= 0:
        return 1.0
    flows = min(flows_leaving_per_tor, plan.tor_down)
    if plan.choice.policy == "spray":
        return min(1.0, plan.tor_up / flows)
    return 1.0 / max(1.0, expected_max_load(flows, plan.tor_up))
