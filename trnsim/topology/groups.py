"""Select the chips a collective runs on: a ``group`` spec or the first ``ranks``.

Group specs: ``all``; ``rack:K``; ``server:K`` / ``node:K`` (a node of a switched fabric, numbered
across racks, or a server of a torus); ``tray:K`` (a switched fabric's node, or a two-chip tray of a
torus wired as a hypercube, numbered across servers); ``plane:NAME`` (the chips a switch plane
serves); ``slot:NAME`` (``0``/``1`` on such a torus); a rank range ``0-31``; a list ``0,2,5-7``
(ranks or chip names).

Many groups at once (a ``groups`` spec): ``KIND:*`` (every rack, server, node, tray, plane or slot), or
``stride:N`` (ranks ``i, i+N, i+2N, ...`` for each ``i < N``), ``blocks:K`` (consecutive blocks of
``K`` ranks), explicit groups separated by ``;`` (``0-3;4-7``), or a ``.json`` file of replica groups
as nccom-test's ``--custom-replica-groups`` takes them (:mod:`trnsim.topology.replica_groups`).
"""

from trnsim.errors import ParameterError, UsageError
from trnsim.topology.graph import Topology


def _is_number(text: str) -> bool:
    """A whole number in ASCII digits (``str.isdigit`` also takes ``²`` and other scripts)."""
    return text.isascii() and text.isdigit()


def _ranks_from_list(topology: Topology, text: str) -> list[int]:
    try:
        return _listed(topology, text)
    except UsageError as exc:  # a rank or chip the topology lacks: say which group named it
        if exc.template.startswith("{group}"):
            raise
        raise UsageError(f"{{group}} {text!r}: {exc.template}") from None


def _listed(topology: Topology, text: str) -> list[int]:
    ranks: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        if sep and _is_number(lo) and _is_number(hi):
            if int(hi) < int(lo):
                raise UsageError(f"{{group}} range {part!r} runs backwards")
            for rank in range(int(lo), int(hi) + 1):
                ranks.append(topology.rank_of[topology.resolve_chip(rank)])
        else:  # a rank, or a chip that hosts several ranks: all of them
            ranks.extend(topology.rank_of[rank] for rank in topology.resolve_ranks(part))
    return ranks


def _attribute_group(topology: Topology, key: str, value: str) -> list[int]:
    graph, spec = topology.nodes, topology.spec
    chips = topology.chips
    if key in ("rack", "server", "node", "tray") and not _is_number(value):
        raise UsageError(f"{{group}} {key}:{value}: expected a number, e.g. {key}:0")
    if key == "rack":
        if spec.kind != "switched":
            raise UsageError(
                f"{topology.name} has no racks (it is a {spec.kind}); try server:K or a rank range"
            )
        return [r for r, c in enumerate(chips) if graph[c]["rack"] == int(value)]
    if key in ("server", "node") or (key == "tray" and spec.kind == "switched"):
        if spec.kind == "switched":
            # by location, not rank arithmetic: a chip may host several ranks
            per_rack = spec.switched.nodes_per_rack
            return [
                r for r, c in enumerate(chips) if graph[c]["rack"] * per_rack + graph[c]["node"] == int(value)
            ]
        if spec.torus.server_axis is None:
            return list(range(len(chips))) if int(value) == 0 else []
        return [r for r, c in enumerate(chips) if graph[c]["server"] == int(value)]
    if key == "tray":  # a torus wired as two-chip trays (its hypercube plane): trays numbered across servers
        if "tray" not in graph[chips[0]]:
            raise UsageError(f"{topology.name} has no trays; use server:K or a rank range")
        per_server = 1 + max(graph[c]["tray"] for c in chips)
        return [
            r
            for r, c in enumerate(chips)
            if graph[c].get("server", 0) * per_server + graph[c]["tray"] == int(value)
        ]
    if key == "plane":
        fabric = spec.switched.switch_fabric if spec.kind == "switched" else None
        planes = {plane.name: plane.slots for plane in fabric.planes} if fabric else {}
        if value not in planes:
            raise UsageError(
                f"{topology.name} has no switch plane {value!r}; planes: {', '.join(planes) or 'none'}"
            )
        return [r for r, c in enumerate(chips) if graph[c]["slot"] in planes[value]]
    if key == "slot":
        if "slot" not in graph[chips[0]]:
            raise UsageError(f"{topology.name} has no slots (a torus has them only when wired as trays)")
        return [r for r, c in enumerate(chips) if str(graph[c]["slot"]) == value]
    raise UsageError(
        f"unknown {{group}} kind {key!r}; use all, rack:K, server:K, plane:NAME, slot:NAME, 0-31 or 0,1,5"
    )


