"""Small systems written as topology files and loaded as the CLI loads them: with ``--set`` edits
(latencies, lanes, efficiencies) and ``--fail`` faults, so that tests can set every parameter of the
alpha-beta model through the files and overrides a user would.

Equal links of ``lanes`` GB/s (the chip's lanes run at 1 GB/s and it has lanes to spare, so its links
bind), zero latencies unless an edit sets them.
"""

from pathlib import Path

import yaml

from trnsim.topology.load import load_topology
from trnsim.topology.synthetic import CHIP, LATENCY


def ring(p: int, lanes: int = 100) -> dict:
    """A ring of ``p`` chips (a one-axis torus): links ``x``, chips relay (``latency.relay_ns``)."""
    torus = {"axes": [{"name": "x", "size": p, "lanes": lanes}]}
    return {"name": f"ring{p}", "kind": "torus", "chip": CHIP, "latency": LATENCY, "torus": torus}


def complete(p: int, lanes: int = 100) -> dict:
    """``p`` chips on one tray, every pair joined by a direct link (class ``pcb``)."""
    slots = [f"c{i}" for i in range(p)]
    layout = {
        "racks": 1,
        "nodes_per_rack": 1,
        "slots": slots,
        "node_local": {"kind": "direct", "lanes_per_link": lanes},
    }
    return {"name": f"complete{p}", "kind": "switched", "chip": CHIP, "latency": LATENCY, "switched": layout}


def two_racks(m: int, inner: int = 100, cross: int = 30) -> dict:
    """Two racks of one tray of ``m`` chips: direct ``pcb`` links inside a rack, an ``xrack`` link
    from each chip to the chip in its position in the other rack."""
    layout = {
        "racks": 2,
        "nodes_per_rack": 1,
        "slots": [f"c{i}" for i in range(m)],
        "node_local": {"kind": "direct", "lanes_per_link": inner},
        "cross_rack": {"lanes": cross},
    }
    return {"name": f"racks2x{m}", "kind": "switched", "chip": CHIP, "latency": LATENCY, "switched": layout}


def load(document: dict, folder: Path, edits=()):
    """Write ``document`` as ``folder/<name>.yaml`` and load it with ``edits`` (``--set`` and ``fail=``)."""
    path = Path(folder) / f"{document['name']}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return load_topology(topology=path, overrides=list(edits))


def busbw_factor(op: str, p: int) -> float:
    """nccl-tests' busbw over algbw, as its PERFORMANCE.md defines it (written out here, not the
    library's): all-reduce ``2(p-1)/p``, all-gather, reduce-scatter and all-to-all ``(p-1)/p``."""
    return (2 if op == "allreduce" else 1) * (p - 1) / p
