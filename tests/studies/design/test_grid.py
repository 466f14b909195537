"""The grid: axes parsed as --set values are, points numbered in mixed radix, searches drawn."""

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trnsim.errors import UsageError
from trnsim.studies.design.grid import (
    Axis,
    Grid,
    Search,
    choose,
    make_grid,
    parse_axis,
    parse_search,
    split_values,
)


def test_values_split_at_top_level_commas_only():
    assert split_values("4,8, 16") == ["4", "8", "16"]
    assert split_values("[A, B],[C],'x,y',{a: 1, b: 2}") == ["[A, B]", "[C]", "'x,y'", "{a: 1, b: 2}"]
    axis = parse_axis("torus.axes=[A, B],[C]")
    assert axis == Axis("torus.axes", ("[A, B]", "[C]")) and axis.edit(1) == "torus.axes=[C]"


@pytest.mark.parametrize(
    ("text", "why"),
    [("lanes", "expected KEY=V1,V2"), ("=4,8", "expected KEY=V1,V2"), ("a.b=4,,8", "empty"),
     ("a.b=4,8,", "empty"), ("a.b=4,8,4", "given twice"), ("a.b=0.8,0.80", "'0.80' is the same as '0.8'"),
     ("a.b=1e3, 1000.0", "the same as '1e3'"), ("a.b=x,'x'", "the same as 'x'"),
     ("a.b={p: 1, q: [2]},{q: [2], p: 1}", "the same as '{p: 1, q: [2]}'")],
)  # fmt: skip
def test_bad_axes_are_refused_naming_the_option(text, why):
    """A value written twice, or two that mean the same edit (which would build and run the same
    system twice), is refused."""
    with pytest.raises(UsageError) as caught:
        parse_axis(text)
    assert caught.value.template.startswith("{vary}") and why in str(caught.value)


def test_values_that_differ_as_edits_are_kept():
    """A number is not a bool, nor the string that quotes it; a list is not its first item; an int
    is not a float (the schema may take one and refuse the other), however large."""
    assert parse_axis("a.b=1,true").values == ("1", "true")
    assert parse_axis("a.b=8,8.0").values == ("8", "8.0")
    assert parse_axis("a.b=9007199254740993,9007199254740992").values == (
        "9007199254740993",
        "9007199254740992",
    )
    assert parse_axis("a.b=8,'8'").values == ("8", "'8'")
    assert parse_axis("a.b=[A],A,null").values == ("[A]", "A", "null")


def test_a_long_list_is_not_echoed_whole():
    values = ",".join(str(n) for n in range(5000)) + ",7"
    with pytest.raises(UsageError) as caught:
        parse_axis(f"a.b={values}")
    assert "'7' is given twice" in str(caught.value) and len(str(caught.value)) < 300


SIZES = st.lists(st.integers(1, 4), max_size=4)


@given(st.integers(1, 3), SIZES)
def test_points_are_the_cross_product_in_order(systems, sizes):
    axes = tuple(Axis(f"k{n}", tuple(str(v) for v in range(size))) for n, size in enumerate(sizes))
    grid = Grid(tuple(f"s{n}" for n in range(systems)), axes)
    assert grid.size == systems * math.prod(sizes)
    expected = list(itertools.product(range(systems), *(range(size) for size in sizes)))
    assert [(s, *picks) for s, picks in map(grid.choice, range(grid.size))] == expected
    for index, (_, *picks) in enumerate(expected):
        assert grid.edits(index) == tuple(f"k{n}={pick}" for n, pick in enumerate(picks))
    with pytest.raises(IndexError):
        grid.choice(grid.size)


def test_a_key_varied_twice_or_also_set_is_refused():
    a = parse_axis("a.b=1,2")
    with pytest.raises(UsageError, match="varied twice"):
        make_grid(["nl16"], [a, parse_axis("a.b=3")])
    with pytest.raises(UsageError, match="vary it or set it"):
        make_grid(["nl16"], [a], ["a.b=7"])


def test_an_oversized_grid_is_refused_before_work_naming_count_and_limit(monkeypatch):
    monkeypatch.setenv("TRNSIM_MAX_DESIGN_POINTS", "10")
    grid = Grid(("a", "b"), (Axis("k", tuple(map(str, range(6)))),))
    with pytest.raises(UsageError) as caught:
        choose(grid, Search())
    text = str(caught.value)
    assert "12 design points" in text and "limit of 10" in text and "TRNSIM_MAX_DESIGN_POINTS" in text
    assert "search random:N" in text
    assert len(choose(grid, parse_search("random:10", 3))) == 10
    with pytest.raises(UsageError, match="11 design points"):
        choose(grid, parse_search("random:11"))


def test_a_huge_grid_is_sampled_without_being_listed():
    grid = Grid(("a",), tuple(Axis(f"k{n}", tuple(map(str, range(10)))) for n in range(30)))  # 1e30 points
    drawn = choose(grid, parse_search("random:50", 1))
    assert len(set(drawn)) == 50 and drawn == sorted(drawn) and all(0 <= i < grid.size for i in drawn)
    assert drawn == choose(grid, parse_search("random:50", 1))  # the seed fixes the draw
    assert drawn != choose(grid, parse_search("random:50", 2))


def test_random_search_draws_uniformly():
    """Each point's share of draws over many seeds is near N / size (a simple random sample)."""
    grid = Grid(("a",), (Axis("k", tuple(map(str, range(10)))),))
    counts = [0] * 10
    for seed in range(2000):
        for i in choose(grid, parse_search("random:3", seed)):
            counts[i] += 1
    expected = 2000 * 3 / 10  # 600; sd of a count about sqrt(600 * 0.7) ~ 20
    assert all(abs(c - expected) < 100 for c in counts), counts
    assert choose(grid, parse_search("random:50")) == list(range(10))  # N >= size: every point


@pytest.mark.parametrize("text", ["random", "random:0", "random:x", "anneal:5"])
def test_bad_searches_are_refused(text):
    with pytest.raises(UsageError) as caught:
        parse_search(text)
    assert caught.value.template.startswith("{search}")
