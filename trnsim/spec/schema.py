"""The topology file schema: typed, strict structs that YAML documents are converted into.

Every section may carry a ``source`` citing the facts its numbers come from (anchors of
``docs/sources.md``) or naming them assumptions; the catalog tests require one on every section of
every built-in file.
"""

from typing import Annotated, Literal

import msgspec

# Counts are bounded by the size limits of trnsim.limits (checked before building); the bounds
# here only keep numbers finite and physical: a lane between 1 MB/s and 10 TB/s per direction, a
# latency of at most one second, so that no time or bandwidth can overflow to infinity or NaN.
PositiveInt = Annotated[int, msgspec.Meta(gt=0, le=1 << 40)]
LaneGbps = Annotated[float, msgspec.Meta(ge=1e-3, le=1e4)]
LatencyNs = Annotated[float, msgspec.Meta(ge=0, le=1e9)]
PositiveFloat = Annotated[float, msgspec.Meta(gt=0, le=1e9)]
Medium = Literal["pcb", "backplane", "copper", "aec", "optics", "onchip"]
# names become device names, table cells and exported files: one line of printable text (no C0 or
# C1 control character, no bidirectional override: nothing a terminal would act on)
_PRINTABLE = "[^\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=f"^{_PRINTABLE}+$")]
# descriptions and sources are printed too (topo show): printable text on one line, of any length
Text = Annotated[str, msgspec.Meta(max_length=10_000, pattern=f"^{_PRINTABLE}*$")]


# retimer chips on one link (both ends together), a part of the bill of materials (trnsim.studies.cost)
Retimers = Annotated[int, msgspec.Meta(ge=0, le=64)]

# at least 1%: below that a link is broken, not slow (and rates must stay well above rounding)
Efficiency = Annotated[float, msgspec.Meta(ge=0.01, le=1)]


