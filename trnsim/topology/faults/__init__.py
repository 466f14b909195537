"""Failed components: what a ``--fail`` text names, the system rebuilt without it, and every part
that can fail alone.

* :mod:`trnsim.topology.faults.specs` reads ``KIND:WHAT`` texts into devices, links and lanes of the
  healthy system (:func:`parse_fault`, :func:`ranks_to_chips`);
* :mod:`trnsim.topology.faults.apply` removes them, spare lanes first (:func:`apply_faults`);
* :mod:`trnsim.topology.faults.components` lists the parts that fail alone (:func:`components`), for
  the fault studies (:mod:`trnsim.studies.faults`).
"""

from trnsim.topology.faults.apply import apply_faults
from trnsim.topology.faults.components import OPTICAL_MEDIA, Component, components
from trnsim.topology.faults.specs import FAIL_KEY, KINDS, Fault, chip_classes, parse_fault, ranks_to_chips

__all__ = [
    "FAIL_KEY",
    "KINDS",
    "OPTICAL_MEDIA",
    "Component",
    "Fault",
    "apply_faults",
    "chip_classes",
    "components",
    "parse_fault",
    "ranks_to_chips",
]
