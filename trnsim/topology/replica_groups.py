"""nccom-test's ranks and replica-group files: logical NeuronCores, numbered instance by instance.

nccom-test (aws-neuron-sdk, ``tools/neuron-sys-tools/nccom-test.rst``; online at
https://awsdocs-neuron.readthedocs-hosted.com/en/latest/tools/neuron-sys-tools/nccom-test.html)
numbers its ranks as logical NeuronCores: ``cores_per_chip / lnc`` on each chip (the file's
``runtime.neuron``), chips in the file's order within an instance (a server of a torus, else a node of
a switched fabric), instances one after another. Its ``--custom-replica-groups FILE`` names the groups
a collective runs on; the page's example (``stream_0_rg.json``, under "Multistream") is an object
holding one list of groups, each a list of ranks::

    {"replica_groups": [[[0, 1, 2, 3], [4, 5, 6, 7]]]}

:func:`read_replica_groups` reads that form (and, as plainer spellings of it, the object with the
groups unwrapped, ``{"replica_groups": [[0, 1, 2, 3], [4, 5, 6, 7]]}``, or the bare list of groups) into
the topology's ranks: the inverse of the numbering ``measure-plan`` writes its replica-group file in
(:mod:`trnsim.studies.measure_plan`), so a group it wrote reads back as the same group when the
instances it touches are the first ones. A system without a ``runtime.neuron`` section has no
NeuronCores: its files' ranks are the topology's rank numbers.
"""

import json
from pathlib import Path

from trnsim.errors import UsageError
from trnsim.topology.graph import Topology

EXAMPLE = '{"replica_groups": [[[0, 1], [2, 3]]]}'


def instance_of(topology: Topology, chip: str):
    """The instance (one host of the benchmark) a physical chip sits in: the file's server, else its node."""
    data = topology.nodes[chip]
    if "server" in data:
        return data["server"]
    return (data.get("rack", 0), data.get("node", 0))


def instances(topology: Topology) -> dict[object, list[str]]:
    """Every instance's physical chips, in the file's order."""
    out: dict[object, list[str]] = {}
    for chip in topology.physical_chips:
        out.setdefault(instance_of(topology, chip), []).append(chip)
    return out


def logical_cores(topology: Topology) -> int | None:
    """nccom-test's ranks per chip (``cores_per_chip / lnc``), or None without ``runtime.neuron``."""
    facts = topology.spec.runtime.neuron
    return None if facts is None else facts.cores_per_chip // facts.lnc


def core_numbering(topology: Topology) -> list[tuple[str, int]]:
    """Per nccom-test rank (a logical NeuronCore, in order): its physical chip and its core on it."""
    logical = logical_cores(topology) or 1
    return [
        (chip, core) for chips in instances(topology).values() for chip in chips for core in range(logical)
    ]


def read_replica_groups(topology: Topology, path: Path) -> list[list[str]]:
    """The groups (rank names, each group in rank order) a replica-group file names (module docstring).

    Raises
    ------
    UsageError
        In one line naming the file: not JSON, not lists of ranks, a rank the system does not have,
        or a NeuronCore the topology does not model as a rank of its own.
    """
    from trnsim.yamlio import read_text

    path = Path(path)
    try:
        document = json.loads(read_text(path, "replica-groups file"))
    except json.JSONDecodeError as error:
        raise UsageError(f"{path}: not JSON ({error.msg} at line {error.lineno})") from None
    groups = _groups_of(path, document)
    logical = logical_cores(topology)
    numbering = core_numbering(topology) if logical is not None else None
    out = []
    for k, group in enumerate(groups):
        ranks = [_rank(topology, path, k, value, numbering) for value in group]
        if len(set(ranks)) != len(ranks):
            twice = next(value for value in group if group.count(value) > 1)
            raise UsageError(f"{path}: replica group {k} names rank {twice} twice")
        out.append(sorted(ranks, key=topology.rank_of.__getitem__))
    return out


def _groups_of(path: Path, document) -> list[list[int]]:
    """The lists of ranks in nccom-test's form or a plainer spelling of it, else one clear refusal."""
    if isinstance(document, dict):
        if set(document) != {"replica_groups"}:
            keys = ", ".join(map(repr, document)) or "none"
            raise UsageError(
                f"{path}: expected an object with one key, replica_groups (e.g. {EXAMPLE}); keys: {keys}"
            )
        document = document["replica_groups"]
    if isinstance(document, list) and document and all(isinstance(item, list) for item in document):
        if all(item and all(isinstance(group, list) for group in item) for item in document):
            if len(document) != 1:  # nccom-test's wrapping holds one list of groups
                raise UsageError(
                    f"{path}: {len(document)} lists of replica groups; expected one (e.g. {EXAMPLE})"
                )
            document = document[0]
        if all(_is_ranks(group) for group in document):
            return document
    raise UsageError(
        f"{path}: expected nccom-test's replica groups, lists of ranks (whole numbers >= 0), e.g. {EXAMPLE}"
    )


def _is_ranks(group) -> bool:
    return (
        isinstance(group, list)
        and bool(group)
        and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in group)
    )


def _rank(topology: Topology, path: Path, k: int, value: int, numbering) -> str:
    """The rank name a file's rank number stands for (a NeuronCore where the system has them)."""
    where = f"{path}: replica group {k}"
    if numbering is None:
        if value >= topology.n_ranks:
            raise UsageError(f"{where}: rank {value}; {topology.name} has ranks 0..{topology.n_ranks - 1}")
        return topology.chips[value]
    if value >= len(numbering):
        raise UsageError(
            f"{where}: rank {value}; nccom-test numbers {topology.name}'s logical NeuronCores "
            f"0..{len(numbering) - 1} ({logical_cores(topology)} per chip)"
        )
    chip, core = numbering[value]
    ranks = topology.ranks_by_chip[chip]
    if core >= len(ranks):
        raise UsageError(
            f"{where}: rank {value} is logical NeuronCore {core} of chip {chip}, which {topology.name} "
            f"models as {len(ranks)} rank{'s' * (len(ranks) != 1)}; model each core as a rank with "
            f"{{overrides}} chip.ranks={logical_cores(topology)}"
        )
    return ranks[core]
