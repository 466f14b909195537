"""Parts and their price and power: the catalog a bill of materials (:mod:`trnsim.studies.cost`) reads.

A part is named (``trainium3``, ``scorpio-x-160``, ``aec``, ``nic-efa``) and carries a price in US
dollars and a power in watts per unit: per part (``per: each``), per lane of a link (``per: lane``) or
per Gbit/s of capacity (``per: gbit``: scale-out switches, transceivers, cables). Every figure is an
assumption or a public figure, and its ``source`` says which.

The figures come in layers, each over the one before, field by field (a layer may give only the
price of a part): the default catalog that ships with trnsim (``topologies/parts/parts.yaml``), a
topology file's own ``parts:`` section, a user's parts file (``--parts FILE``), and last the
``--set parts.NAME.price_usd=...`` edits of a run, which are applied to the topology document and
re-applied on top. A part new to the catalog needs ``price_usd``, ``power_w`` and ``source``.
"""

from dataclasses import dataclass, field

import msgspec

from trnsim.errors import ConfigError
from trnsim.spec.schema import PartName, PartSpec, Text


class PartsFile(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A parts file: ``parts:`` by name, with an optional description and source."""

    parts: dict[PartName, PartSpec]
    description: Text = ""
    source: Text = ""


@dataclass(frozen=True)
class Part:
    """A part with every figure resolved: what a bill's line prices."""

    name: str
    price_usd: float
    power_w: float
    per: str
    source: str
    gbit: float | None = None
    origin: str = ""  # the layer that gave its price (the default catalog, a file, --set)


@dataclass(frozen=True)
class Parts:
    """The parts catalog as layers, lowest first: ``(origin, {name: PartSpec})``.

    :meth:`get` resolves a part field by field through the layers; :meth:`over` adds layers on top
    and :meth:`under` slips one in just above the default catalog (a topology file's own section).
    """

    layers: tuple[tuple[str, dict[str, PartSpec]], ...] = field(default_factory=tuple)

    def over(self, origin: str, specs: dict[str, PartSpec]) -> "Parts":
        """These parts with a layer on top."""
        return Parts(self.layers + ((origin, dict(specs)),)) if specs else self

    def under(self, origin: str, specs: dict[str, PartSpec]) -> "Parts":
        """These parts with a layer just above the first (the default catalog)."""
        if not specs:
            return self
        return Parts(self.layers[:1] + ((origin, dict(specs)),) + self.layers[1:])

    @property
    def names(self) -> list[str]:
        """Every part any layer names, sorted."""
        return sorted({name for _, specs in self.layers for name in specs})

    def get(self, name: str, *, role: str = "") -> Part:
        """The part ``name`` with each figure from the highest layer that gives it.

        Raises
        ------
        ConfigError
            When no layer names it (``role`` says what it is for), or it lacks a price, power or source.
        """
        figures: dict = {}
        origins: dict = {}  # the layer each figure comes from
        sources: dict = {}  # each layer's source, by origin
        for origin, specs in self.layers:
            spec = specs.get(name)
            if spec is None:
                continue
            sources[origin] = spec.source
            for key in PartSpec.__struct_fields__:
                value = getattr(spec, key)
                if value is not None and key != "source":
                    figures[key], origins[key] = value, origin
        if not sources:
            raise ConfigError(_missing(name, role, self.names))
        given = {**figures, **({"source": True} if any(sources.values()) else {})}
        for key in ("price_usd", "power_w", "source"):
            if key not in given:
                where = origins.get("price_usd") or origins.get("power_w") or next(iter(sources))
                raise ConfigError(
                    f"{where}: parts.{name}.{key}: missing; a part new to the catalog needs price_usd, "
                    f"power_w and source{_close(name, self.names)}"
                )
        order = [origin for origin, _ in self.layers]
        used = sorted(set(origins.values()), key=order.index, reverse=True)  # the highest layer first
        return Part(
            name=name,
            price_usd=float(figures["price_usd"]),
            power_w=float(figures["power_w"]),
            per=figures.get("per", "each"),
            source=_attributed(used, origins, sources),
            gbit=figures.get("gbit"),
            origin=", ".join(used),
        )

    def has(self, name: str) -> bool:
        return any(name in specs for _, specs in self.layers)


def _attributed(used: list[str], origins: dict, sources: dict) -> str:
    """The source of a part's figures: the one layer's, or each layer's with the figures it gives
    (a layer that gives a figure without a source is named as the one that set it)."""
    if len(used) == 1:
        return sources[used[0]] or next(text for text in reversed(list(sources.values())) if text)
    parts = []
    for origin in used:  # the highest layer first
        keys = ", ".join(key for key, where in origins.items() if where == origin)
        parts.append(f"{keys}: {sources[origin] or f'set by {origin}'}")
    return "; ".join(parts)


def _close(name: str, names: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, [other for other in names if other != name], n=3, cutoff=0.6)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def _missing(name: str, role: str, names: list[str]) -> str:
    what = f" ({role})" if role else ""
    return (
        f"parts: no part {name!r}{what} in the parts catalog{_close(name, names)}; give its price_usd, "
        f"power_w and source in a parts file (parts: {{{name}: {{...}}}}) or the topology file's parts: section"
    )
