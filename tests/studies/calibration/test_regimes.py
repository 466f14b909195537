"""Which measured sizes a fit uses (trnsim.studies.calibration.regimes)."""

import numpy as np
import pytest

from trnsim.errors import UsageError
from trnsim.studies.calibration.regimes import in_range, notes, parse_fit_sizes


@pytest.mark.parametrize(
    ("text", "expected"),
    [("64M:", (64 << 20, None)), (":1G", (None, 1 << 30)), ("1K:2K", (1024, 2048)), (None, (None, None))],
)
def test_fit_sizes_parse(text, expected):
    assert parse_fit_sizes(text) == expected


@pytest.mark.parametrize(("text", "words"), [("64M", "MIN:MAX"), ("2G:1G", "above"), ("x:", "not a size")])
def test_fit_sizes_refuse_bad_ranges(text, words):
    with pytest.raises(UsageError, match=words):
        parse_fit_sizes(text)


def test_a_range_keeps_the_sizes_inside_it_bounds_included():
    sizes = [1 << k for k in range(10, 31, 2)]
    low, high = 1 << 16, 1 << 24
    inside = in_range(sizes, (low, high), "run.txt")
    assert [s for s, keep in zip(sizes, inside, strict=True) if keep] == [
        s for s in sizes if low <= s <= high
    ]
    assert in_range(sizes, (None, None), "run.txt").all()
    with pytest.raises(UsageError, match="no row of run.txt"):
        in_range(sizes, (1 << 40, None), "run.txt")


def test_notes_say_what_was_left_out_and_when_rows_are_too_few():
    assert notes("linear", np.array([True] * 5), 2, (None, None)) == []
    partly = notes("soft_l1", np.array([False, True, True]), 2, (1 << 20, None))
    assert partly[0].startswith("robust fit (soft_l1)")
    assert "2 of 3 rows" in partly[1] and "1MiB:" in partly[1]
    assert "underdetermined" in partly[2]