class Section(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Base for every mapping in a topology file: unknown keys are refused."""

    def __post_init__(self) -> None:
        # -0.0 is a valid 0 (``step_ns: -0.0``) but prints as "-0": keep one zero
        for name in self.__struct_fields__:
            value = getattr(self, name)
            if isinstance(value, float) and value == 0.0:
                setattr(self, name, 0.0)


class Chip(Section, kw_only=True):
    """The accelerator: its scale-up lane budget and lane rate."""

    name: Name
    lanes: PositiveInt
    active_lanes: PositiveInt | None = None
    lane_gbps: LaneGbps
    # ranks (cores) one chip hosts, as nccom-test counts them, and the bandwidth each rank has to
    # its chip's links and its sibling ranks (per direction); a chip is one rank unless a file says
    ranks: Annotated[int, msgspec.Meta(ge=1, le=64)] = 1
    rank_gbps: Annotated[float, msgspec.Meta(ge=1e-3, le=1e5)] | None = None
    source: Text = ""

    @property
    def usable_lanes(self) -> int:
        """Lanes that may carry traffic (all of them when no redundancy is declared)."""
        return self.active_lanes if self.active_lanes is not None else self.lanes


class Axis(Section, kw_only=True):
    """One torus dimension: a ring (or a line when ``wrap`` is false) of ``size`` chips."""

    name: Name
    size: PositiveInt
    lanes: PositiveInt
    medium: Medium = "backplane"
    wrap: bool = True
    # a twisted torus: crossing this axis's wrap link also moves the named axes by these offsets
    # (Camarero et al.; TPU v4's 4x4x8 and 4x8x8 slices, Jouppi et al. ISCA 2023)
    twist: dict[str, Annotated[int, msgspec.Meta(ge=0, le=1 << 20)]] = msgspec.field(default_factory=dict)
    retimers_per_link: Retimers = 0
    source: Text = ""


class Torus(Section, kw_only=True):
    """An N-dimensional torus; ranks enumerate coordinates row-major, the last axis fastest."""

    axes: list[Axis]
    server_axis: Name | None = None
    hypercube_plane: list[Name] | None = None
    source: Text = ""


class SwitchModel(Section, kw_only=True):
    """A switch part: its lane and port budget (either may be unknown)."""

    lanes: PositiveInt | None = None
    ports: PositiveInt | None = None
    # reduces data in the network and multicasts it (NVLink SHARP, "NVLS"): the nvls algorithm
    reduction: bool = False
    source: Text = ""


class NodeLocal(Section, kw_only=True):
    """Links between the chips of one node (tray or server): direct PCB links or on-node switches."""

    kind: Literal["direct", "switches"]
    lanes_per_link: PositiveInt
    switches: PositiveInt = 1
    switch_model: Name | None = None
    cls: Name = "pcb"
    medium: Medium = "pcb"
    retimers_per_link: Retimers = 0
    source: Text = ""


class Plane(Section, kw_only=True):
    """A switch plane: the node slots whose chips attach to the plane's switches."""

    name: Name
    slots: list[Name]


class SwitchFabric(Section, kw_only=True):
    """Switch planes: per rack, ``switches_per_plane`` switches in each plane, each linked to every chip
    of its plane's slots in the rack, mounted ``switches_per_tray`` to a switch tray."""

    planes: list[Plane]
    switches_per_plane: PositiveInt
    # switch chips per switch tray, the board that fails and is swapped whole: a rack's trays hold
    # its plane switches in order, switch k of each plane before switch k+1 (trnsim.topology.trays);
    # 0: the switches sit on a node's board, in no tray (HGX); unset: one switch of each plane, an
    # assumption (trnsim.topology.trays.DEFAULT_ASSUMPTION)
    switches_per_tray: Annotated[int, msgspec.Meta(ge=0, le=1 << 20)] | None = None
    switch_model: Name
    lanes_per_link: PositiveInt
    backplane_lanes: PositiveInt
    active_lanes: PositiveInt
    cls: Name = "backplane"
    medium: Medium = "backplane"
    retimers_per_link: Retimers = 0
    source: Text = ""

    @property
    def tray_size(self) -> int:
        """Switch chips in one switch tray (0: in no tray); unset, one switch of each plane."""
        return len(self.planes) if self.switches_per_tray is None else self.switches_per_tray

    @property
    def trays_per_rack(self) -> int:
        """Switch trays in one rack (0 when the switches are in no tray)."""
        return len(self.planes) * self.switches_per_plane // self.tray_size if self.tray_size else 0

    def tray_of(self, plane_index: int, k: int) -> int | None:
        """The switch tray, within its rack, of switch ``k`` of the plane at ``plane_index``: a
        rack's plane switches fill its trays in order, switch k of every plane before switch k+1."""
        return (k * len(self.planes) + plane_index) // self.tray_size if self.tray_size else None


class CrossRack(Section, kw_only=True):
    """Direct links from each chip to the chip in the same position of the paired rack."""

    lanes: PositiveInt
    cls: Name = "xrack"
    medium: Medium = "aec"
    retimers_per_link: Retimers = 0
    source: Text = ""


class Switched(Section, kw_only=True):
    """A switched multi-rack fabric: racks of nodes (trays or servers) of chips in named slots."""

    racks: PositiveInt
    nodes_per_rack: PositiveInt
    slots: list[Name]
    node_label: Name = "tray"
    node_local: NodeLocal | None = None
    switch_fabric: SwitchFabric | None = None
    cross_rack: CrossRack | None = None
    source: Text = ""


class Latency(Section, kw_only=True):
    """Latency parameters of the alpha-beta model (documented assumptions, overridable)."""

    step_ns: LatencyNs
    # once per collective call (launch, host synchronisation); 0 unless a file or a calibration says
    collective_ns: LatencyNs = 0.0
    link_ns: LatencyNs
    relay_ns: LatencyNs
    switch_ns: LatencyNs = 0.0
    node_switch_ns: LatencyNs = 0.0
    source: Text = ""


class RoutingSpec(Section, kw_only=True):
    """The file's ``routing:`` section: how flows are routed, the SKU's default (overridable). Read
    into a :class:`trnsim.routing.policy.RoutingPolicy` by :func:`trnsim.routing.policy.routing_of`."""

    policy: Literal["ecmp", "single", "hash"] = "ecmp"
    relay: bool = True  # may chips forward traffic for others
    hash_seeds: Annotated[int, msgspec.Meta(ge=1, le=64)] = 8
    source: Text = ""


class LinkEfficiency(Section, kw_only=True):
    """The share of a link's raw rate that carries payload (protocol and encoding overhead)."""

    default: Efficiency = 1.0
    classes: dict[Name, Efficiency] = {}  # per link class, where it differs from the default
    source: Text = ""

    def of(self, cls: str) -> float:
        """The efficiency of a link class."""
        return self.classes.get(cls, self.default)


ScaleOutNetwork = Literal["efa", "infiniband", "roce", "dcn"]


class ScaleOut(Section, kw_only=True):
    """The scale-out network behind the scale-up domain: the NICs, the switches and their wiring.

    Not part of the scale-up graph: ``trnsim cluster`` sizes the fabric from it and composes
    collectives across domains over it (:mod:`trnsim.topology.scaleout`). ``network`` says which
    kind it is and gives the defaults that follow from it (:data:`NETWORK_DEFAULTS`). Every default
    below that is not a published fact is an assumption, named as such in docs/model.md and ``--help``.
    ``efa_gbit_per_chip`` and ``efa_latency_ns`` are the older names of ``nic_gbit_per_chip`` and
    ``nic_latency_ns``, still read (a file gives one name of each pair, not both).
    """

    network: ScaleOutNetwork = "efa"
    nic_gbit_per_chip: PositiveFloat | None = None  # NIC bandwidth per chip, Gbit/s per direction
    efa_gbit_per_chip: PositiveFloat | None = None  # the older name of nic_gbit_per_chip
    nic_latency_ns: LatencyNs | None = None  # the NIC's packet latency (reported)
    efa_latency_ns: LatencyNs | None = None  # the older name of nic_latency_ns
    # one step of a collective between two domains (docs/sources.md#efa-hop-latency: about 15 us per inter-node hop)
    hop_ns: LatencyNs = 15_000.0
    # share of the NIC rate that payload reaches (an assumption: no published EFA figure)
    efficiency: Efficiency = 0.9
    port_gbit: PositiveFloat | None = None  # logical port speed; None: the network's (NETWORK_DEFAULTS)
    tor_tbit: PositiveFloat = 12.8  # ToR switch capacity, Tbit/s
    fabric_tbit: PositiveFloat | None = None  # leaf/spine capacity (None: as the ToR)
    # ToRs per rack, each its own plane; None: the network's (EFA dual ToR)
    tors_per_rack: Annotated[int, msgspec.Meta(ge=1, le=64)] | None = None
    chips_per_rack: PositiveInt | None = None  # None: a switched file's rack, a torus's whole domain
    design: Literal["tor", "rail"] = "tor"  # rail: a chip's port i goes to the rail switch of its rank
    oversubscription: Annotated[float, msgspec.Meta(ge=1, le=64)] = 1.0  # ToR down : up
    # spray: every flow's packets over all paths (SRD); hash: one path per flow (ECMP); None: the network's
    policy: Literal["spray", "hash"] | None = None
    source: Text = ""

    @property
    def nic_gbit(self) -> float | None:
        """The NIC bandwidth per chip in Gbit/s, under either name."""
        return self.nic_gbit_per_chip if self.nic_gbit_per_chip is not None else self.efa_gbit_per_chip

    @property
    def nic_latency(self) -> float | None:
        """The NIC's packet latency in ns, under either name (None: not given)."""
        return self.nic_latency_ns if self.nic_latency_ns is not None else self.efa_latency_ns

    def default(self, key: str):
        """``key`` (``policy``, ``port_gbit`` or ``tors_per_rack``) as the file gives it, else the
        network's default."""
        given = getattr(self, key)
        return NETWORK_DEFAULTS[self.network][key] if given is None else given


# what each scale-out network implies when a file does not say (docs/sources.md#scale-out-networks):
# EFA's SRD sprays a flow's packets over every path, on 100G logical ports, dual ToR; InfiniBand
# switches route adaptively (NVIDIA Quantum-2's adaptive routing spreads a flow's packets over the
# uplinks, an assumption: a subnet manager's static routes collide more, `hash` bounds that side);
# RoCE routes each flow (queue pair) on one path chosen by its hash (ECMP); both one 400G port per
# NIC (NDR / ConnectX-7), one ToR (leaf) per rack; a TPU's DCN is data-centre Ethernet routed by
# ECMP (hashed, an assumption), counted in 100G ports on one ToR per rack (an assumption)
NETWORK_NAMES = {"efa": "EFA", "infiniband": "InfiniBand", "roce": "RoCE", "dcn": "DCN"}
NETWORK_DEFAULTS = {
    "efa": {"policy": "spray", "port_gbit": 100.0, "tors_per_rack": 2},
    "infiniband": {"policy": "spray", "port_gbit": 400.0, "tors_per_rack": 1},
    "roce": {"policy": "hash", "port_gbit": 400.0, "tors_per_rack": 1},
    "dcn": {"policy": "hash", "port_gbit": 100.0, "tors_per_rack": 1},
}


# a part's name is one word of a --set path (parts.NAME.price_usd): no dots, no spaces
PartName = Annotated[str, msgspec.Meta(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9_+-]*$")]
Usd = Annotated[float, msgspec.Meta(ge=0, le=1e9)]
Watts = Annotated[float, msgspec.Meta(ge=0, le=1e7)]
Per = Literal["each", "lane", "gbit"]


class PartSpec(Section, kw_only=True):
    """One part's figures as a layer gives them (any may be left out: the layers below give it)."""

    price_usd: Usd | None = None
    power_w: Watts | None = None
    # what one price and one power are for: a part, a lane of a link, a Gbit/s of capacity
    per: Per | None = None
    # the capacity of one part in Gbit/s (a NIC's: a chip's share of it is its NIC rate)
    gbit: Annotated[float, msgspec.Meta(gt=0, le=1e7)] | None = None
    source: Text | None = None


# the runtimes a file may name as its default (trnsim.model.runtime models each)
RuntimeName = Literal["ideal", "nccl", "neuron", "xla"]
# a per-call cost (launch, synchronisation, completion) in microseconds: at most one second
CallUs = Annotated[float, msgspec.Meta(ge=0, le=1e6)]


class NcclFacts(Section, kw_only=True):
    """What NCCL's tuner reads from the machine that the graph does not hold
    (:mod:`trnsim.model.runtimes.nccl`)."""

    # the GPUs' compute capability times ten (90 Hopper, 100 Blackwell): NCCL's tables key on it
    compute_capability: Annotated[int, msgspec.Meta(ge=60, le=1000)]
    # the switches do NVLink SHARP (multicast and in-switch reduction): NCCL enables NVLS
    nvls: bool
    # one NVLink's rate per direction: the chip's links in the graph count as bandwidth / this
    nvlink_gbps: LaneGbps
    # a tuned build's fixed cost of one call (launch, synchronisation, completion): it replaces NCCL's
    # own LL latency and floors the others' (trnsim.model.runtime); unset: default NCCL, its own latency
    call_us: CallUs | None = None
    source: Text = ""


class NeuronFacts(Section, kw_only=True):
    """What the Neuron runtime's model reads that the graph does not hold
    (:mod:`trnsim.model.runtimes.neuron`)."""

    # the chip's HBM bandwidth (GB/s, reads and writes together): collectives touch HBM per byte
    hbm_gbps: PositiveFloat
    # physical NeuronCores per chip, and the default logical NeuronCore setting (a rank = lnc cores)
    cores_per_chip: Annotated[int, msgspec.Meta(ge=1, le=64)]
    lnc: Literal[1, 2] = 1
    # the fixed cost of one call; unset: the model's assumption (neuron_constants.CALL_OVERHEAD_US)
    call_us: CallUs | None = None
    source: Text = ""


class XlaFacts(Section, kw_only=True):
    """What XLA's collectives on TPU ICI take that the graph does not hold
    (:mod:`trnsim.model.runtimes.xla`)."""

    # the share of an ICI link's one-way rate a large collective reaches
    efficiency: Efficiency = 0.95
    # the latency of one ICI hop, microseconds
    hop_us: CallUs = 1.0
    # the fixed cost of one call; unset: the model's assumption (xla.CALL_US)
    call_us: CallUs | None = None
    source: Text = ""


class RuntimeSpec(Section, kw_only=True):
    """The file's ``runtime:`` section: which runtime its numbers model by default, and the facts
    each runtime needs (:mod:`trnsim.model.runtime`)."""

    default: RuntimeName = "ideal"
    nccl: NcclFacts | None = None
    neuron: NeuronFacts | None = None
    xla: XlaFacts | None = None
    source: Text = ""


class Spec(Section, kw_only=True):
    """A whole topology file."""

    name: Name
    kind: Literal["torus", "switched"]
    chip: Chip
    latency: Latency
    description: Text = ""
    aliases: list[Name] = []
    source: Text = ""
    torus: Torus | None = None
    switched: Switched | None = None
    switch_models: dict[Name, SwitchModel] = {}
    scale_out: ScaleOut | None = None
    routing: RoutingSpec = msgspec.field(default_factory=RoutingSpec)
    efficiency: LinkEfficiency = msgspec.field(default_factory=LinkEfficiency)
    runtime: RuntimeSpec = msgspec.field(default_factory=RuntimeSpec)
    # the system's own parts figures, over the default parts catalog (trnsim.spec.parts)
    parts: dict[PartName, PartSpec] = {}
    # the range of each assumed parameter, by its edit path (``efficiency.default: [0.85, 0.91]``):
    # ranged runs price the corners of these ranges as low and high estimates (trnsim.model.ranges)
    ranges: dict[
        Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_-]+)+$", max_length=120)],
        tuple[float, float],
    ] = {}
