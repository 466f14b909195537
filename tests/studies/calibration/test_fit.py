"""Calibration: fits recover known parameters, files round-trip, and the published runs are reproduced."""

import json
import re
from functools import cache
from pathlib import Path

import pytest
import yaml

from trnsim.errors import ConfigError
from trnsim.model.engine import evaluate
from trnsim.studies.calibration.files import calibration_edits, write_calibration
from trnsim.studies.calibration.fit import fit, fit_each_regime
from trnsim.studies.calibration.readers import parse_measurement, read_measurement
from trnsim.studies.calibration.regimes import parse_fit_sizes
from trnsim.topology.groups import select_group
from trnsim.topology.load import load_topology

ROOT = Path(__file__).resolve().parents[3]
FOLDER = ROOT / "examples" / "measurements"
MANIFEST = yaml.safe_load((FOLDER / "manifest.yaml").read_text())["runs"]


def _synthetic_run(sku: str, op: str, ranks: int, edits: list[str], sizes: list[int]) -> str:
    """An nccom-test text log of what the model itself gives with ``edits``: a run with known truth."""
    topo = load_topology(sku, overrides=edits)
    rows = evaluate(topo, op, sizes, select_group(topo, None, ranks)).rows
    lines = [
        f"# trnsim: op={op} ranks={ranks}",
        "size(B) count(elems) type time:avg(us) algbw(GB/s) busbw(GB/s)",
    ]
    lines += [f"{r.bytes} {r.count} fp32 {r.time_us:.4f} {r.algbw_gbps:.4f} {r.busbw_gbps:.4f}" for r in rows]
    return "\n".join(lines) + "\n"


def test_a_fit_recovers_the_parameters_that_made_the_run():
    truth = ["latency.step_ns=4000", "efficiency.default=0.7", "efficiency.classes={}"]
    sizes = [1 << k for k in range(10, 31, 2)]
    measured = parse_measurement(_synthetic_run("trn2-nl16", "allreduce", 16, truth, sizes), "synthetic.txt")
    result = fit(measured, "trn2-nl16", None, [], None, ["step_ns", "efficiency"], ranks_per_chip=1)
    got = {p.name: p for p in result.parameters}
    assert got["step_ns"].value == pytest.approx(4000, rel=0.02)
    assert got["efficiency"].value == pytest.approx(0.7, rel=0.01)
    assert got["efficiency"].before == pytest.approx(0.88)  # the file's own value
    assert max(abs(row.error) for row in result.rows) < 0.01
    assert all(p.stderr is not None for p in result.parameters)


def test_a_fit_over_a_size_range_ignores_the_rows_outside_it():
    # a run whose small sizes follow another protocol (3x slower): fitting only the large sizes
    # recovers the parameters that made them; the other rows are reported, marked, and not held
    truth = ["latency.step_ns=4000", "efficiency.default=0.7", "efficiency.classes={}"]
    sizes = [1 << k for k in range(10, 31, 2)]
    text = _synthetic_run("trn2-nl16", "allreduce", 16, truth, sizes)
    lines = text.splitlines()
    for i, line in enumerate(lines[2:], start=2):
        size, count, kind, time_us, *_ = line.split()
        if int(size) < 1 << 20:
            slow = 3 * float(time_us)
            algbw = int(size) / slow / 1e3
            lines[i] = f"{size} {count} {kind} {slow:.4f} {algbw:.4f} {algbw * 30 / 16:.4f}"
    measured = parse_measurement("\n".join(lines) + "\n", "two-regimes.txt")
    ranged = fit(
        measured,
        "trn2-nl16",
        None,
        [],
        None,
        ["step_ns", "efficiency"],
        fit_sizes=parse_fit_sizes("1M:"),
        ranks_per_chip=1,
    )
    got = {p.name: p.value for p in ranged.parameters}
    assert got["step_ns"] == pytest.approx(4000, rel=0.02)
    assert got["efficiency"] == pytest.approx(0.7, rel=0.01)
    assert [row.fitted for row in ranged.rows] == [size >= 1 << 20 for size in sizes]
    assert max(abs(row.error) for row in ranged.rows if row.fitted) < 0.01
    assert ranged.rms_error < 0.01 and any("not fitted" in note for note in ranged.notes)
    whole = fit(measured, "trn2-nl16", None, [], None, ["step_ns", "efficiency"], ranks_per_chip=1)
    assert abs({p.name: p.value for p in whole.parameters}["step_ns"] / 4000 - 1) > 0.1


