"""Twisted tori: the builder against the definition, and the distances the twist buys."""

import itertools

import networkx as nx
import pytest

from trnsim.errors import ConfigError
from trnsim.routing.hops import hop_stats
from trnsim.topology import load_topology

BASE = """
name: twisted
description: "a twisted torus for tests"
source: "test"
kind: torus
chip: {{name: chip, lanes: 6, lane_gbps: 45, source: "test"}}
torus:
  source: "test"
  axes:
{axes}
latency: {{step_ns: 1000, link_ns: 30, relay_ns: 100, source: "test"}}
"""


def torus_file(tmp_path, axes: list[str]):
    path = tmp_path / "t.yaml"
    path.write_text(BASE.format(axes="\n".join(f"    - {axis}" for axis in axes)))
    return load_topology(None, path)


def by_definition(sizes: list[int], twists: dict[int, dict[int, int]]) -> nx.Graph:
    """Every chip joined to +1 along each axis; a wrap on a twisted axis also shifts the others."""
    graph = nx.Graph()
    for coord in itertools.product(*(range(s) for s in sizes)):
        for i, size in enumerate(sizes):
            other = list(coord)
            other[i] = (coord[i] + 1) % size
            if coord[i] == size - 1:
                for j, offset in twists.get(i, {}).items():
                    other[j] = (other[j] + offset) % sizes[j]
            graph.add_edge(coord, tuple(other))
    return graph


def histogram(graph: nx.Graph) -> dict[int, int]:
    counts: dict[int, int] = {}
    for source, lengths in nx.all_pairs_shortest_path_length(graph):
        for target, d in lengths.items():
            if source < target:
                counts[d] = counts.get(d, 0) + 1
    return counts


@pytest.mark.parametrize(
    ("axes", "sizes", "twists"),
    [
        # 2-D: the a x 2a twisted torus of Camarero et al.: the short ring's wrap moves the long axis by a
        (
            ["{name: y, size: 4, lanes: 1, twist: {x: 4}}", "{name: x, size: 8, lanes: 1}"],
            [4, 8],
            {0: {1: 4}},
        ),
        # TPU v4 slices: 4x4x8 (both short wraps move z by 4) and 4x8x8 (the short wrap moves y and z by 4)
        (
            [
                "{name: x, size: 4, lanes: 1, twist: {z: 4}}",
                "{name: y, size: 4, lanes: 1, twist: {z: 4}}",
                "{name: z, size: 8, lanes: 1}",
            ],
            [4, 4, 8],
            {0: {2: 4}, 1: {2: 4}},
        ),
        (
            [
                "{name: x, size: 4, lanes: 1, twist: {y: 4, z: 4}}",
                "{name: y, size: 8, lanes: 1}",
                "{name: z, size: 8, lanes: 1}",
            ],
            [4, 8, 8],
            {0: {1: 4, 2: 4}},
        ),
    ],
)
def test_the_builder_wires_the_definition(tmp_path, axes, sizes, twists):
    topology = torus_file(tmp_path, axes)
    stats = hop_stats(topology)
    expected = histogram(by_definition(sizes, twists))
    assert stats.histogram_links == expected


def test_the_twist_shortens_the_a_by_2a_torus():
    # Camarero et al.: the a x 2a twisted torus has diameter a, against a/2 + a for the plain one
    twisted = histogram(by_definition([4, 8], {0: {1: 4}}))
    plain = histogram(by_definition([4, 8], {}))
    assert max(twisted) == 4 and max(plain) == 6
    assert sum(d * n for d, n in twisted.items()) < sum(d * n for d, n in plain.items())


def test_twists_are_checked(tmp_path):
    with pytest.raises(ConfigError, match="twist"):
        torus_file(tmp_path, ["{name: x, size: 4, lanes: 1, twist: {x: 2}}", "{name: y, size: 4, lanes: 1}"])
    with pytest.raises(ConfigError, match="must wrap"):
        torus_file(
            tmp_path,
            ["{name: x, size: 4, lanes: 1, wrap: false, twist: {y: 2}}", "{name: y, size: 4, lanes: 1}"],
        )
