"""``trnsim design`` end to end: the table written whole, infeasible points as rows, the front and
the constraints checked against the rows themselves, engines giving the same rows, refusals."""

import csv
import json

import pytest

from trnsim.studies.design.pareto import MAXIMISE, MINIMISE, dominates

KEY = "switched.switch_fabric.lanes_per_link"
BASE = ("design", "--sku", "hgx-h100", "--vary", f"{KEY}=4,9,10", "--objective", "busbw:allreduce:16M")


def _json(path) -> dict:
    return json.loads(path.read_text())


def test_every_point_is_a_row_and_the_front_is_the_rows_undominated(cli, tmp_path):
    out = tmp_path / "d.json"
    result = cli(*BASE, "--vary", "efficiency.default=0.8,0.9", "-o", str(out))
    assert result.code == 0, result.err
    rows = _json(out)["rows"]
    assert [r["point"] for r in rows] == list(range(6))
    assert [(r[KEY], r["efficiency.default"]) for r in rows] == [
        (lanes, eff) for lanes in ("4", "9", "10") for eff in ("0.8", "0.9")
    ]
    infeasible = [r for r in rows if not r["feasible"]]
    assert [r[KEY] for r in infeasible] == ["10", "10"]  # 4 switches x 10 lanes: 40 of an H100's 36
    assert all("36 backplane lanes" in r["reason"] and "hgx-h100.yaml" not in r["reason"] for r in infeasible)
    assert all(r["busbw_gbps"] is None and r["front"] is None for r in infeasible)
    feasible = [r for r in rows if r["feasible"]]
    for r in feasible:
        assert r["busbw_gbps_per_kusd"] == pytest.approx(1e3 * r["busbw_gbps"] / r["capex_usd"])
        assert r["busbw_gbps_per_kw"] == pytest.approx(1e3 * r["busbw_gbps"] / r["power_w"])

    def objectives(r):
        return (r["busbw_gbps"], r["capex_usd"], r["power_w"])

    senses = (MAXIMISE, MINIMISE, MINIMISE)
    for r in feasible:
        beaten = any(dominates(objectives(q), objectives(r), senses) for q in feasible)
        assert r["front"] == (not beaten)
    printed = [line for line in result.out.splitlines() if "hgx-h100" in line]
    assert len(printed) == sum(r["front"] for r in feasible) and "2 infeasible" not in result.out
    assert "infeasible: points 4, 5:" in result.out.replace("\n", " ")


def test_csv_holds_the_same_rows(cli, tmp_path):
    result = cli(*BASE, "-o", str(tmp_path / "d.csv"))
    assert result.code == 0, result.err
    rows = list(csv.DictReader((tmp_path / "d.csv").open()))
    assert [r[KEY] for r in rows] == ["4", "9", "10"] and [r["feasible"] for r in rows] == [
        "True",
        "True",
        "False",
    ]
    assert rows[2]["busbw_gbps"] == "" and rows[2]["reason"]


def test_format_csv_prints_what_the_file_holds_and_json_too(cli, tmp_path):
    """Machines read every point, whichever way they ask: stdout's CSV is the -o file's bytes (the
    front alone is the table's, for people), and stdout's JSON holds the same points."""
    assert cli(*BASE, "-o", str(tmp_path / "d.csv")).code == 0
    printed = cli(*BASE, "--format", "csv")
    assert printed.code == 0, printed.err
    assert printed.out == (tmp_path / "d.csv").read_text()
    document = json.loads(cli(*BASE, "--format", "json").out)
    assert [str(r["point"]) for r in document["rows"]] == [
        r["point"] for r in csv.DictReader(printed.out.splitlines())
    ]


def test_constraints_mark_rows_and_keep_them_off_the_front(cli, tmp_path):
    out = tmp_path / "d.json"
    result = cli(*BASE, "--max-power-w", "1", "--constraint", "busbw_gbps >= 0", "-o", str(out))
    assert result.code == 0, result.err
    rows = _json(out)["rows"]
    assert all(r["violates"] == "power_w <= 1.0" and r["front"] is False for r in rows if r["feasible"])
    assert "2 of them breaking a constraint, 0 on the front" in result.out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--constraint", "watts < 3"), "--constraint 'watts < 3': no column 'watts'"),
        (("--vary", "efficiency.default=0.8,x"), "efficiency.default: expected `float`"),
        (("--vary", f"{KEY}=4"), "--vary switched.switch_fabric.lanes_per_link: the key is varied twice"),
        (("--objective", "moe:8"), "--objective 'moe:8'"),
        (("--faults", "--objective", "moe:4:1M"), "--faults gives the expected busbw"),
        (("--objective", "layout:tp=8:tp=1M", "--min-busbw-gbps", "3"), "--min-busbw-gbps: the objective"),
        (("--search", "random:0"), "--search 'random:0'"),
        (("--plot", "x.pdf"), "--plot x.pdf"),
        (("--engine", "spark"), "--engine 'spark'"),
    ],
)
def test_bad_input_is_one_line_before_any_work(cli, tmp_path, extra, message):
    result = cli(*BASE, *extra, "-o", str(tmp_path / "d.csv"))
    assert result.code == 2 and result.out == ""
    (line,) = result.err.splitlines()
    assert message in line, line
    assert not (tmp_path / "d.csv").exists()