def test_calibrate_refuses_a_size_range_with_no_rows(cli):
    result = cli(
        "calibrate", str(FOLDER / "n5-allgather-32r.txt"), "--sku", "trn1-nl16", "--fit-sizes", "1T:"
    )
    assert result.code == 2 and "--fit-sizes '1TiB:': no row" in result.err and "Traceback" not in result.err


def test_a_fit_with_few_rows_says_so_and_reports_no_error():
    text = "# trnsim: op=allreduce ranks=16\nsize(B) count(elems) type time:avg(us) algbw(GB/s) busbw(GB/s)\n"
    text += "1048576 262144 fp32 100.0 10.49 19.66\n"
    result = fit(
        parse_measurement(text, "one.txt"),
        "trn2-nl16",
        None,
        [],
        None,
        ["step_ns", "efficiency"],
        ranks_per_chip=1,
    )
    assert result.notes and "underdetermined" in result.notes[0]
    assert all(p.stderr is None for p in result.parameters)


def test_calibration_files_round_trip_and_apply(tmp_path):
    measured = read_measurement(FOLDER / "n5-allgather-32r.txt")
    result = fit(measured, "trn1-nl16", None, [], None, ["step_ns", "efficiency"])
    path = tmp_path / "cal.yaml"
    path.write_text(write_calibration(result, path))
    edits = calibration_edits(path)
    assert edits == result.edits
    topo = load_topology("trn1-nl16", overrides=edits)
    rows = evaluate(topo, "allgather", [r.size_bytes for r in measured.rows], topo.chips).rows
    assert [r.time_us for r in rows] == pytest.approx([r.after_us for r in result.rows], rel=1e-4)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("format: trnsim-calibration/1\nedits: [latency.step_ns=1]\n", None),
        ("format: something-else\nedits: []\n", "format"),
        ("format: trnsim-calibration/1\nedits: notalist\n", "edits"),
        ("format: trnsim-calibration/1\nedits: [novalue]\n", "edits[0]"),
        ("format: trnsim-calibration/1\nedits: [latency.step_ns=1, bogus.key=3]\n", "edits[1]: 'bogus.key'"),
        ("[1, 2]\n", "format"),
    ],
)
def test_calibration_files_are_checked(tmp_path, text, words):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    if words is None:
        assert calibration_edits(path) == ["latency.step_ns=1"]
        return
    with pytest.raises(ConfigError, match=words.replace("[", r"\[").replace("]", r"\]")):
        calibration_edits(path)


@cache
def _fitted(name: str):
    """The fit of a published run (a few seconds each; several tests read the same one, none changes it)."""
    entry = MANIFEST[name]
    return fit(
        read_measurement(FOLDER / name),
        entry["sku"],
        None,
        entry.get("set", []),
        entry.get("group"),
        entry.get("fit", "step_ns,link_ns,efficiency").split(","),
        algorithm=entry.get("algo", "auto"),
        loss=entry.get("loss", "linear"),
        fit_sizes=parse_fit_sizes(entry.get("fit_sizes")),
    )


FITTED = [name for name, entry in MANIFEST.items() if "sku" in entry and "predict_with" not in entry]


def test_the_manifest_names_every_run_in_the_folder():
    runs = {p.name for p in FOLDER.iterdir() if p.suffix in (".txt", ".json")}
    assert runs == set(MANIFEST)


@pytest.mark.parametrize("name", FITTED)
def test_each_published_run_is_reproduced_after_calibration(name):
    # the bar: the largest size's busbw within 5%, the smallest fitted size's time within 25%
    result = _fitted(name)
    fitted = [row for row in result.rows if row.fitted]
    largest, smallest = fitted[-1], fitted[0]
    assert abs(largest.after_busbw_gbps / largest.measured_busbw_gbps - 1) < 0.05, name
    assert abs(smallest.error) < 0.25, name


def test_the_same_run_in_gib_and_gb_gives_the_same_fit():
    gib, gb = _fitted("n2-allreduce-2r-gibs.txt"), _fitted("n2-allreduce-2r-gbs.txt")
    for a, b in zip(gib.parameters, gb.parameters, strict=True):
        assert a.value == pytest.approx(b.value, rel=0.02, abs=1.0), a.name


