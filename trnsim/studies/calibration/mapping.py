"""Whether a measured run's ranks map onto the system it is fitted to; refused, never fitted, if not.

A fit compares a run with the model of the same ranks on the system. Three ways to get that wrong,
each refused in one line before any model runs:

- **across domains**: the run spanned more nodes (hosts, instances) than the system's one scale-up
  domain holds (:func:`domain_nodes`), or more ranks than it has. Such a run crossed the scale-out
  fabric, which a fit of one domain's parameters would absorb into them;
- **cores counted as chips**: nccom-test counts NeuronCores (at the logical-core setting, LNC, the
  run used), and a file whose chips are one rank each cannot tell how many of them a chip hosts: a
  16-rank Trn2 run at LNC=2 is 4 chips, not 16. The caller must say (``ranks_per_chip``, or an edit
  of ``chip.ranks``);
- **part of a chip**: the run's ranks are not whole chips of the system's ranks per chip.
"""

from trnsim.errors import UsageError
from trnsim.studies.calibration.measurement import Measurement
from trnsim.topology.graph import Topology

RANKS_KEY = "chip.ranks"  # the edit that says how many ranks a chip hosts


class AcrossDomains(UsageError):
    """A run that spanned more than one scale-up domain: a cluster's, not one domain's to fit."""


def domain_nodes(topology: Topology) -> int:
    """The nodes (servers, trays, instances) of one scale-up domain of ``topology``: a switched
    fabric's racks x nodes per rack; a torus's servers along its ``server_axis`` (1 without one)."""
    spec = topology.spec
    if spec.switched is not None:
        return spec.switched.racks * spec.switched.nodes_per_rack
    if spec.torus is not None and spec.torus.server_axis is not None:
        return next(axis.size for axis in spec.torus.axes if axis.name == spec.torus.server_axis)
    return 1


def says_ranks_per_chip(edits: list[str]) -> bool:
    """Whether ``edits`` set how many ranks a chip hosts (``chip.ranks=N``)."""
    return any(edit.partition("=")[0].strip().lower() == RANKS_KEY for edit in edits)


def check_mapping(measurement: Measurement, base: Topology, said: bool, group: str | None) -> None:
    """Refuse a run whose ranks cannot be the model's on ``base`` (see the module documentation).

    Parameters
    ----------
    measurement : Measurement
        The run (its ``ranks``, ``nodes`` and ``tool``).
    base : Topology
        The system with the caller's edits, ranks per chip included.
    said : bool
        The caller said how many ranks a chip hosts ({ranks_per_chip} or a ``chip.ranks`` edit).
    group : str, optional
        The ranks the run used, when the caller names them (else the first ``measurement.ranks``).

    Raises
    ------
    AcrossDomains
        The run spanned more nodes, or ranks, than one domain of ``base`` has.
    UsageError
        A NeuronCore count on chips of one rank with nothing said, or ranks that are part of a chip.
    """
    path, ranks, nodes = measurement.path, measurement.ranks, measurement.nodes
    held = domain_nodes(base)
    unit = base.spec.switched.node_label if base.spec.switched is not None else "server"
    if nodes is not None and nodes > held:
        raise AcrossDomains(
            f"{path}: the run spanned {nodes} nodes, and one {base.name} domain is {held} {unit}"
            f"{'s' if held != 1 else ''}: a run across domains crossed the scale-out fabric, which "
            "one domain's fit cannot hold; model it as a cluster"
        )
    per_chip = base.ranks_per_chip
    if measurement.tool == "nccom-test" and per_chip == 1 and not said:
        raise UsageError(
            f"{path}: nccom-test counts NeuronCores, and {base.name}'s chips are one rank each: say how "
            f"many of the run's {ranks} ranks share a chip with {{ranks_per_chip}} (Trn2 at LNC=2: 4; "
            "1 if each rank is a whole chip)"
        )
    if ranks > base.n_ranks:
        raise AcrossDomains(
            f"{path}: the run has {ranks} ranks and one {base.name} domain {base.n_ranks} "
            f"({base.n_chips} chips of {per_chip} rank{'s' if per_chip != 1 else ''}): a run across "
            "domains crossed the scale-out fabric, which one domain's fit cannot hold; model it as a "
            "cluster"
        )
    if group is None and ranks % per_chip:
        raise UsageError(
            f"{path}: the run's {ranks} ranks are not whole chips of {base.name}, whose chips host "
            f"{per_chip} ranks each; say the ranks per chip the run used ({{ranks_per_chip}})"
        )
