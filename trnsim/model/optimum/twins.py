"""Graph reduction for the exact bounds: non-member twins merged into one device.

The switches of a tray, or of a plane, link to the same neighbours with the same classes and
proportional capacities; merging them changes no cut and no flow value and makes nl72x2's graph 188
devices instead of 512.
"""

from dataclasses import dataclass

import numpy as np

from trnsim.model.optimum.graph import Network
from trnsim.routing.mix import splitmix64


def merge_twins(net: Network) -> tuple[Network, np.ndarray]:
    """Merge non-member twins: devices of one kind and role whose links go to the same neighbours
    with the same classes and proportional capacities (the 8 switches of a tray, the switches of a
    plane). Returns the smaller network and the merged node of every original node.

    Nothing is lost. A cut can always put twins on the same side (each device's side only changes
    the cut by its own links, and twins prefer the same side), so min-ratio and member cuts are
    the same; a flow through the merged device splits back in proportion to the capacities, and
    lengths copied to both twins' links keep every distance, so the all-to-all optimum and every
    dual point are the same too. Repeats until no twins are left.

    Examples
    --------
    Two chips joined through two parallel switches: the switches are twins and become one, with
    the capacity of both.

    >>> import numpy as np
    >>> from trnsim.model.optimum import Network
    >>> src, dst = np.array([0, 2, 0, 3, 1, 2, 1, 3]), np.array([2, 0, 3, 0, 2, 1, 3, 1])
    >>> net = Network(4, src, dst, np.full(8, 50.0), np.array([0, 1]), np.array([0, 0, 1, 1]),
    ...               np.array(["up"] * 8, dtype=object))
    >>> merged, mapping = merge_twins(net)
    >>> merged.n, mapping.tolist(), merged.cap.tolist()
    (3, [0, 1, 2, 2], [100.0, 100.0, 100.0, 100.0])
    """
    mapping = np.arange(net.n)
    while True:
        merged, step = _merge_once(net)
        if merged is net:
            return net, mapping
        net, mapping = merged, step[mapping]


@dataclass(frozen=True)
class _Records:
    """Each device's view of its links, one record per (device, link end): the device, the direction
    (0 out, 1 in), the neighbour, the link class and the capacity as a share of the device's total."""

    owner: np.ndarray
    direction: np.ndarray
    other: np.ndarray
    kind: np.ndarray
    share: np.ndarray


def _records(net: Network) -> _Records:
    out_total = np.bincount(net.src, weights=net.cap, minlength=net.n)
    _, cls_id = np.unique(net.edge_cls.astype(str), return_inverse=True)
    cls_id = cls_id.ravel()
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.round(
            np.concatenate([net.cap, net.cap]) / out_total[np.concatenate([net.src, net.dst])], 12
        )
    return _Records(
        owner=np.concatenate([net.src, net.dst]),
        direction=np.repeat([0, 1], len(net.src)),
        other=np.concatenate([net.dst, net.src]),
        kind=np.concatenate([cls_id, cls_id]),
        share=np.nan_to_num(share),
    )


def _hashed_groups(net: Network, records: _Records) -> tuple[np.ndarray, np.ndarray] | None:
    """Non-member candidates and, for each, the first candidate with the same hash of its records
    (the twin it may merge into); None when no two candidates share a hash."""
    r = records
    member = np.zeros(net.n, dtype=bool)
    member[net.members] = True
    quantised = np.round(r.share * 1e12).astype(np.int64).astype(np.uint64)
    record = splitmix64(
        splitmix64(
            splitmix64(r.other.astype(np.uint64) * np.uint64(2) + r.direction.astype(np.uint64))
            + r.kind.astype(np.uint64)
        )
        + quantised
    )
    digest = np.zeros(net.n, dtype=np.uint64)
    np.add.at(digest, r.owner, record)
    degree = np.bincount(r.owner, minlength=net.n)
    candidates = np.flatnonzero(~member & (degree > 0))
    if len(candidates) < 2:
        return None
    keys = np.stack(
        [
            net.node_key[candidates].astype(np.uint64),
            digest[candidates],
            degree[candidates].astype(np.uint64),
        ],
        axis=1,
    )
    _, group_of, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    group_of = group_of.ravel()
    if counts.max() < 2:
        return None
    rep_of_group = np.full(len(counts), -1)
    rep_of_group[group_of[::-1]] = candidates[::-1]  # the first candidate of each group
    return candidates, rep_of_group[group_of]


def _verified(net: Network, records: _Records, candidates: np.ndarray, rep: np.ndarray) -> np.ndarray:
    """Exactly: whether each candidate's sorted link records equal its representative's (a hash
    collision must not merge devices that differ)."""
    r = records
    degree = np.bincount(r.owner, minlength=net.n)
    order = np.lexsort((r.share, r.kind, r.other, r.direction, r.owner))
    start = np.searchsorted(r.owner[order], np.arange(net.n + 1))
    fields = [r.direction[order], r.other[order], r.kind[order], r.share[order]]
    twin = np.zeros(len(candidates), dtype=bool)
    for d in np.unique(degree[candidates]):
        pick = np.flatnonzero(degree[candidates] == d)
        offsets = np.arange(d)
        mine = start[candidates[pick]][:, None] + offsets
        theirs = start[rep[pick]][:, None] + offsets
        same = np.ones(len(pick), dtype=bool)
        for f in fields:
            same &= np.all(f[mine] == f[theirs], axis=1)
        twin[pick] = same
    return twin


def _contract(net: Network, step: np.ndarray) -> tuple[Network, np.ndarray]:
    """The network with node ``v`` merged into node ``step[v]``: parallel edges add their capacities."""
    keep = np.unique(step)
    renumber = np.full(net.n, -1)
    renumber[keep] = np.arange(len(keep))
    step = renumber[step]
    src, dst = step[net.src], step[net.dst]
    pair = src.astype(np.int64) * len(keep) + dst
    unique_pair, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
    cap = np.bincount(inverse.ravel(), weights=net.cap, minlength=len(unique_pair))
    merged = Network(
        len(keep),
        src[first],
        dst[first],
        cap,
        step[net.members],
        net.node_key[keep],
        net.edge_cls[first],
    )
    return merged, step


def _merge_once(net: Network) -> tuple[Network, np.ndarray]:
    """One round: every group of twins found by hashing, verified exactly, merged into its first."""
    records = _records(net)
    found = _hashed_groups(net, records)
    if found is None:
        return net, np.arange(net.n)
    candidates, rep = found
    twin = _verified(net, records, candidates, rep)
    step = np.arange(net.n)
    merge = twin & (rep != candidates)
    if not merge.any():
        return net, step
    step[candidates[merge]] = rep[merge]
    return _contract(net, step)
