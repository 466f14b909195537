"""The exact bounds kept on disk between runs (:mod:`trnsim.cache`), like numba's compiled kernels.

A system's optimum depends only on the built system (:attr:`trnsim.topology.graph.Topology.digest`:
its devices, links, cuts, failures and spec), the group, the op and its shape (root, blocks,
traffic), and trnsim's own code: a catalog system's is computed once and read back by every later
run, and an edit to the file, a what-if or a change to trnsim gives another key. The cache never
changes a bound: what is read back is what was computed.
"""

from collections.abc import Callable
from typing import Any


def kept(topology, what: str, key: tuple, compute: Callable[[], Any]) -> Any:
    """``compute()`` (a bound's plain values), or the value kept on disk for ``topology`` and ``key``."""
    from trnsim import cache

    if not cache.enabled():
        return compute()
    try:
        found = cache.digest(what, topology.digest, key)
    except cache.Unkeyable:  # a name that is no Unicode (a --set of undecodable bytes): not kept
        return compute()
    return cache.cached("optimum", found, compute)
