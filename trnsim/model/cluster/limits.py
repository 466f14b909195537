"""What bounds a cluster collective: the bytes that must cross between domains, and every rank's
own links; and the composition's own ceiling (its busiest resource, no latency).

``op`` is the op a composition runs (:data:`trnsim.model.cluster.compose.PHASES`): an even
``allgatherv``, ``reducescatterv`` or ``alltoallv`` is its base op, a ``permute`` of each rank to
the next a ``sendrecv``. Sizes are nccl-tests' (:mod:`trnsim.collectives.ops`).
"""

# every rank of a rooted op's root domain (or, with one domain, every rank but the root) moves the
# whole buffer: each one receives (broadcast) or sends (reduce) all of it; a send/recv's every sender
WHOLE = ("broadcast", "reduce", "sendrecv")
ROOTED = ("gather", "scatter")


def efa_bound_us(op: str, size: int, n: int, d: int, nic_gbps: float) -> float:
    """The least time the domains' NICs need for the bytes that must cross between domains.

    All-reduce: every domain's result depends on every other's input, and its input reaches every
    other's result: at least ``2(D-1)/D S`` through its ``n`` NICs (Patarasuk and Yuan's argument
    with domains as members). All-gather, reduce-scatter: ``(D-1)/D S``. All-to-all: each rank sends
    ``(D-1)/D S`` across. Broadcast (reduce): the whole buffer enters (leaves) every domain but the
    root's, ``S`` through its ``n`` NICs; send/recv: each domain's first rank receives a whole buffer
    from the domain before, ``S`` into the domain (its ranks may relay it to every NIC). Gather
    (scatter): the root's domain receives (sends) ``(D-1)/D S`` through its ``n`` NICs.

    Examples
    --------
    An all-reduce of 8 MB over 2 domains of 4 ranks: each NIC carries ``2 (1/2) 8 MB / 4`` = 2 MB,
    20 us at 100 GB/s. A broadcast of 8 MB: each NIC of a domain other than the root's 2 MB.

    >>> efa_bound_us("allreduce", 8e6, 4, 2, 100.0), efa_bound_us("broadcast", 8e6, 4, 2, 100.0)
    (20.0, 20.0)
    """
    return _across_bytes(op, size, n, d) / (nic_gbps * 1e3)


def _across_bytes(op: str, size: int, n: int, d: int) -> float:
    """Bytes each NIC of the busiest domain carries across domains (0 with one domain): ``2(D-1)/D
    S/n`` for all-reduce, ``(D-1)/D S`` for all-to-all, ``S/n`` for broadcast, reduce and send/recv,
    ``(D-1)/D S/n`` for the others."""
    if d <= 1:
        return 0.0
    share = (d - 1) / d
    if op == "allreduce":
        return 2 * share * size / n
    if op == "alltoall":
        return share * size
    if op in WHOLE:
        return size / n
    return share * size / n


def injected_bytes(op: str, size: int, ranks: int, in_network: bool = False) -> float:
    """What the busiest rank of ``ranks`` sends or receives whatever the algorithm: ``2(N-1)/N S``
    (all-reduce; ``S`` when the switches reduce, ``in_network``: its input out, the result in),
    ``S`` (broadcast, reduce: every rank but the root receives or sends all of it; send/recv: every
    sender's buffer), ``(N-1)/N S`` (the others; gather and scatter: the root's).

    >>> injected_bytes("allreduce", 8e6, 8), injected_bytes("broadcast", 8e6, 8)
    (14000000.0, 8000000.0)
    """
    share = (ranks - 1) / ranks
    if op == "allreduce":
        return size if in_network else 2 * share * size
    if op in WHOLE:
        return float(size)
    return share * size


def injection_us(op: str, size: int, ranks: int, rank_gbps: float, in_network: bool = False) -> float:
    """The busiest rank's :func:`injected_bytes` through its own links, scale-up and NIC together
    (``rank_gbps``: the rate of the rank that moves them, :func:`busiest_rank_gbps`).

    Examples
    --------
    >>> injection_us("allgather", 8e6, 8, 100.0)  # 7/8 of 8 MB at 100 GB/s
    70.0
    """
    return injected_bytes(op, size, ranks, in_network) / (rank_gbps * 1e3)


def busiest_rank_gbps(op: str, per_rank: list[float], d: int) -> float:
    """The scale-up rate of the rank whose links bind :func:`injection_us` and :func:`ceiling_us`,
    from every rank's of a domain (``per_rank[0]`` is the root's): the root's for gather and
    scatter, and for broadcast and reduce across domains (its links carry its domain's scatter or
    gather as well as its share of the other phase; and it sends, or receives, the whole buffer
    whatever the algorithm); the slowest rank's otherwise (every rank moves as much).

    >>> busiest_rank_gbps("gather", [50.0, 100.0], 1), busiest_rank_gbps("allgather", [100.0, 50.0], 2)
    (50.0, 50.0)
    """
    if op in ROOTED or (op in ("broadcast", "reduce") and d > 1):
        return per_rank[0]
    return min(per_rank)


def ceiling_us(
    op: str,
    size: int,
    n: int,
    d: int,
    rank_gbps: float,
    nic_gbps: float,
    in_network: bool = False,
) -> float:
    """The composition's own limit: its in-domain phases on a rank's scale-up links and its
    cross-domain phase on the NICs, overlapped (the slower of the two; no latency). ``in_network``:
    the in-domain all-reduce reduces in the switches, ``S`` each way through a rank's links.

    Inside, the busiest rank moves: one domain, the op itself (:func:`injected_bytes`); more, each
    in-domain phase ``(n-1)/n S`` (a reduce-scatter and an all-gather for all-reduce; a scatter
    and an all-gather for broadcast; a reduce-scatter and a gather for reduce; one phase for the
    others), and a send/recv's every in-domain sender ``S``. Across, each NIC what the cut needs
    (:func:`efa_bound_us`), but a send/recv's crossing is one rank's NIC carrying ``S``.

    Examples
    --------
    An all-reduce of 8 MB, 2 domains of 4 ranks: inside, ``2 (3/4) 8 MB`` over 300 GB/s (40 us);
    across, 2 MB per NIC over 100 GB/s (20 us). The slower binds.

    >>> ceiling_us("allreduce", 8e6, 4, 2, 300.0, 100.0)
    40.0
    """
    up = 0.0
    if n > 1:
        if d <= 1:
            moved = injected_bytes(op, size, n, in_network)
        elif op == "sendrecv":
            moved = size
        else:
            phases = 2 if op in ("allreduce", "broadcast", "reduce") else 1
            moved = phases * (n - 1) / n * size
        up = moved / (rank_gbps * 1e3)
    if d <= 1:
        return up
    across = size if op == "sendrecv" else _across_bytes(op, size, n, d)
    return max(up, across / (nic_gbps * 1e3))