def test_an_oversized_grid_is_refused_naming_count_and_limit(cli, monkeypatch):
    monkeypatch.setenv("TRNSIM_MAX_DESIGN_POINTS", "2")
    result = cli(*BASE)
    assert result.code == 2 and result.out == ""
    assert "3 design points, more than the limit of 2" in result.err and "--search random:N" in result.err


def test_a_random_search_evaluates_a_subset_of_the_grid(cli, tmp_path):
    assert cli(*BASE, "--vary", "efficiency.default=0.8,0.9", "-o", str(tmp_path / "all.json")).code == 0
    result = cli(*BASE, "--vary", "efficiency.default=0.8,0.9", "--search", "random:3", "--seed", "5",
                 "-o", str(tmp_path / "some.json"))  # fmt: skip
    assert result.code == 0, result.err
    every = {r["point"]: r for r in _json(tmp_path / "all.json")["rows"]}
    some = _json(tmp_path / "some.json")["rows"]
    assert len(some) == 3 and "3 of the grid's 6 points" in result.out
    for r in some:  # the same point, the same figures (its front mark is the sample's)
        assert {k: v for k, v in r.items() if k != "front"} == {
            k: v for k, v in every[r["point"]].items() if k != "front"
        }


@pytest.mark.parametrize("engine", [("--jobs", "2"), ("--engine", "dask", "--jobs", "2")])
def test_engines_give_the_same_rows_in_the_same_order(cli, tmp_path, engine):
    if "dask" in engine:
        pytest.importorskip("distributed")
    assert cli(*BASE, "-o", str(tmp_path / "serial.csv")).code == 0
    result = cli(*BASE, *engine, "-o", str(tmp_path / "engine.csv"))
    assert result.code == 0, result.err
    assert (tmp_path / "engine.csv").read_bytes() == (tmp_path / "serial.csv").read_bytes()


def test_expected_busbw_under_faults(cli, tmp_path):
    out = tmp_path / "d.json"
    result = cli("design", "--sku", "hgx-h100", "--vary", "efficiency.default=0.8,0.9", "--faults",
                 "--objective", "busbw:allreduce:16M", "-o", str(out))  # fmt: skip
    assert result.code == 0, result.err
    for r in _json(out)["rows"]:
        assert 0 < r["expected_busbw_gbps"] <= r["busbw_gbps"] and 0 <= r["p_multiple_failures"] < 1
        assert r["expected_busbw_gbps_per_kw"] == pytest.approx(1e3 * r["expected_busbw_gbps"] / r["power_w"])
    # a rarer failure can only bring the expectation closer to the healthy busbw
    rare = tmp_path / "rare.json"
    assert cli("design", "--sku", "hgx-h100", "--vary", "efficiency.default=0.8,0.9", "--faults",
               "--objective", "busbw:allreduce:16M", "--mttf", "chip=1e9", "-o", str(rare)).code == 0  # fmt: skip
    for r, s in zip(_json(out)["rows"], _json(rare)["rows"], strict=True):
        assert r["expected_busbw_gbps"] <= s["expected_busbw_gbps"] <= s["busbw_gbps"]


def test_a_repair_time_that_leaves_two_parts_down_often_is_said(cli, tmp_path):
    """The expectation leaves out the states with two parts or more down: when the rows say those
    hold more than the note's share of the time, so does stderr, naming the points; else nothing."""
    from trnsim.studies.design.faults import MULTIPLE_FAILURES_NOTE

    args = ("design", "--sku", "hgx-h100", "--vary", "efficiency.default=0.8,0.9", "--faults",
            "--objective", "busbw:allreduce:16M")  # fmt: skip
    for mttr in ("24", "20000"):
        out = tmp_path / f"mttr-{mttr}.json"
        result = cli(*args, "--mttr", mttr, "-o", str(out))
        assert result.code == 0, result.err
        often = [r["point"] for r in _json(out)["rows"] if r["p_multiple_failures"] > MULTIPLE_FAILURES_NOTE]
        said = [line for line in result.err.splitlines() if line.startswith("note: ")]
        if often:
            assert len(said) == 1 and f"(points {', '.join(map(str, often))};" in said[0]
        else:
            assert said == []
    assert often, "a repair time of 20,000 h should leave two parts down often"


