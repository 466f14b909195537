"""Trays: the boards chips and switches sit on, as parts that fail and are swapped whole.

A switched file's nodes are its compute trays (or servers): ``len(slots)`` chips each, with their
on-node switches. Its plane switches sit in switch trays of ``switches_per_tray`` switch chips
(``switched.switch_fabric.switches_per_tray``). A rack's plane switches fill its switch trays in
order, switch k of every plane before switch k+1 (planes in the file's order,
:meth:`trnsim.spec.schema.SwitchFabric.tray_of`): with one switch of each plane per tray, tray k holds
switch k of every plane (Trn3 NL72x2 Gen1: 10 trays of 4, a chip's port k on tray k); with one plane
of 18 switches and 2 per tray (GB200 NVL72), tray k holds switches 2k and 2k+1.

A file that does not say how many switch chips a tray holds gets one switch of each plane per tray
(:data:`DEFAULT_ASSUMPTION`), which keeps each chip's ports on distinct trays, as on Trn3;
``switches_per_tray: 0`` says the switches sit on a node's board and are in no tray (HGX servers).
"""

from trnsim.spec.schema import Spec

# what topo show says when a file leaves the tray size to the default
DEFAULT_ASSUMPTION = "assumption: one switch of each plane per tray"


def trays(spec: Spec) -> dict:
    """What the trays of a spec hold, from its numbers alone (``topo show``).

    Returns
    -------
    dict
        ``node``: the compute trays (or servers): ``label``, ``count``, ``per_rack``, and ``chips``,
        ``ranks`` and (on-node) ``switches`` in each. ``switch`` (switched fabrics with switch
        planes): the switch trays' ``count``, ``per_rack``, ``switches`` in each, ``model`` and
        ``assumed`` (the file does not say), or None when the switches are in no tray. Empty for a
        torus without trays.
    """
    if spec.kind == "torus":
        if spec.torus.hypercube_plane is None:
            return {}
        chips = 1
        for axis in spec.torus.axes:
            chips *= axis.size
        # the plane's 4-cube pairs chips by bit 0 of its address: trays of two chips (trnsim.topology.torus)
        node = {"label": "tray", "count": chips // 2, "per_rack": None, "chips": 2, "switches": 0}
        return {"node": {**node, "ranks": 2 * spec.chip.ranks}}
    layout = spec.switched
    local = layout.node_local
    out: dict = {
        "node": {
            "label": layout.node_label,
            "count": layout.racks * layout.nodes_per_rack,
            "per_rack": layout.nodes_per_rack,
            "chips": len(layout.slots),
            "ranks": len(layout.slots) * spec.chip.ranks,
            "switches": local.switches if local is not None and local.kind == "switches" else 0,
        }
    }
    fabric = layout.switch_fabric
    if fabric is not None:
        out["switch"] = (
            {
                "count": layout.racks * fabric.trays_per_rack,
                "per_rack": fabric.trays_per_rack,
                "switches": fabric.tray_size,
                "model": fabric.switch_model,
                "assumed": fabric.switches_per_tray is None,
            }
            if fabric.trays_per_rack
            else None
        )
    return out
