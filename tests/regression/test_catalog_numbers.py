"""A change that must move no number moved none (see catalog_numbers.py for what this guards)."""

import json
import math

from regression.catalog_numbers import FIELDS, SNAPSHOT, numbers


def test_every_catalog_number_is_what_it_was():
    before = json.loads(SNAPSHOT.read_text())
    now = numbers()
    assert sorted(now) == sorted(before), "the set of (system, op, algorithm) runs changed"
    moved = [
        f"{key} {FIELDS[i]} at {row_before[0]} B: {old!r} -> {new!r}"
        for key in before
        for row_before, row_now in zip(before[key], now[key], strict=True)
        for i, (old, new) in enumerate(zip(row_before, row_now, strict=True))
        if not math.isclose(old, new, rel_tol=1e-9, abs_tol=1e-12)
    ]
    assert not moved, f"{len(moved)} numbers moved, e.g. " + "; ".join(moved[:5])