def group_label(spec: str | None, ranks: int | None, groups: str | None = None) -> str:
    """How a run's group is named in titles, JSON, CSV and baselines (``all`` in one spelling);
    many groups at once are ``groups SPEC``."""
    if groups is not None:
        return f"groups {groups.strip()}"
    if spec is not None and spec.strip().lower() != "all":
        return spec.strip()
    return f"first {ranks}" if ranks else "all"


def select_group(topology: Topology, spec: str | None = None, ranks: int | None = None) -> list[str]:
    """The chips (in rank order) that take part, from a ``spec`` or the first ``ranks``.

    Parameters
    ----------
    topology : Topology
        The system.
    spec : str, optional
        A group spec (see the module docstring); ``all`` by default.
    ranks : int, optional
        Use the first ``ranks`` ranks instead.

    Raises
    ------
    UsageError
        For an unknown spec, chips the topology does not have, or fewer than two chips.
    """
    if spec is not None and ranks is not None:
        raise UsageError("give {group} or {ranks}, not both", names=("group", "ranks"))
    per_chip = topology.spec.chip.ranks
    unit = "rank" if per_chip > 1 else "chip"
    if ranks is not None:
        if not 2 <= ranks <= topology.n_ranks:
            held = (
                f"{topology.n_ranks} ranks ({per_chip} on each chip)"
                if per_chip > 1
                else f"{topology.n_ranks} chips"
            )
            raise ParameterError(
                f"{topology.name} has {held}; give 2..{topology.n_ranks}", "ranks", f"{ranks}"
            )
        selected = list(range(ranks))
    elif spec is None or spec.strip().lower() == "all":
        selected = list(range(topology.n_ranks))
    else:
        key, sep, value = spec.partition(":")
        selected = (
            _attribute_group(topology, key.strip().lower(), value.strip())
            if sep
            else _ranks_from_list(topology, spec)
        )
        if not selected:
            valid = _values(topology, key.strip().lower()) if sep else []
            numbers = [int(v) for v in valid if _is_number(v)]
            listed = (
                f"{min(numbers)}..{max(numbers)}"
                if numbers and len(numbers) == len(valid) and len(numbers) == max(numbers) - min(numbers) + 1
                else ", ".join(valid)
            )
            names = f"; its {key.strip().lower()}s are {listed}" if valid else ""
            raise UsageError(f"{{group}} {spec!r} names no {unit}s of {topology.name}{names}")
    unique = sorted(set(selected))
    if len(unique) != len(selected):
        raise UsageError(f"{{group}} {spec!r} names a {unit} twice")
    if len(unique) < 2:
        what = f"{{group}} {spec!r}" if spec is not None else f"{topology.name} (all of it)"
        raise UsageError(f"{what} has {len(unique)} {unit}; a collective needs at least 2")
    return [topology.chips[r] for r in unique]


