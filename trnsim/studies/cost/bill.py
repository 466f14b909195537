"""A bill of materials: what a system is built from (:class:`Item`, counted from the built system)
and what it costs (:class:`Line`, an item priced by its part), with the totals (:class:`Bill`)."""

from dataclasses import asdict, dataclass, field

# what a part's price and power are for, per unit of an item
PER_UNIT = {"each": "count", "lane": "lanes", "gbit": "gbit"}


@dataclass(frozen=True)
class Item:
    """Parts of one kind as the built system holds them, not yet priced.

    ``parts`` are the names to look the part up by, the most specific first (``aec-cross-rack``
    before ``aec``); ``count`` the physical items (None: a NIC's count follows from its part's
    capacity), ``lanes`` and ``gbit`` their lanes and Gbit/s in all, for parts priced per lane or
    per Gbit/s.
    """

    kind: str
    parts: tuple[str, ...]
    count: float | None
    lanes: float | None = None
    gbit: float | None = None
    medium: str | None = None
    length: str | None = None
    network: bool = True
    fabric: str | None = "scale-up"  # scale-up, scale-out, or None (the chips)
    detail: str = ""


@dataclass(frozen=True)
class Line:
    """One line of the bill: parts of one kind, their unit figures and what they come to.

    ``price_usd`` and ``power_w`` are per unit of ``per`` (a part, a lane, a Gbit/s); ``quantity``
    is how many of those units the line holds, ``count`` the physical items.
    """

    part: str
    kind: str
    count: float
    quantity: float
    per: str
    price_usd: float
    power_w: float
    source: str
    origin: str
    medium: str | None = None
    length: str | None = None
    network: bool = True
    fabric: str | None = "scale-up"
    detail: str = ""

    @property
    def capex_usd(self) -> float:
        """What the line's parts cost."""
        return self.quantity * self.price_usd

    @property
    def total_power_w(self) -> float:
        """What the line's parts draw."""
        return self.quantity * self.power_w

    def to_dict(self) -> dict:
        return {**asdict(self), "capex_usd": self.capex_usd, "total_power_w": self.total_power_w}


@dataclass(frozen=True)
class Bill:
    """A system's bill of materials and its totals.

    The network is every line but the chips: switch chips and trays, retimers, links, NICs, ToR and
    fabric switches, cables and transceivers; its shares are of the whole bill (parts not counted,
    such as hosts, racks and cooling, are in neither).
    """

    system: str
    chips: int
    lines: list[Line]
    domains: int | None = None  # domains of the cluster whose scale-out fabric the system shares
    notes: list[str] = field(default_factory=list)

    @property
    def capex_usd(self) -> float:
        return sum(line.capex_usd for line in self.lines)

    @property
    def power_w(self) -> float:
        return sum(line.total_power_w for line in self.lines)

    @property
    def network_capex_usd(self) -> float:
        return sum(line.capex_usd for line in self.lines if line.network)

    @property
    def network_power_w(self) -> float:
        return sum(line.total_power_w for line in self.lines if line.network)

    @property
    def network_capex_share(self) -> float:
        """The network's share of the bill's capex (0 when the bill costs nothing)."""
        return self.network_capex_usd / self.capex_usd if self.capex_usd else 0.0

    @property
    def network_power_share(self) -> float:
        """The network's share of the bill's power (0 when it draws nothing)."""
        return self.network_power_w / self.power_w if self.power_w else 0.0

    def fabric_totals(self, fabric: str) -> tuple[float, float]:
        """Capex and power of the lines of one fabric (``scale-up`` or ``scale-out``)."""
        lines = [line for line in self.lines if line.fabric == fabric]
        return sum(line.capex_usd for line in lines), sum(line.total_power_w for line in lines)

    def totals(self) -> dict:
        """Every total by name, as the JSON output and a design run read them."""
        scale_up, scale_up_w = self.fabric_totals("scale-up")
        scale_out, scale_out_w = self.fabric_totals("scale-out")
        return {
            "capex_usd": self.capex_usd,
            "power_w": self.power_w,
            "network_capex_usd": self.network_capex_usd,
            "network_power_w": self.network_power_w,
            "network_capex_share": self.network_capex_share,
            "network_power_share": self.network_power_share,
            "scale_up_capex_usd": scale_up,
            "scale_up_power_w": scale_up_w,
            "scale_out_capex_usd": scale_out,
            "scale_out_power_w": scale_out_w,
            "capex_usd_per_chip": self.capex_usd / self.chips if self.chips else 0.0,
            "power_w_per_chip": self.power_w / self.chips if self.chips else 0.0,
        }

    def to_dict(self) -> dict:
        return {
            "system": self.system,
            "chips": self.chips,
            "domains": self.domains,
            **self.totals(),
            "lines": [line.to_dict() for line in self.lines],
            "notes": list(self.notes),
        }
