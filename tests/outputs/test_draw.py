"""Drawings and heatmaps: every link is drawn once, grouped where the fabric repeats itself, and a
heatmap colours each drawn link by the busiest of the links it stands for."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from trnsim.model.engine import evaluate
from trnsim.outputs import draw
from trnsim.topology.load import load_topology

DRAWN = ["trn2-nl16", "trn2-nl64", "trn3-nl32x2-gen1", "trn3-nl72x2-gen1", "trn1-nl16", "tpu-v4-4x4x8"]


def _links_of(drawing) -> list:
    return [draw.link_key(*link) for segment in drawing.segments for link in segment.links]


@pytest.mark.parametrize("sku", DRAWN)
def test_every_link_between_drawn_devices_is_drawn_once(sku):
    topology = load_topology(sku)
    drawing = draw.layout(topology)
    drawn = _links_of(drawing)
    assert len(drawn) == len(set(drawn))
    expected = set()
    for a, b in topology.links:
        both_kinds = {topology.nodes[a].get("kind"), topology.nodes[b].get("kind")}
        ranks = any("core" in topology.nodes[end] for end in (a, b))
        if both_kinds <= {"chip", "switch"} and not ranks:
            expected.add(draw.link_key(a, b))
    # links inside one group of switches are the only ones left out
    missing = expected - set(drawn)
    assert all(
        topology.nodes[a].get("kind") == topology.nodes[b].get("kind") == "switch" for a, b in missing
    ), sorted(missing)[:3]
    assert set(drawn) <= expected


def test_nl72x2_groups_its_368_switches_into_boxes():
    topology = load_topology("trn3-nl72x2-gen1")
    drawing = draw.layout(topology)
    boxes = [box for box in drawing.boxes if box.kind in ("switches", "plane")]
    assert len(boxes) == 2 * 18 + 2 * 4  # each tray's switches, each rack's planes
    assert len(drawing.marks) == 144
    assert len(drawing.segments) < len(topology.links) / 5  # grouped, not a hairball
    assert {cls for cls, _ in drawing.classes.items()} == {"pcb", "backplane", "xrack"}
    assert drawing.classes["backplane"][0] == 1440


def test_a_3d_torus_is_sliced_along_its_slowest_axis():
    drawing = draw.layout(load_topology("trn2-nl64"))
    slices = [box for box in drawing.boxes if box.kind == "slice"]
    assert [box.label for box in slices] == [f"z = {k}" for k in range(4)]
    bands = [segment for segment in drawing.segments if segment.band]
    assert len(bands) == 4 and all(len(band.links) == 16 and band.cls == "z" for band in bands)
    assert sum(band.label.endswith("(wrap)") for band in bands) == 1


def test_failures_are_drawn_on_the_healthy_system():
    topology = load_topology("trn3-nl72x2-gen1", overrides=["fail=chip:5"])
    drawing = draw.layout(topology)
    assert len(drawing.marks) == 144
    assert [mark.label for mark in drawing.marks if mark.failed] == ["r0.n1.B"]
    failed = [segment for segment in drawing.segments if segment.failed]
    assert failed and all(any("r0.n1.B" in link for link in segment.links) for segment in failed)


def test_link_shares_are_the_busier_direction_over_the_busiest_link():
    topology = load_topology("trn2-nl64")
    result = evaluate(topology, "alltoall", [1 << 30], topology.chips)
    heat = result.busiest_links()
    shares = draw.link_shares(topology, heat.busy)
    assert len(shares) == len(topology.links)
    assert max(shares.values()) == pytest.approx(1.0)
    # all-to-all on NL64 is limited by the slower z links: they are the busiest, every one of them
    z = [
        share
        for (a, b), share in shares.items()
        if topology.links.get((a, b), topology.links.get((b, a)))["cls"] == "z"
    ]
    assert min(z) == pytest.approx(1.0)
    others = [share for key, share in shares.items() if share < 0.999]
    assert others and max(others) < 1.0
    assert heat.algorithm == result.rows[-1].algorithm and heat.bytes == 1 << 30


def test_the_busiest_step_is_the_one_with_the_most_bandwidth_time():
    topology = load_topology("trn2-nl16")
    result = evaluate(topology, "allreduce", [1 << 30], topology.chips, algo="ring")
    plan = result.plans["ring"]
    index, busy = plan.busiest_step()
    weights = [item.weight for item in plan.items]
    assert weights[index] == max(weights)
    assert np.all(busy >= 0) and busy.max() > 0


@pytest.fixture
def plotting():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    return matplotlib


@pytest.mark.parametrize("sku", ["trn2-nl16", "trn2-nl64", "trn3-nl32x2-gen1", "trn3-nl72x2-gen1"])
def test_drawings_are_written_and_not_empty(sku, tmp_path, plotting):
    out = tmp_path / f"{sku}.png"
    draw.save(draw.layout(load_topology(sku)), out)
    from matplotlib.image import imread

    pixels = imread(out)
    assert pixels.shape[0] > 300 and pixels.shape[1] > 300
    # ink: a good share of the pixels are not white
    assert np.mean(pixels[..., :3].min(axis=2) < 0.9) > 0.03


def test_heatmap_marks_the_bottlenecks(tmp_path, plotting, monkeypatch):
    import matplotlib.pyplot as pyplot

    topology = load_topology("trn3-nl72x2-gen1")
    heat = evaluate(topology, "allreduce", [1 << 30], topology.chips, algo="ring").busiest_links()
    captured = {}
    monkeypatch.setattr(pyplot, "close", lambda figure: captured.setdefault("figure", figure))
    draw.heatmap(topology, heat, tmp_path / "heat.svg", "ring")
    axes = next(ax for ax in captured["figure"].axes if ax.get_legend() is not None)
    legend = [text.get_text() for text in axes.get_legend().get_texts()]
    # the ring crosses between the racks on two cables: those two drawn lines bind
    assert legend[0] == "bottleneck (2 of 360 drawn links)"
    assert (tmp_path / "heat.svg").read_text().count("<path") > 100


def test_a_user_file_draws_like_the_catalog(tmp_path, plotting):
    from trnsim.spec.catalog import catalog_dir

    mine = tmp_path / "mine.yaml"
    mine.write_text(
        (catalog_dir() / "trn3-nl32x2-gen1.yaml").read_text().replace("trn3-nl32x2-gen1", "my-fabric")
    )
    topology = load_topology(None, mine)
    out = tmp_path / "mine.svg"
    draw.save(draw.layout(topology), out)
    assert "my-fabric" in topology.name and out.stat().st_size > 20_000


def test_bad_picture_names_are_refused_before_work(tmp_path):
    from trnsim.errors import UsageError

    with pytest.raises(UsageError, match=r"give a \.png, \.svg or \.pdf"):
        draw.save(draw.layout(load_topology("trn2-nl16")), tmp_path / "x.txt")


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs the Debian chromium package")
def test_the_report_opens_in_a_headless_browser(tmp_path, plotting, cli):
    out = tmp_path / "report.html"
    result = cli("report", "alltoall", "--sku", "nl64", "--sku", "nl16", "--sizes", "1M,1G", "-o", str(out))
    assert result.code == 0, result.err
    done = subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", out.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert "<h1>trnsim: alltoall on 2 variants" in dom
    assert dom.count("<svg") == 5  # the chart, and a drawing and a heatmap per variant
    assert "Uncaught" not in done.stderr and "SyntaxError" not in done.stderr
    text = Path(out).read_text()  # nothing to fetch: no external image, style sheet or script
    assert not any(ref in text for ref in ('src="http', 'href="http', "<link", "<script", "url(http"))


def test_a_failure_inside_a_grouped_line_is_marked():
    band = load_topology("trn2-nl64", overrides=["fail=link:z0.x0.y0,z1.x0.y0"])
    bands = [s for s in draw.layout(band).segments if s.band and s.lost]
    assert len(bands) == 1 and bands[0].label == "16 x z, 1 failed" and not bands[0].failed
    switch = load_topology("trn3-nl72x2-gen1", overrides=["fail=switch:r0.n3.sw2", "fail=switch:r0.B.sw3"])
    drawing = draw.layout(switch)
    labels = [box.label for box in drawing.boxes if "failed" in box.label]
    assert labels == ["8 sw (1 failed)", "plane B: 10 x scorpio-x-160 (1 failed)"]
    assert sum(1 for s in drawing.segments if s.lost) == 4 + 18  # tray 3's chips; rack 0's lines to plane B


def test_chips_hosting_ranks_are_drawn_once_and_counted_as_chips():
    topology = load_topology("trn1-nl16")
    drawing = draw.layout(topology)
    assert drawing.title.startswith("trn1-nl16: 16 chips (32 ranks), 0 switches")
    assert len(drawing.marks) == 16 and "core" not in drawing.classes


def test_size_two_rings_count_both_links():
    topology = load_topology("trn2-nl64", overrides=["torus.axes.z.size=2"])
    drawing = draw.layout(topology)
    bundles = [link for link in topology.links.values() if link["cls"] == "z"]
    assert any(link.get("parallel", 1) == 2 for link in bundles)
    assert drawing.classes["z"][0] == sum(int(link.get("parallel", 1)) for link in bundles) == 32
    per_link = min(link["bw_gbps"] / link.get("parallel", 1) for link in bundles)
    assert drawing.classes["z"][1] == pytest.approx(per_link)


def test_a_hashed_heatmap_says_it_shows_one_seed():
    topology = load_topology("trn3-nl72x2-gen1", overrides=["routing.policy=hash"])
    heat = evaluate(topology, "alltoall", [1 << 30], topology.chips).busiest_links()
    assert "seed 0 of 8" in heat.describe()