def select_groups(topology: Topology, spec: str) -> list[list[str]]:
    """Several disjoint groups from a ``groups`` spec (see the module docstring), in rank order.

    Raises
    ------
    UsageError
        For an unknown spec, overlapping groups, or a group of fewer than two ranks.
    """
    text = spec.strip()
    key, sep, value = text.partition(":")
    key, value = key.strip().lower(), value.strip()
    n = topology.n_ranks
    if text.lower().endswith(".json"):
        from pathlib import Path

        from trnsim.topology.replica_groups import read_replica_groups

        groups = read_replica_groups(topology, Path(text))
    elif ";" in text:
        try:
            groups = [select_group(topology, part) for part in text.split(";") if part.strip()]
        except UsageError as exc:  # one group's message, which names it as {group}
            inner = exc.template.removeprefix("{group} ")
            raise ParameterError(f"group {inner}", "groups", repr(spec)) from None
    elif sep and value == "*":
        if key not in ("rack", "server", "node", "tray", "plane", "slot"):
            raise ParameterError(
                f"unknown kind {key!r}; use rack, server, node, tray, plane or slot", "groups", repr(spec)
            )
        groups = []
        for candidate in _values(topology, key):
            try:
                ranks = sorted(_attribute_group(topology, key, candidate))
            except UsageError:
                continue
            if ranks:
                groups.append([topology.chips[r] for r in ranks])
        if not groups:
            raise ParameterError(f"{topology.name} has no {key}s", "groups", repr(spec))
    elif sep and key in ("stride", "blocks"):
        if not _is_number(value) or not 1 <= int(value) <= n:
            raise ParameterError(f"expected {key}:N with N from 1 to {n}", "groups", repr(spec))
        k = int(value)
        if n % k:
            what = f"{k} strided groups" if key == "stride" else f"blocks of {k}"
            raise ParameterError(
                f"{n} {'ranks' if topology.spec.chip.ranks > 1 else 'chips'} do not split "
                f"into {what} of one size; concurrent groups run in lockstep and must be of one size",
                "groups",
                repr(spec),
            )
        if key == "stride":
            groups = [[topology.chips[r] for r in range(i, n, k)] for i in range(k)]
        else:
            groups = [[topology.chips[r] for r in range(lo, min(lo + k, n))] for lo in range(0, n, k)]
    else:
        raise ParameterError(
            "expected KIND:* (rack, server, node, tray, plane, slot), stride:N, "
            "blocks:K, groups separated by ';' (0-3;4-7) or a replica-groups .json file",
            "groups",
            repr(spec),
        )
    unit = "rank" if topology.spec.chip.ranks > 1 else "chip"
    if not groups:
        raise ParameterError("names no groups", "groups", repr(spec))
    seen: set[str] = set()
    for group in groups:
        if len(group) < 2:
            raise ParameterError(
                f"a group has {len(group)} {unit}; each needs at least 2", "groups", repr(spec)
            )
        if seen & set(group):
            raise ParameterError(f"{sorted(seen & set(group))[0]} is in two groups", "groups", repr(spec))
        seen |= set(group)
    if len({len(group) for group in groups}) != 1:
        sizes = sorted({len(group) for group in groups})
        raise ParameterError(
            f"groups of {' and '.join(map(str, sizes))} {unit}s; concurrent groups run "
            "in lockstep and must be of one size",
            "groups",
            repr(spec),
        )
    return groups


def _values(topology: Topology, key: str) -> list[str]:
    """Every value a ``KIND:*`` group spec ranges over."""
    spec, nodes = topology.spec, topology.nodes
    if key == "rack" and spec.kind == "switched":
        return [str(i) for i in range(spec.switched.racks)]
    if key in ("server", "node") or (key == "tray" and spec.kind == "switched"):
        if spec.kind == "switched":
            return [str(i) for i in range(spec.switched.racks * spec.switched.nodes_per_rack)]
        return [str(v) for v in sorted({nodes[c].get("server", 0) for c in topology.chips})]
    if key == "tray":
        trays = sum(1 for _ in {(nodes[c].get("server", 0), nodes[c].get("tray")) for c in topology.chips})
        return [str(i) for i in range(trays)]
    if key == "plane":
        fabric = spec.switched.switch_fabric if spec.kind == "switched" else None
        return [plane.name for plane in fabric.planes] if fabric else []
    if key == "slot":
        return [str(v) for v in dict.fromkeys(nodes[c].get("slot") for c in topology.chips) if v is not None]
    return []
