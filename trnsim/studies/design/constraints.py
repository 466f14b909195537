"""Constraints on design points: ``KEY OP NUMBER`` over a row's numbers, all of which must hold.

A constraint names a numeric column of the design table (``capex_usd``, ``power_w``,
``busbw_gbps``...), a comparison (``<=``, ``<``, ``>=``, ``>``, ``==``, ``!=``) and a number:
``capex_usd <= 4e6``. No expression language is evaluated: the text is split, never run. A point
that breaks one is kept in the table, marked with the constraints it breaks, and left out of the
front.
"""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass

from trnsim.errors import ParameterError

_COMPARE = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
    "==": operator.eq,
    "!=": operator.ne,
}
_FORM = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|==|!=|<|>)\s*(\S+)\s*")


@dataclass(frozen=True)
class Constraint:
    """``key op bound``, as written in ``text``."""

    key: str
    op: str
    bound: float
    text: str

    def holds(self, row: dict) -> bool:
        """Whether the row keeps the constraint (a row without the number does not)."""
        value = row.get(self.key)
        return value is not None and bool(_COMPARE[self.op](value, self.bound))


def parse_constraint(text: str, keys: list[str], parameter: str = "constraint") -> Constraint:
    """A constraint from ``KEY OP NUMBER``, ``KEY`` one of ``keys``.

    Raises
    ------
    ParameterError
        Another form, an unknown key or a number that is not finite (named as ``parameter``).
    """
    match = _FORM.fullmatch(text)
    if match is None:
        raise ParameterError(
            "expected KEY OP NUMBER, e.g. 'capex_usd <= 4e6' (OP one of <= < >= > == !=)",
            parameter,
            repr(text),
        )
    key, op, raw = match.groups()
    if key not in keys:
        raise ParameterError(
            f"no column {key!r} in the design table; numeric columns: {', '.join(keys)}",
            parameter,
            repr(text),
        )
    try:
        bound = float(raw)
    except ValueError:
        bound = math.nan
    if not math.isfinite(bound):
        raise ParameterError(f"{raw!r} is not a finite number", parameter, repr(text))
    return Constraint(key, op, bound, f"{key} {op} {raw}")


def broken(row: dict, constraints: list[Constraint]) -> list[str]:
    """The constraints ``row`` breaks, as written."""
    return [c.text for c in constraints if not c.holds(row)]
