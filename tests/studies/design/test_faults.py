"""The expected busbw under the fault model against an enumeration of the system's states."""

import itertools
import math
from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from trnsim.studies.design.faults import expected_busbw
from trnsim.studies.faults.rates import unavailability

KEY = ("allreduce", 1 << 30)


def report(classes):
    """A fault report of ``classes``: (rate class, [(weight, busbw after)...]) each."""
    built = []
    for rate, outcomes in classes:
        count = sum(weight for weight, _ in outcomes)
        built.append(
            SimpleNamespace(
                count=count,
                outcomes=[
                    SimpleNamespace(component=SimpleNamespace(rate=rate), weight=w, busbw_gbps={KEY: b})
                    for w, b in outcomes
                ],
            )
        )
    return SimpleNamespace(healthy={KEY: 100.0}, classes=built)


CLASS = st.tuples(
    st.sampled_from(["chip", "switch", "copper link"]),
    st.lists(st.tuples(st.integers(1, 2), st.floats(0, 100)), min_size=1, max_size=2),
)


@given(st.lists(CLASS, min_size=1, max_size=3), st.floats(0.5, 5000))
def test_the_expectation_over_single_failures_matches_an_enumeration(classes, mttr):
    rates = {"chip": 1000.0, "switch": 5000.0, "copper link": 20000.0}
    parts = []  # one entry per physical part: (u, busbw when it alone is down)
    for rate, outcomes in classes:
        for weight, busbw in outcomes:
            parts += [(unavailability(rates[rate], mttr), busbw)] * weight
    # every up/down state of every part, kept when at most one part is down
    mass = value = everything = 0.0
    for state in itertools.product((0, 1), repeat=len(parts)):
        p = math.prod(u if down else 1 - u for (u, _), down in zip(parts, state, strict=True))
        everything += p
        if sum(state) <= 1:
            busbw = 100.0 if not any(state) else parts[state.index(1)][1]
            mass, value = mass + p, value + p * busbw
    expected, multiple = expected_busbw(report(classes), KEY, rates, mttr)
    assert math.isclose(expected, value / mass, rel_tol=1e-9, abs_tol=1e-9)
    assert math.isclose(multiple, everything - mass, rel_tol=1e-6, abs_tol=1e-12)


def test_parts_that_never_fail_leave_the_healthy_busbw():
    classes = [("chip", [(4, 0.0)])]
    expected, multiple = expected_busbw(report(classes), KEY, {"chip": 1e15}, 1.0)
    assert math.isclose(expected, 100.0) and multiple < 1e-20
