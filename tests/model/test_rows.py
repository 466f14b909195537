"""The rows every evaluator returns: one base, each evaluator's JSON columns its own contract."""

import dataclasses

import pytest

from trnsim.model.cluster import ClusterRow
from trnsim.model.concurrent import ConcurrentRow
from trnsim.model.engine import GroupRow
from trnsim.model.rows import Row, size_note


@pytest.mark.parametrize(
    ("cls", "fields"),
    [
        (GroupRow, ()),
        (ConcurrentRow, ("type", "algbw_gbps", "group_times_us", "group_busbw_gbps")),
        (ClusterRow, ("type", "algorithm", "bottleneck")),
    ],
)
def test_each_row_prints_its_own_columns_and_leaves_out_only_what_it_says(cls, fields):
    """The JSON columns are a contract: each is a field, once; the fields left out are the ones the
    output never carried (the per-group lists have a table of their own)."""
    names = [f.name for f in dataclasses.fields(cls)]
    assert len(set(cls.COLUMNS)) == len(cls.COLUMNS) and set(cls.COLUMNS) <= set(names)
    assert sorted(set(names) - set(cls.COLUMNS)) == sorted(fields)


def test_every_evaluators_row_is_a_row():
    assert all(issubclass(cls, Row) for cls in (GroupRow, ConcurrentRow, ClusterRow))


def _row(requested: int, nbytes: int) -> Row:
    return Row(
        bytes=nbytes, count=nbytes // 4, type="float", time_us=1.0, algbw_gbps=1.0, busbw_gbps=1.0,
        algorithm="ring", requested_bytes=requested,
    )  # fmt: skip


def test_the_size_note_names_what_was_rounded_and_what_was_left_out():
    assert size_note([_row(64, 64)], []) is None
    note = size_note([_row(64, 64), _row(100, 96), _row(200, 192)], [1, 2, 3, 4, 5])
    assert note == (
        "sizes: 2 sizes rounded down as nccl-tests does (e.g. 100 -> 96 B); left out 1, 2, 3, 4, ... B "
        "(0 bytes once aligned)"
    )