@pytest.mark.parametrize("name", FITTED)
def test_the_shipped_calibrations_are_current(name):
    # a shipped file's edits reproduce its own rows: it was written by the current model
    stem, suffix = Path(name).stem, Path(name).suffix
    path = FOLDER / "calibrations" / (f"{stem}.yaml" if suffix == ".txt" else f"{stem}-{suffix[1:]}.yaml")
    document = yaml.safe_load(path.read_text())
    measured = read_measurement(FOLDER / name)
    topo = load_topology(document["sku"], overrides=calibration_edits(path))
    group = select_group(topo, document["group"], None if document["group"] else measured.ranks)
    algo = document["algorithm"]
    if algo == "measured":
        return  # per-row algorithms: covered by the fit test above
    rows = evaluate(topo, measured.op, [r.size_bytes for r in measured.rows], group, algo=algo).rows
    assert [r.time_us for r in rows] == pytest.approx([r["model_us"] for r in document["rows"]], rel=1e-3)


def test_calibrate_command_prints_parameters_and_residuals(cli, tmp_path):
    out = tmp_path / "n5.yaml"
    result = cli("calibrate", str(FOLDER / "n5-allgather-32r.txt"), "--sku", "trn1-nl16", "-o", str(out))
    assert result.code == 0, result.err
    assert "fitted parameters" in result.out and "efficiency.classes.core,x,y" in result.out
    assert out.exists()
    again = cli("collective", "allgather", "--sku", "trn1-nl16", "--calibration", str(out), "--sizes", "512K")
    assert again.code == 0 and "efficiency.classes={core: " in again.out and not again.err
    elsewhere = cli("collective", "allgather", "--sku", "nl16", "--calibration", str(out), "--sizes", "512K")
    assert elsewhere.code == 0 and "fitted on trn1-nl16" in elsewhere.err
    data = json.loads(
        cli("calibrate", str(FOLDER / "n5-allgather-32r.txt"), "--sku", "trn1-nl16", "--format", "json").out
    )
    assert data["format"] == "trnsim-calibration/1" and len(data["rows"]) == 4


