"""What bounds a cluster collective: the bytes that must cross between domains, and every rank's
own links; and the composition's own ceiling (its busiest resource, no latency)."""


def efa_bound_us(op: str, size: int, n: int, d: int, nic_gbps: float) -> float:
    """The least time the domains' NICs need for the bytes that must cross between domains.

    All-reduce: every domain's result depends on every other's input, and its input reaches every
    other's result: at least ``2(D-1)/D S`` through its ``n`` NICs (Patarasuk and Yuan's argument
    with domains as members). All-gather, reduce-scatter: ``(D-1)/D S``. All-to-all: each rank sends
    ``(D-1)/D S`` across.

    Examples
    --------
    An all-reduce of 8 MB over 2 domains of 4 ranks: each NIC carries ``2 (1/2) 8 MB / 4`` = 2 MB,
    20 us at 100 GB/s.

    >>> efa_bound_us("allreduce", 8e6, 4, 2, 100.0)
    20.0
    """
    return _across_bytes(op, size, n, d) / (nic_gbps * 1e3)


def _across_bytes(op: str, size: int, n: int, d: int) -> float:
    """Bytes each rank's NIC carries across domains: ``2(D-1)/D S/n`` for all-reduce, ``(D-1)/D S``
    for all-to-all, ``(D-1)/D S/n`` for all-gather and reduce-scatter (0 with one domain)."""
    if d <= 1:
        return 0.0
    share = (d - 1) / d
    if op == "allreduce":
        return 2 * share * size / n
    if op == "alltoall":
        return share * size
    return share * size / n


def injection_us(op: str, size: int, ranks: int, rank_gbps: float, in_network: bool = False) -> float:
    """Every rank sends and receives ``2(N-1)/N S`` (all-reduce) or ``(N-1)/N S`` through its own
    links, scale-up and NIC together; an all-reduce whose switches reduce in the network (``in_network``)
    only ``S`` (its input out, the result in).

    Examples
    --------
    >>> injection_us("allgather", 8e6, 8, 100.0)  # 7/8 of 8 MB at 100 GB/s
    70.0
    """
    share = (ranks - 1) / ranks
    moved = share * size
    if op == "allreduce":
        moved = size if in_network else 2 * moved
    return moved / (rank_gbps * 1e3)


def ceiling_us(
    op: str, size: int, n: int, d: int, rank_gbps: float, nic_gbps: float, in_network: bool = False
) -> float:
    """The composition's own limit: its in-domain phases on a rank's scale-up links and its
    cross-domain phase on the NICs, overlapped (the slower of the two; no latency). ``in_network``:
    the in-domain all-reduce reduces in the switches, ``S`` each way through a rank's links.

    Examples
    --------
    An all-reduce of 8 MB, 2 domains of 4 ranks: inside, ``2 (3/4) 8 MB`` over 300 GB/s (40 us);
    across, 2 MB per NIC over 100 GB/s (20 us). The slower binds.

    >>> ceiling_us("allreduce", 8e6, 4, 2, 300.0, 100.0)
    40.0
    """
    up = 0.0
    if n > 1:
        share = (n - 1) / n
        phases = 2 if op == "allreduce" else 1
        up = (size if in_network else phases * share * size) / (rank_gbps * 1e3)
    if d <= 1:
        return up
    return max(up, _across_bytes(op, size, n, d) / (nic_gbps * 1e3))
