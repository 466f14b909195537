"""Constraints: KEY OP NUMBER read, never evaluated; each comparison as Python's operator."""

import operator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trnsim.errors import UsageError
from trnsim.studies.design.constraints import broken, parse_constraint

KEYS = ["capex_usd", "power_w", "busbw_gbps"]
OPS = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
    "==": operator.eq,
    "!=": operator.ne,
}


@given(st.sampled_from(KEYS), st.sampled_from(sorted(OPS)), st.integers(-5, 5), st.integers(-5, 5))
def test_a_constraint_compares_as_its_operator(key, op, bound, value):
    constraint = parse_constraint(f"{key}{op} {bound}", KEYS)
    assert constraint.holds({key: value}) == OPS[op](value, bound)
    assert broken({key: value}, [constraint]) == ([] if OPS[op](value, bound) else [f"{key} {op} {bound}"])


def test_a_row_without_the_number_breaks_it():
    assert not parse_constraint("power_w < 1", KEYS).holds({"power_w": None})


@pytest.mark.parametrize(
    ("text", "why"),
    [("capex_usd", "expected KEY OP NUMBER"), ("__import__('os') < 1", "expected KEY OP NUMBER"),
     ("watts < 3", "no column 'watts'"), ("power_w < nan", "not a finite number"),
     ("power_w < inf", "not a finite number"), ("power_w < 3x", "not a finite number")],
)  # fmt: skip
def test_bad_constraints_are_refused(text, why):
    with pytest.raises(UsageError) as caught:
        parse_constraint(text, KEYS)
    assert caught.value.template.startswith("{constraint}") and why in str(caught.value)