def test_a_layout_that_does_not_fit_a_system_is_infeasible_there(cli, tmp_path):
    out = tmp_path / "d.json"
    result = cli("design", "--sku", "hgx-h100", "--sku", "nl16", "--objective", "layout:tp=4,dp=*:tp=1M,dp=8M",
                 "--vary", "latency.step_ns=1000,2000", "-o", str(out))  # fmt: skip
    assert result.code == 0, result.err
    rows = _json(out)["rows"]
    assert all(r["feasible"] and r["steps_per_s"] == pytest.approx(1e6 / r["step_time_us"]) for r in rows)
    result = cli("design", "--sku", "hgx-h100", "--sku", "nl16", "--objective", "layout:tp=16:tp=1M",
                 "--vary", "latency.step_ns=1000,2000", "-o", str(out))  # fmt: skip
    rows = _json(out)["rows"]
    assert [r["feasible"] for r in rows] == [False, False, True, True]
    assert "multiply to 16, but the system has 8 ranks" in rows[0]["reason"]


def test_the_plot_is_a_picture(cli, tmp_path):
    pytest.importorskip("matplotlib")
    result = cli(*BASE, "--plot", str(tmp_path / "d.png"))
    assert result.code == 0, result.err
    assert (tmp_path / "d.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {tmp_path / 'd.png'}" in result.err


def test_a_part_price_is_an_axis(cli, tmp_path):
    """The capex is linear in a part's price and the busbw does not see it."""
    out = tmp_path / "d.json"
    result = cli("design", "--sku", "nl72x2", "--vary", "parts.aec.price_usd=0,50,100",
                 "--objective", "busbw:allreduce:1M", "-o", str(out))  # fmt: skip
    assert result.code == 0, result.err
    free, some, more = _json(out)["rows"]
    assert some["capex_usd"] - free["capex_usd"] == pytest.approx(more["capex_usd"] - some["capex_usd"])
    assert some["capex_usd"] > free["capex_usd"] and free["busbw_gbps"] == more["busbw_gbps"]


def test_a_bad_parts_file_is_refused_before_any_point(cli, tmp_path):
    parts = tmp_path / "parts.yaml"
    parts.write_text("parts: {aec: {price_usd: x}}\n")
    result = cli(*BASE, "--parts", str(parts), "-o", str(tmp_path / "d.csv"))
    assert result.code == 2 and result.out == "" and "parts.aec.price_usd" in result.err
    assert not (tmp_path / "d.csv").exists()


def test_routings_are_systems_and_a_failure_applies_to_every_point(cli, tmp_path):
    out, healthy = tmp_path / "d.json", tmp_path / "h.json"
    common = ("design", "--sku", "hgx-h100", "--routing", "ecmp", "--routing", "single", "--runtime", "ideal",
              "--vary", "efficiency.default=0.8,0.9", "--objective", "busbw:allreduce:16M")  # fmt: skip
    assert cli(*common, "-o", str(healthy)).code == 0
    result = cli(*common, "--fail", "link:r0.n0.0,r0.nvlink.sw0", "-o", str(out))
    assert result.code == 0, result.err
    rows, before = _json(out)["rows"], _json(healthy)["rows"]
    assert [r["system"] for r in rows] == ["hgx-h100 [routing.policy=ecmp]"] * 2 + [
        "hgx-h100 [routing.policy=single]"
    ] * 2
    for r, h in zip(rows, before, strict=True):
        # the failed part is still bought; the survivors are no faster
        assert r["capex_usd"] == h["capex_usd"] and r["busbw_gbps"] <= h["busbw_gbps"]
    assert any(r["busbw_gbps"] < h["busbw_gbps"] for r, h in zip(rows, before, strict=True))


@pytest.mark.parametrize(
    ("options", "line"),
    [
        (("--dtype", "int3"), "error: unknown --dtype 'int3'"),
        (("--objective", "busbw:allreduce:0"), "error: --objective 'busbw:allreduce:0': expected a size"),
        (("--vary", "efficency.default=0.8,0.9"), "error: --vary efficency.default: no section 'efficency'"),
        (
            ("--sku", "nl72x2", "--vary", "switched.cross_rack.lanes=8,16"),
            "error: on trn2-nl16: --vary switched.cross_rack.lanes: no section 'switched'",
        ),
    ],
)
def test_the_inputs_mistakes_are_named_as_such_before_any_point_runs(cli, options, line):
    """Not 'no point is feasible', nor the --set a user never gave: the option, and the system when
    several are varied."""
    result = cli("design", "--sku", "nl16", *options)
    assert result.code == 2 and result.out == ""
    assert result.err.startswith(line) and result.err.count("\n") == 1, result.err
