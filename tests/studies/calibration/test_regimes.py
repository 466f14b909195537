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


SIZES = [1 << k for k in range(10, 31)]


def _ranges(found, sizes=SIZES):
    return [(sizes[start], sizes[end - 1]) for start, end in found]


def test_one_alpha_beta_line_is_one_regime():
    from trnsim.studies.calibration.regimes import detect_regimes

    times = [10 + size / 300e3 for size in SIZES]  # 10 us and 300 GB/s of algbw
    assert detect_regimes(SIZES, times, 4) == [(0, len(SIZES))]


@pytest.mark.parametrize("switch", [1 << 14, 1 << 20, 1 << 26])
def test_a_protocol_switch_splits_the_curve_where_it_happens(switch):
    """Below ``switch`` a low-latency protocol (5 us, 30 GB/s), from it a bandwidth one (25 us,
    400 GB/s): the regimes end and start exactly at the switch."""
    from trnsim.studies.calibration.regimes import detect_regimes

    times = [5 + size / 30e3 if size < switch else 25 + size / 400e3 for size in SIZES]
    assert _ranges(detect_regimes(SIZES, times, 4)) == [(SIZES[0], switch // 2), (switch, SIZES[-1])]


def test_three_protocols_give_three_regimes_and_no_regime_is_shorter_than_asked():
    from trnsim.studies.calibration.regimes import MAX_REGIMES, detect_regimes

    def time(size):
        return (
            4 + size / 20e3 if size < 1 << 16 else 12 + size / 100e3 if size < 1 << 24 else 60 + size / 450e3
        )

    found = detect_regimes(SIZES, [time(size) for size in SIZES], 4)
    assert _ranges(found) == [(1 << 10, 1 << 15), (1 << 16, 1 << 23), (1 << 24, 1 << 30)]
    assert len(found) <= MAX_REGIMES
    # with 8 rows per regime at least, the first switch (6 rows below it) cannot be a regime of its own
    assert all(end - start >= 8 for start, end in detect_regimes(SIZES, [time(s) for s in SIZES], 8))
    # too few rows for two regimes, or sizes out of order: one
    assert detect_regimes(SIZES[:7], [time(s) for s in SIZES[:7]], 4) == [(0, 7)]
    assert detect_regimes(SIZES[::-1], [time(s) for s in SIZES[::-1]], 4) == [(0, len(SIZES))]
