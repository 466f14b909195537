"""A comparison reads only the Row every backend gives: the same table from a graph engine's
results and from a cluster composition's."""

from dataclasses import replace

import pytest

from trnsim.model.backend import Fabric, Selection
from trnsim.outputs.compare import comparison, shown_sizes
from trnsim.studies.baseline import comparison_rows
from trnsim.studies.variants import Variant, run_variants

SIZES = [1 << 20, 1 << 26]


@pytest.fixture(scope="module")
def results():
    """nl16 alone, and nl16 as one domain of a cluster of four (its fabric from the file)."""
    alone = run_variants([Variant("nl16")], "allgather", SIZES)
    clustered = run_variants([Variant("nl16")], "allgather", SIZES, Selection(fabric=Fabric(domains=4)))
    # labels are unique within one run; these come from two
    return alone + [replace(clustered[0], label="trn2-nl16 x 4 domains")]


def test_variants_of_either_backend_compare_side_by_side(results):
    assert (
        results[1].evaluation.domains == 4 and results[1].evaluation.ranks == 4 * results[0].evaluation.ranks
    )
    table, payload = comparison(results, SIZES, "busbw", ["A", "B"])
    assert [entry["bytes"] for entry in table] == shown_sizes(results, SIZES) == SIZES
    for entry, size in zip(payload, SIZES, strict=True):
        a, b = (next(row for row in r.evaluation.rows if row.requested_bytes == size) for r in results)
        assert entry["values"][results[1].label]["busbw_gbps"] == b.busbw_gbps
        assert entry["ratios"][results[1].label] == pytest.approx(b.busbw_gbps / a.busbw_gbps, rel=1e-12)
    assert [e["B_algorithm"] for e in table] == [r.algorithm for r in results[1].evaluation.rows]


def test_a_comparisons_baseline_rows_carry_each_variants_values_under_the_runs_identity(results):
    _, payload = comparison(results, SIZES, "time", ["A", "B"])
    identity = {"op": "allgather", "group": "all", "algo": "auto", "dtype": "float", "alpha_us": None}
    rows = comparison_rows(payload, identity)
    assert len(rows) == 2 * len(SIZES)  # size-major: each size, then each variant
    assert [r["requested_bytes"] for r in rows] == [s for s in SIZES for _ in results]
    for row in rows:
        result = next(r for r in results if r.label == row["variant"])
        model = next(m for m in result.evaluation.rows if m.requested_bytes == row["requested_bytes"])
        assert row["time_us"] == model.time_us and row["op"] == "allgather"
