"""The plot module draws labelled axes, one line per variant and a dashed bound for each."""

import builtins

import pytest

from trnsim.errors import UsageError
from trnsim.studies.variants import Variant, run_variants


def test_figure_has_labels_legend_and_dashed_bounds(tmp_path, monkeypatch):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    from trnsim.outputs import plot

    # the engine's lines (a runtime's draw the ideal beside: tests/cli/test_compare_cli.py)
    results = run_variants(
        [Variant("nl16"), Variant("nl64")], "allreduce", [1024, 1 << 20, 1 << 30], runtime="ideal"
    )
    captured = {}
    monkeypatch.setattr(pyplot, "close", lambda figure: captured.setdefault("figure", figure))
    plot.save_figure(results, "allreduce", tmp_path / "c.svg", "title")
    axes = captured["figure"].axes[0]
    assert "size" in axes.get_xlabel() and "GB/s" in axes.get_ylabel() and axes.get_xscale() == "log"
    lines = axes.get_lines()
    assert [line.get_label() for line in lines] == [
        "trn2-nl16",
        "trn2-nl16 (bound)",
        "trn2-nl64",
        "trn2-nl64 (bound)",
    ]
    assert [line.get_linestyle() for line in lines] == ["-", "--", "-", "--"]
    assert axes.get_legend() is not None and (tmp_path / "c.svg").stat().st_size > 0


def test_missing_matplotlib_says_how_to_install(monkeypatch, tmp_path):
    from trnsim.outputs import plot

    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    monkeypatch.setattr("importlib.import_module", lambda name: no_matplotlib(name))
    with pytest.raises(UsageError, match=r"pip install '\.\[plot\]'"):
        plot.save_figure([], "allreduce", tmp_path / "c.png", "t")
