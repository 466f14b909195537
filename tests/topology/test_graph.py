"""The built system's names: ranks, chips and the suggestions for a name that is neither."""

import difflib

import pytest
from conftest import topology

from trnsim.errors import UsageError
from trnsim.topology.graph import closest


def _shared(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


@pytest.mark.parametrize("sku", ["trn1-nl16", "nl72x2", "nl64"])
def test_suggestions_put_the_names_sharing_the_longest_prefix_first(sku):
    """A typo in the last character of a rank's name: the first suggestion shares the longest
    prefix with it of every name difflib finds similar (difflib itself breaks ties in reverse
    alphabetical order: 'x0.y3.c0' before 'x0.y0.c0')."""
    topo = topology(sku)
    names = [*topo.chips, *(c for c in topo.ranks_by_chip if c not in topo.rank_of)]
    for name in topo.chips[:: max(1, len(topo.chips) // 12)]:
        typo = name[:-1] + ("9" if name[-1] != "9" else "8")
        similar = [n for n in names if difflib.SequenceMatcher(None, typo, n).ratio() >= 0.6]
        suggested = closest(typo, names)
        assert suggested and _shared(typo, suggested[0]) == max(_shared(typo, n) for n in similar)
        with pytest.raises(UsageError, match=f"did you mean {suggested[0]}"):
            topo.resolve_chip(typo)


def test_a_chip_hosting_several_ranks_stands_for_its_first_or_all_of_them():
    topo = topology("trn1-nl16")
    for chip, ranks in topo.ranks_by_chip.items():
        assert [topo.nodes[r]["chip"] for r in ranks] == [chip] * 2
        assert topo.resolve_chip(chip) == ranks[0] and topo.resolve_ranks(chip) == ranks
    single = topology("nl16")
    assert all(single.resolve_ranks(name) == [name] for name in single.chips)
