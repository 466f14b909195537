"""What a system costs: its bill of materials, counted from the built system and priced from the
parts catalog (:mod:`trnsim.spec.parts`).

* :mod:`~trnsim.studies.cost.scaleup`: chips, switch chips, switch trays, links, retimers (the graph);
* :mod:`~trnsim.studies.cost.scaleout`: the system's share of its scale-out fabric (the Clos math);
* :mod:`~trnsim.studies.cost.bill`: items, priced lines and totals;
* :mod:`~trnsim.studies.cost.materials`: :func:`bill_of_materials`, the whole of it.
"""

from trnsim.spec.parts import Part, Parts
from trnsim.spec.parts_catalog import load_parts
from trnsim.studies.cost.bill import Bill, Item, Line
from trnsim.studies.cost.materials import bill_of_materials, system_parts
from trnsim.studies.cost.scaleout import DEFAULT_CLUSTER_CHIPS

__all__ = [
    "DEFAULT_CLUSTER_CHIPS",
    "Bill",
    "Item",
    "Line",
    "Part",
    "Parts",
    "bill_of_materials",
    "load_parts",
    "system_parts",
]
