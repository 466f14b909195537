"""Translation symmetry of tori: one source stands for all.

On a torus whose axes all wrap, shifting every coordinate by the same offset maps the graph onto
itself, links, bandwidths and latencies included. So distances, path counts and path latencies
from chip ``s`` to chip ``v`` equal those from chip 0 to ``v - s``, and the traffic every chip sends
in a translation-invariant pattern puts on a directed link the sum of what chip 0's traffic puts on
the links of that link's orbit (same axis, same direction).
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from trnsim.topology.graph import Topology


@dataclass(frozen=True)
class TorusSymmetry:
    """Coordinates of a wrapped torus's chips (node index = rank) and index arithmetic on them."""

    sizes: tuple[int, ...]

    @property
    def n(self) -> int:
        return int(np.prod(self.sizes))

    @cached_property
    def coords(self) -> np.ndarray:
        """Chip coordinates, one row per rank (row-major, last axis fastest)."""
        return np.stack(np.unravel_index(np.arange(self.n), self.sizes), axis=1).astype(np.int32)

    @cached_property
    def strides(self) -> list[int]:
        return [int(np.prod(self.sizes[i + 1 :])) for i in range(len(self.sizes))]

    def offset(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """The rank of ``dst - src`` (coordinate-wise, modulo the sizes), for pairs of ranks."""
        total = np.zeros(np.broadcast(src, dst).shape, dtype=np.int64)
        for axis, (size, stride) in enumerate(zip(self.sizes, self.strides, strict=True)):
            digits = self.coords[:, axis]
            total += (digits[dst] - digits[src]) % size * stride
        return total

    def shifted(self, base: np.ndarray, src: np.ndarray) -> np.ndarray:
        """Rows ``M[s, v] = base[v - s]`` for each ``s`` in ``src``: chip 0's row seen from ``s``."""
        index = np.zeros((len(src), self.n), dtype=np.int64)
        for axis, (size, stride) in enumerate(zip(self.sizes, self.strides, strict=True)):
            digits = self.coords[:, axis]
            index += np.subtract.outer(digits[src], digits) * -1 % size * stride
        return base[index]

    def edge_orbits(self, tails: np.ndarray, heads: np.ndarray) -> np.ndarray:
        """An orbit id per directed edge: which axis it runs along and in which direction."""
        sizes = np.asarray(self.sizes)
        delta = (self.coords[heads] - self.coords[tails]) % sizes
        axis = np.argmax(delta != 0, axis=1)
        step = delta[np.arange(len(tails)), axis]
        forward = step == 1  # a size-2 axis has one orbit: both wraps count as forward
        return axis * 2 + np.where(forward, 0, 1)


def torus_symmetry(topology: Topology) -> TorusSymmetry | None:
    """The symmetry of a torus whose every axis wraps, or ``None`` (switched fabrics, meshes, and a
    torus with failed components)."""
    spec = topology.spec
    if (
        spec.kind != "torus"
        or topology.faults
        or spec.chip.ranks > 1
        or not all(axis.wrap or axis.size <= 2 for axis in spec.torus.axes)
        or any(axis.twist for axis in spec.torus.axes)  # a twisted torus is no product of rings
    ):
        return None
    return TorusSymmetry(tuple(axis.size for axis in spec.torus.axes))
