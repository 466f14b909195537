"""``bill_of_materials``: count a built system's parts and price them from the parts catalog."""

import math

from trnsim.errors import ConfigError
from trnsim.spec.parts import Part, Parts, PartSpec
from trnsim.spec.parts_catalog import load_parts
from trnsim.studies.cost.bill import PER_UNIT, Bill, Item, Line
from trnsim.studies.cost.scaleout import default_domains, scale_out_items
from trnsim.studies.cost.scaleup import scale_up_items
from trnsim.topology.graph import Topology


def bill_of_materials(topology: Topology, parts: Parts | None = None, *, domains: int | None = None) -> Bill:
    """The bill of materials of a built system: every part counted from the graph and the file's
    counts, priced from the parts catalog.

    Parameters
    ----------
    topology : Topology
        The built system (its healthy form is counted: a failed part is still bought).
    parts : Parts, optional
        The parts catalog (:func:`trnsim.spec.parts_catalog.load_parts`); by default the one that ships.
        The topology file's own ``parts:`` section is slipped in above the default catalog and the
        run's ``parts.*`` edits are applied on top of everything.
    domains : int, optional
        Domains of the cluster whose scale-out fabric the system shares; by default an assumed
        cluster of :data:`~trnsim.studies.cost.scaleout.DEFAULT_CLUSTER_CHIPS` chips.

    Returns
    -------
    Bill

    Raises
    ------
    ConfigError
        When a part the system needs has no price or power (one line naming the part and where to
        give it), or a part's ``per`` does not fit what it prices.
    """
    parts = system_parts(topology, parts)
    for name in parts.names:  # every part any layer names is whole: a misspelt edit is refused
        parts.get(name)
    items = scale_up_items(topology)
    out_items, notes = scale_out_items(topology, domains)
    lines = [price(item, parts, topology) for item in items + out_items]
    if topology.spec.scale_out is not None and domains is None:
        domains = default_domains(topology.n_chips)
    return Bill(system=topology.name, chips=topology.n_chips, lines=lines, domains=domains, notes=notes)


def system_parts(topology: Topology, parts: Parts | None = None) -> Parts:
    """The parts catalog as the system sees it: ``parts`` (by default the shipped catalog), the
    topology file's own ``parts:`` section above the default, and the run's ``parts.*`` edits on top."""
    parts = load_parts() if parts is None else parts
    where = str(topology.path) if topology.path else topology.name
    parts = parts.under(f"{where}", dict(topology.spec.parts))
    edited = _edited_parts(topology)
    if not edited:
        return parts
    edits = [edit.strip() for edit in topology.overrides if edit.strip().startswith("parts.")]
    return parts.over(f"{where} with the edits {', '.join(edits)}", edited)


def _edited_parts(topology: Topology) -> dict[str, PartSpec]:
    """The parts fields the run's edits set, as a layer (they were validated with the file)."""
    edited: dict[str, dict] = {}
    for edit in topology.overrides:
        keys = edit.split("=", 1)[0].strip().split(".")
        if len(keys) == 3 and keys[0] == "parts":
            edited.setdefault(keys[1], {})[keys[2]] = None
        elif len(keys) == 2 and keys[0] == "parts":
            edited.setdefault(keys[1], {})
    layer = {}
    for name, fields in edited.items():
        spec = topology.spec.parts.get(name)
        if spec is None:
            continue
        keep = fields or {key: None for key in PartSpec.__struct_fields__}
        layer[name] = PartSpec(**{key: getattr(spec, key) for key in keep})
    return layer


def price(item: Item, parts: Parts, topology: Topology) -> Line:
    """One item priced by the first of its part names the catalog holds."""
    name = next((name for name in item.parts if parts.has(name)), item.parts[-1])
    part = parts.get(name, role=f"{item.kind} of {topology.name}")
    count = item.count if item.count is not None else _nic_count(item, part)
    quantity = {"each": count, "lane": item.lanes, "gbit": item.gbit}[part.per]
    if quantity is None:
        raise ConfigError(
            f"{part.origin}: parts.{name}.per: a {item.kind} is not priced per {part.per}; expected one "
            f"of {', '.join(key for key, unit in PER_UNIT.items() if _has(item, unit, count))}"
        )
    return Line(
        part=name,
        kind=item.kind,
        count=count,
        quantity=quantity,
        per=part.per,
        price_usd=part.price_usd,
        power_w=part.power_w,
        source=part.source,
        origin=part.origin,
        medium=item.medium,
        length=item.length,
        network=item.network,
        fabric=item.fabric,
        detail=item.detail,
    )


def _has(item: Item, unit: str, count: float | None) -> bool:
    return (count if unit == "count" else getattr(item, unit)) is not None


def _nic_count(item: Item, part: Part) -> float:
    """NICs for the chips' NIC bandwidth: whole NICs of the part's capacity (one per chip when the
    part gives none)."""
    if part.gbit is None:
        raise ConfigError(
            f"{part.origin}: parts.{part.name}.gbit: missing; a NIC's capacity in Gbit/s says how many "
            "the chips' NIC bandwidth needs"
        )
    return math.ceil(item.gbit / part.gbit - 1e-9)
