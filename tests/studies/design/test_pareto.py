"""The Pareto front against an independent construction: in two objectives the skyline of a sort,
in three the definition checked pair by pair; invariances under reordering and scaling."""

from hypothesis import given
from hypothesis import strategies as st

from trnsim.studies.design.pareto import MAXIMISE, MINIMISE, dominates, pareto_front

# a few distinct values, so that ties (equal coordinates, equal points) are common
VALUE = st.integers(0, 6).map(float)
POINTS2 = st.lists(st.tuples(VALUE, VALUE), max_size=30)
POINTS3 = st.lists(st.tuples(VALUE, VALUE, VALUE), max_size=25)


def skyline(points: list[tuple[float, float]]) -> set[tuple[float, float]]:
    """The front of (performance maximised, cost minimised) by a sweep: sort by cost ascending, then
    performance descending; a point is on the front when its performance beats every cheaper point's,
    or equals the best so far at the same cost as that best (a copy of a front point)."""
    front, best, best_cost = set(), None, None
    for perf, cost in sorted(points, key=lambda p: (p[1], -p[0])):
        if best is None or perf > best:
            front.add((perf, cost))
            best, best_cost = perf, cost
        elif perf == best and cost == best_cost:
            front.add((perf, cost))
    return front


@given(POINTS2)
def test_two_objectives_match_the_skyline_of_a_sort(points):
    flags = pareto_front(points, (MAXIMISE, MINIMISE))
    assert {p for p, on in zip(points, flags, strict=True) if on} == skyline(points)
    # every copy of a front point is on it
    assert all(on == (p in skyline(points)) for p, on in zip(points, flags, strict=True))


@given(POINTS3)
def test_three_objectives_match_the_definition(points):
    senses = (MAXIMISE, MINIMISE, MINIMISE)
    flags = pareto_front(points, senses)
    for p, on in zip(points, flags, strict=True):
        beaten = [q for q in points if dominates(q, p, senses)]
        assert on == (not beaten)
    on_front = [p for p, on in zip(points, flags, strict=True) if on]
    for p, on in zip(points, flags, strict=True):
        if not on:  # dominance is transitive: a point off the front is beaten by one on it
            assert any(dominates(q, p, senses) for q in on_front)
    assert bool(points) == bool(on_front)  # a finite set always has a front


@given(POINTS3, st.randoms(use_true_random=False))
def test_the_front_does_not_depend_on_order_or_scale(points, rng):
    senses = (MAXIMISE, MINIMISE, MINIMISE)
    flags = pareto_front(points, senses)
    order = list(range(len(points)))
    rng.shuffle(order)
    shuffled = pareto_front([points[i] for i in order], senses)
    assert [flags[i] for i in order] == shuffled
    # a strictly increasing transform of each objective keeps every comparison
    scaled = [(3 * a + 1, 1e6 * b, b * 0 + c**3) for a, b, c in points]
    assert pareto_front(scaled, senses) == flags


def test_dominance_needs_one_strict_improvement():
    senses = (MAXIMISE, MINIMISE)
    assert dominates((2, 1), (1, 1), senses)
    assert not dominates((1, 1), (1, 1), senses)  # equal points: neither
    assert not dominates((2, 2), (1, 1), senses)  # better and worse: neither
    assert pareto_front([], senses) == []
