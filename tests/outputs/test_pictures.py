"""Pictures: user text with control characters draws without a warning, a successful run's stderr
holds only trnsim's own lines, and a picture is written whole or not at all."""

import os
import shutil
import subprocess
import sys
import warnings

import pytest

from tests.conftest import CATALOG
from trnsim import atomic
from trnsim.errors import UsageError
from trnsim.outputs import draw
from trnsim.topology.load import load_topology

pytest.importorskip("matplotlib")
NL16 = next(path for path in CATALOG if path.stem == "trn1-nl16")
CONTROL = "a\x07bell \x1b[2Jand a clear screen"


def test_control_characters_in_a_title_draw_as_escapes_without_a_warning(tmp_path):
    drawing = draw.layout(load_topology("trn1-nl16"))
    drawing.title = CONTROL
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        draw.save(drawing, tmp_path / "t.svg")
    assert [str(w.message) for w in caught] == []
    svg = (tmp_path / "t.svg").read_text()
    assert "\x07" not in svg and "\x1b" not in svg and r"a\x07bell \x1b[2Jand" in svg


def _trnsim(*argv, cwd):
    return subprocess.run(
        [sys.executable, "-m", "trnsim", *argv], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_a_successful_pictures_stderr_holds_only_trnsims_own_lines(tmp_path):
    """matplotlib warned (with the raw BEL in its message) of every control character it could not
    draw; the labels come from --title and from a file's name."""
    odd = tmp_path / "odd\x07name.yaml"
    shutil.copy(NL16, odd)
    runs = [
        _trnsim("topo", "draw", "nl16", "-o", "draw.png", "--title", CONTROL, cwd=tmp_path),
        _trnsim(
            "plot", "allreduce", "--topology", str(odd), "--sizes", "1M,1G", "-o", "plot.png", cwd=tmp_path
        ),
        _trnsim(
            "collective",
            "allreduce",
            "--topology",
            str(odd),
            "--sizes",
            "1M",
            "--heatmap",
            "heat.svg",
            cwd=tmp_path,
        ),
    ]
    for run in runs:
        assert run.returncode == 0, run.stderr
        assert all(line.startswith("wrote ") for line in run.stderr.splitlines()), run.stderr
        assert "\x07" not in run.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix != ".yaml") == [
        "draw.png",
        "heat.svg",
        "plot.png",
    ]


def test_a_glyph_the_font_lacks_is_one_printable_warning_line(tmp_path):
    run = _trnsim("topo", "draw", "nl16", "-o", "x.png", "--title", "\u4e2d\u6587 \u0007", cwd=tmp_path)
    assert run.returncode == 0
    lines = run.stderr.splitlines()
    warned = [line for line in lines if line.startswith("warning: ")]
    # a font with CJK glyphs warns of nothing; DejaVu Sans (matplotlib's own) lacks them
    assert len(warned) <= 1 and len(lines) == len(warned) + 1 and lines[-1].startswith("wrote x.png")
    assert all(line.isprintable() for line in lines)


def test_a_picture_that_fails_halfway_leaves_the_old_one(tmp_path, monkeypatch):
    target = tmp_path / "fabric.png"
    target.write_bytes(b"the old picture")

    def fail_halfway(fd, data):
        os.write(fd, data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic, "_write_all", fail_halfway)
    with pytest.raises(UsageError, match="No space left on device"):
        draw.save(draw.layout(load_topology("trn1-nl16")), target)
    assert target.read_bytes() == b"the old picture"
    assert [p.name for p in tmp_path.iterdir()] == ["fabric.png"]


@pytest.mark.parametrize("suffix", ["png", "bogus"])
def test_a_picture_is_closed_once_saved_or_refused(tmp_path, suffix):
    """pyplot keeps every open figure alive: a run drawing many must not hold them all."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    from trnsim.outputs.pictures import save_picture

    figure = pyplot.figure()
    try:
        save_picture(figure, tmp_path / f"p.{suffix}")
    except ValueError:  # a format matplotlib does not know
        assert suffix == "bogus"
    assert figure.number not in pyplot.get_fignums()