def test_calibrate_refuses_malformed_logs_with_the_line(cli, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text(
        "# trnsim: op=allreduce ranks=2\nsize(B) count(elems) type time:avg(us) algbw(GB/s) busbw(GB/s)\n"
        "1024 256 fp32 abc 0.1 0.1\n"
    )
    result = cli("calibrate", str(bad), "--sku", "trn1-nl16")
    assert result.code == 2 and f"{bad}:3" in result.err and "Traceback" not in result.err
    assert cli("calibrate", str(FOLDER / "n5-allgather-32r.txt")).code == 2  # no system named
    assert (
        cli("calibrate", str(FOLDER / "n5-allgather-32r.txt"), "--sku", "trn1-nl16", "--fit", "x").code == 2
    )
    too_many = cli("calibrate", str(FOLDER / "n5-allgather-32r.txt"), "--sku", "trn2-nl16")
    assert too_many.code == 2  # 32 ranks on a 16-rank system


def test_an_on_chip_run_calibrates_only_the_on_chip_links():
    # N2 runs inside one chip: its fit must not touch the links between chips
    result = _fitted("n2-allreduce-2r-gibs.txt")
    assert result.used_classes == ["core"]
    topo = load_topology("trn1-nl16", overrides=result.edits)
    assert topo.spec.efficiency.of("x") == pytest.approx(0.88) and topo.spec.efficiency.of("core") < 0.2


def test_a_parameter_stopped_at_its_range_is_flagged():
    # N8's efficiency wants to exceed 1 (KangaRing's two rings against trnsim's one)
    result = _fitted("n8-allreduce-16r-algorithm.txt")
    efficiency = next(p for p in result.parameters if p.name == "efficiency")
    assert efficiency.at_limit and efficiency.value == pytest.approx(1.0)


def test_calibrate_refuses_what_it_cannot_fit(cli, tmp_path):
    many = tmp_path / "many.txt"
    lines = [
        "# trnsim: op=allreduce ranks=2",
        "size(B) count(elems) type time:avg(us) algbw(GB/s) busbw(GB/s)",
    ]
    lines += [
        f"{1024 * k} {256 * k} fp32 {10 + k} {1024 * k / (10 + k) / 1e3:.4f} {1024 * k / (10 + k) / 1e3:.4f}"
        for k in range(1, 1002)
    ]
    many.write_text("\n".join(lines) + "\n")
    result = cli("calibrate", str(many), "--sku", "trn1-nl16", "--group", "0-1")
    assert result.code == 2 and "1,001" in result.err
    result = cli("calibrate", str(FOLDER / "n5-allgather-32r.txt"), "--sku", "trn1-nl16", "--algo", "all")
    assert result.code == 2 and "--algo all" in result.err


def test_plot_overlays_only_runs_of_the_same_rank_count(cli, tmp_path):
    pytest.importorskip("matplotlib")
    good = cli(
        "plot",
        "allgather",
        "--sku",
        "trn1-nl16",
        "--measured",
        str(FOLDER / "n5-allgather-32r.txt"),
        "-o",
        str(tmp_path / "a.png"),
    )
    assert good.code == 0 and (tmp_path / "a.png").stat().st_size > 10_000
    mixed = cli(
        "plot",
        "allgather",
        "--sku",
        "trn1-nl16",
        "--measured",
        str(FOLDER / "n5-allgather-32r.txt"),
        "--measured",
        str(FOLDER / "n6-allgather-8r-stats.txt"),
        "-o",
        str(tmp_path / "b.png"),
    )
    assert mixed.code == 2 and "8 ranks" in mixed.err


def test_a_calibration_edit_the_schema_refuses_names_the_file_and_its_entry(cli, tmp_path):
    """Such an edit was reported as coming 'with --set', an option the user never gave."""
    good = (FOLDER / "calibrations" / "g4-allreduce-4r-ring.yaml").read_text()
    assert "'efficiency.classes={nvlink: " in good
    path = tmp_path / "bad.yaml"
    path.write_text(
        re.sub(r"'efficiency.classes=\{nvlink: [0-9.]+\}'", "'efficiency.classes={nvlink: 7}'", good)
    )
    edits = calibration_edits(path)
    index = next(i for i, edit in enumerate(edits) if edit.startswith("efficiency.classes"))
    result = cli("collective", "allreduce", "--sku", "nvl72", "--calibration", str(path), "--set",
                 "latency.step_ns=10", "--sizes", "1M")  # fmt: skip
    assert result.code == 2 and "--set" not in result.err
    assert result.err.startswith(
        f"error: {path}: edits[{index}] 'efficiency.classes={{nvlink: 7}}' (applied to "
    ) and result.err.rstrip().endswith("efficiency.classes[...]: expected `float` <= 1.0")
    # an edit of one's own is still reported as --set
    own = cli("collective", "allreduce", "--sku", "nvl72", "--set", "efficiency.classes={nvlink: 7}")
    assert own.code == 2 and "with --set efficiency.classes={nvlink: 7}" in own.err


def test_calibrate_takes_the_op_of_a_log_saved_without_it(cli, tmp_path):
    """A nccom-test table kept without its command line: the error names --op, which supplies the
    op (the same fit as the complete log) and is refused when the log names another."""
    whole = FOLDER / "n5-allgather-32r.txt"
    lines = whole.read_text().splitlines()
    bare = tmp_path / "table.txt"  # the rank count stays, in the comment line; the op goes
    bare.write_text(
        "\n".join(
            ["# trnsim: ranks=32"] + [line for line in lines if not line.startswith(("#", "nccom-test"))]
        )
    )
    missing = cli("calibrate", str(bare), "--sku", "trn1-nl16")
    assert missing.code == 2 and missing.err.rstrip().endswith("or pass --op OP")
    given = cli("calibrate", str(bare), "--sku", "trn1-nl16", "--op", "allgather", "--format", "json")
    full = cli("calibrate", str(whole), "--sku", "trn1-nl16", "--format", "json")
    assert given.code == 0 and json.loads(given.out)["parameters"] == json.loads(full.out)["parameters"]
    clash = cli("calibrate", str(whole), "--sku", "trn1-nl16", "--op", "allreduce")
    assert (
        clash.code == 2 and "op=allgather here" in clash.err and "but --op allreduce was given" in clash.err
    )
    bad = cli("calibrate", str(bare), "--sku", "trn1-nl16", "--op", "hypercube")
    assert bad.err.startswith("error: --op 'hypercube': the op is not supported")


def test_each_regime_is_fitted_apart_and_recovers_its_own_parameters():
    """A run made by the model with one per-step latency below 1 MiB and another above (a protocol
    switch): each regime's fit recovers its own; the fit over every row is kept as it was."""
    sizes = [1 << k for k in range(10, 31)]
    slow = ["latency.step_ns=20000", "efficiency.default=0.5", "efficiency.classes={}"]
    fast = ["latency.step_ns=2000", "efficiency.default=0.8", "efficiency.classes={}"]
    small = _synthetic_run("trn2-nl16", "allreduce", 16, slow, [s for s in sizes if s < 1 << 20]).splitlines()
    large = _synthetic_run(
        "trn2-nl16", "allreduce", 16, fast, [s for s in sizes if s >= 1 << 20]
    ).splitlines()
    measured = parse_measurement("\n".join(small + large[2:]) + "\n", "switch.txt")
    args = (measured, "trn2-nl16", None, [], None, ["step_ns", "efficiency"])
    regimes = fit_each_regime(*args, ranks_per_chip=1)
    assert [r.fit_sizes for r in regimes] == [(1 << 10, 1 << 19), (1 << 20, 1 << 30)]
    for regime, truth in zip(regimes, (20000, 2000), strict=True):
        assert {p.name: p.value for p in regime.parameters}["step_ns"] == pytest.approx(truth, rel=0.05)
    assert {p.name: p.value for p in regimes[1].parameters}["efficiency"] == pytest.approx(0.8, rel=0.02)
    whole = fit(*args, ranks_per_chip=1)
    assert all(row.fitted for row in whole.rows)  # the fit of every row is unchanged
    assert fit_each_regime(*args, ranks_per_chip=1, fit_sizes=(1 << 20, None)) == []  # a range chosen


def _runtime_run(sku: str, op: str, ranks: int, edits: list[str], sizes: list[int], runtime: str) -> str:
    """A text log of what ``runtime`` gives with ``edits``: a run with known truth."""
    from trnsim.model.runtime import apply_runtime

    topo = load_topology(sku, overrides=edits)
    ideal = evaluate(topo, op, sizes, select_group(topo, None, ranks))
    rows = apply_runtime(topo, ideal, runtime).rows
    lines = [
        f"# trnsim: op={op} ranks={ranks}",
        "size(B) count(elems) type time:avg(us) algbw(GB/s) busbw(GB/s)",
    ]
    lines += [f"{r.bytes} {r.count} fp32 {r.time_us:.4f} {r.algbw_gbps:.4f} {r.busbw_gbps:.4f}" for r in rows]
    return "\n".join(lines) + "\n"


def test_a_runtime_fit_recovers_the_runtimes_call_cost():
    # the neuron runtime with a 7 us call made the run; the file says 3: the fit finds 7, and the
    # calibration's edit is the runtime's own key
    sizes = [1 << k for k in range(10, 31, 2)]
    log = _runtime_run("trn2-nl16", "allreduce", 16, ["runtime.neuron.call_us=7"], sizes, "neuron")
    measured = parse_measurement(log, "synthetic.txt")
    result = fit(measured, "trn2-nl16", None, [], None, ["call_us"], ranks_per_chip=1, runtime="neuron")
    (call,) = result.parameters
    assert call.before == pytest.approx(3.0) and call.value == pytest.approx(7.0, abs=0.01)
    assert any(edit.startswith("runtime.neuron.call_us=7.0") for edit in result.edits)
    assert write_calibration(result, Path("x.yaml")).count("runtime: neuron") == 1  # what a run models
    assert max(abs(row.error) for row in result.rows) < 1e-3


def test_a_runtime_fit_refuses_what_the_runtimes_time_does_not_depend_on():
    from trnsim.errors import ParameterError

    log = _synthetic_run("trn2-nl16", "allreduce", 16, [], [1 << 20, 1 << 24, 1 << 28])
    measured = parse_measurement(log, "synthetic.txt")
    with pytest.raises(ParameterError, match="does not depend on step_ns"):
        fit(measured, "trn2-nl16", None, [], None, ["step_ns"], ranks_per_chip=1, runtime="neuron")
    with pytest.raises(ParameterError, match="does not depend on call_us"):
        fit(measured, "trn2-nl16", None, [], None, ["call_us"], ranks_per_chip=1)
