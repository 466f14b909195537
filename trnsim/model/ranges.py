"""Low and high estimates from the ranges of a file's assumptions.

A file names the range of each assumed parameter by its edit path (``ranges: {efficiency.default:
[0.85, 0.91], latency.step_ns: [1000, 2000]}``). A ranged run prices the system at every corner of
those ranges (each parameter at its low or its high end, ``2**k`` systems for ``k`` parameters) and
keeps, per size, the lowest and highest bus bandwidth: the estimate's spread from what is assumed,
not a confidence interval. Taking every corner needs no assumption about which end of a parameter
is the slow one. A parameter the run sets itself (``--set``, a calibration) is no longer an
assumption and is left out.

>>> corner_edits({"a.x": (1.0, 2.0), "b.y": (5.0, 6.0)}, ())
[('a.x=1', 'b.y=5'), ('a.x=1', 'b.y=6'), ('a.x=2', 'b.y=5'), ('a.x=2', 'b.y=6')]
>>> corner_edits({"a.x": (1.0, 2.0)}, ("a.x=1.5",))
[]
"""

from itertools import product

from trnsim.errors import UsageError

MAX_RANGED = 4  # at most 16 corners: each is a whole run


def _number(value: float) -> str:
    return f"{value:g}" if float(value).is_integer() or abs(value) < 1e15 else repr(value)


def corner_edits(ranges: dict[str, tuple[float, float]], overrides) -> list[tuple[str, ...]]:
    """The edits of every corner of ``ranges``, less the keys ``overrides`` set themselves."""
    given = {str(text).split("=", 1)[0].strip() for text in overrides}
    keys = sorted(key for key in ranges if key not in given)
    if not keys:
        return []
    if len(keys) > MAX_RANGED:
        raise UsageError(
            f"{len(keys)} ranged assumptions ({', '.join(keys)}): at most {MAX_RANGED} are priced at "
            "their corners; set the others with {overrides}"
        )
    ends = [[f"{key}={_number(end)}" for end in ranges[key]] for key in keys]
    return [tuple(corner) for corner in product(*ends)]


def busbw_ranges(topology, price) -> list[tuple[float, float]] | None:
    """Per row, the (lowest, highest) bus bandwidth of ``price`` over the corners of the ranges.

    Parameters
    ----------
    topology : Topology
        The system as the run loaded it (its file, edits and failures are kept at every corner).
    price : callable
        ``price(topology) -> list of busbw_gbps``, one per row, the same rows at every corner.

    Returns
    -------
    list of (float, float) or None
        None when the file ranges nothing the run leaves to it.
    """
    from trnsim.topology import load_topology

    corners = corner_edits(topology.spec.ranges, topology.overrides)
    if not corners:
        return None
    low = high = None
    for corner in corners:
        system = load_topology(None, topology.path, [*topology.overrides, *corner])
        if system.chips != topology.chips:
            raise UsageError(f"ranges: {', '.join(corner)} changes the system's ranks: not an assumption")
        values = price(system)
        low = values if low is None else [min(a, b) for a, b in zip(low, values, strict=True)]
        high = values if high is None else [max(a, b) for a, b in zip(high, values, strict=True)]
    return list(zip(low, high, strict=True))


def ranged_collective(topology, selection, op: str, sizes: list[int], algo: str, dtype: str, runtime: str):
    """:func:`busbw_ranges` of one collective as ``runtime`` prices it on ``selection``'s group.

    Parameters
    ----------
    selection : Selection
        Who runs it (:class:`~trnsim.model.backend.Selection`; one group).
    """
    from trnsim.model.runtime import apply_runtime

    def price(system) -> list[float]:
        ideal = selection.backend(system).evaluate(op, sizes, algo, dtype)
        return [row.busbw_gbps for row in apply_runtime(system, ideal, runtime).rows]

    return busbw_ranges(topology, price)
