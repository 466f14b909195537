"""Automorphisms that rename name tokens: every one built is checked edge by edge, independently of
the module's integer codes."""

import random

import numpy as np
import pytest
from conftest import topology

from trnsim.routing.relabel import POSITIONAL, relabels
from trnsim.topology.arrays import graph_arrays

SWITCHED = ["hgx-h100", "trn3-ultraserver-gen1", "trn3-nl32x2-gen1", "trn3-nl72x2-gen1"]


def _structure(topo) -> tuple[dict, set]:
    """Each device's attributes but where it sits, and every directed link with its attributes."""
    nodes = {
        name: (
            repr(sorted((k, repr(v)) for k, v in data.items() if k not in POSITIONAL)),
            name in topo.rank_of,
        )
        for name, data in topo.nodes.items()
    }
    links = set()
    for (u, v), data in topo.links.items():
        key = repr(sorted((k, repr(v)) for k, v in data.items()))
        links |= {(u, v, key), (v, u, key)}
    return nodes, links


def _is_automorphism(topo, perm: np.ndarray) -> bool:
    """``perm`` (node indices) keeps every device's attributes and maps the links onto themselves."""
    names = graph_arrays(topo).nodes
    image = {names[i]: names[j] for i, j in enumerate(perm)}
    nodes, links = _structure(topo)
    return (
        sorted(image.values()) == sorted(names)
        and all(nodes[image[name]] == key for name, key in nodes.items())
        and {(image[u], image[v], key) for u, v, key in links} == links
    )


def _table(found, s: int, image) -> np.ndarray:
    table = np.tile(np.arange(int(found.sizes.max())), (len(found.sizes), 1))
    table[s, : len(image)] = image
    return table


@pytest.mark.parametrize("sku", SWITCHED)
def test_the_free_tokens_rename_into_automorphisms_and_the_others_do_not(sku):
    topo = topology(sku)
    found = relabels(topo)
    assert found is not None and found.free.any()
    rng = np.random.default_rng(7)
    for s, size in enumerate(found.sizes):
        generators = [np.roll(np.arange(size), -1), np.r_[1, 0, np.arange(2, size)]] if size > 1 else []
        if found.free[s]:
            for image in [*generators, rng.permutation(size)]:
                assert _is_automorphism(topo, found._renamed(_table(found, s, image)))
        else:
            perms = [found._renamed(_table(found, s, image)) for image in generators]
            assert any(perm is None or not _is_automorphism(topo, perm) for perm in perms)


@pytest.mark.parametrize("sku", SWITCHED)
def test_a_group_renamed_is_carried_onto_by_an_automorphism(sku):
    """A random group, and its image under a random renaming of the racks, the trays and the chips
    within a tray (built from the names, as a user would), share a signature; the automorphism
    carried maps the one onto the other member by member, and its edge map is where its links go."""
    topo = topology(sku)
    found = relabels(topo)
    arrays = graph_arrays(topo)
    rng = random.Random(sku)
    chips = list(topo.chips)
    # the chips' tokens at each position (rack, tray, chip or slot), each position renamed at random
    at = [sorted({name.split(".")[k] for name in chips}) for k in range(3)]
    for trial in range(6):
        group = rng.sample(chips, rng.choice([2, 4, 8]))
        drawn = [dict(zip(tokens, rng.sample(tokens, len(tokens)), strict=True)) for tokens in at]
        other = [".".join(drawn[k][t] for k, t in enumerate(name.split("."))) for name in group]
        source = np.asarray([arrays.index[c] for c in group])
        target = np.asarray([arrays.index[c] for c in other])
        assert found.signature(source) == found.signature(target), (trial, group, other)
        perm = found.carry(source, target)
        assert perm[source].tolist() == target.tolist()
        assert _is_automorphism(topo, perm)
        where = found.edge_map(perm)
        assert sorted(where.tolist()) == list(range(len(arrays.src)))
        assert np.array_equal(perm[arrays.src], arrays.src[where])
        assert np.array_equal(perm[arrays.dst], arrays.dst[where])


def test_groups_whose_tokens_do_not_correspond_have_different_signatures():
    topo = topology("trn3-nl72x2-gen1")
    found = relabels(topo)
    index = graph_arrays(topo).index
    rows = lambda names: np.asarray([index[n] for n in names])  # noqa: E731
    # the same tray twice in the first, two trays in the second: no renaming maps one onto the other
    assert found.signature(rows(["r0.n0.A", "r0.n0.B"])) != found.signature(rows(["r0.n0.A", "r0.n1.B"]))
    assert found.signature(rows(["r0.n0.A", "r0.n1.A"])) == found.signature(rows(["r1.n5.C", "r1.n2.C"]))


def test_a_torus_ring_has_no_free_token_beyond_three():
    found = relabels(topology("trn2-nl16"))  # a 4x4 torus: a ring of 4 is no complete graph
    assert found is None or not found.free[found.sizes > 3].any()
