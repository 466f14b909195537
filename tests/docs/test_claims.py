"""Tables and figures the documentation states in prose, or assembles from several runs, against
what the tool computes today (single outputs pasted whole are checked by test_outputs.py)."""

import json
import re

from tests.docs.pages import DOCS

ROOT = DOCS.parent

FAULTS = DOCS / "guide" / "faults.md"
COMPARE = DOCS / "guide" / "compare.md"
CLUSTERS = DOCS / "guide" / "clusters.md"
OUTPUT = DOCS / "reference" / "output.md"


def _flat(path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())


def test_the_faults_side_by_side_table_is_what_faults_prints(cli):
    command = "faults nl64 trn2-nl256-concept nl32x2 nl72x2 --op allreduce --domains 100"
    text = FAULTS.read_text(encoding="utf-8")
    anchor = text.index("`trnsim faults nl64 trn2-nl256-concept nl32x2 nl72x2")
    start = text.index("\n| system", anchor) + 1
    table = text[start : text.index("\n\n", start)].strip()
    result = cli(*command.split(), "--format", "markdown")
    assert result.code == 0, result.err
    printed = result.out.split("**side by side**")[1]
    assert table.splitlines() == [line for line in printed.splitlines() if line.startswith("|")]


def test_the_spares_claims_are_what_faults_measures(cli):
    """The Spares bullet: which failures the spare lanes hide, with the losses `faults` measures."""
    text = _flat(FAULTS)
    bullet = text[text.index("**Spares.**") :].split(" - ")[0]
    claims = {
        ("trn3-nl72x2-gen1", "switch plane"): "a plane switch or a switch tray costs it",
        ("trn3-nl72x2-gen1", "switch tray"): "a plane switch or a switch tray costs it",
        ("trn3-nl32x2-gen1", "switch plane"): "there a plane switch or a switch tray costs",
        ("trn3-nl32x2-gen1", "switch tray"): "there a plane switch or a switch tray costs",
        ("trn3-nl72x2-gen1", "switch node"): "(`switch node`,",
    }
    measured = {}
    plane_and_tray = ["switch plane", "switch tray"]
    for sku, kinds in (("nl72x2", [*plane_and_tray, "switch node"]), ("nl32x2", plane_and_tray)):
        argv = ["faults", sku, "--op", "allreduce", "--format", "json"]
        result = cli(*argv, *[arg for kind in kinds for arg in ("--kind", kind)])
        assert result.code == 0, result.err
        for system in json.loads(result.out)["systems"]:
            for row in system["classes"]:
                measured[(system["system"], row["kind"])] = row
    for key, phrase in claims.items():
        stated = re.search(re.escape(phrase) + r" ([\d.]+)%", bullet)
        assert stated, phrase
        assert stated[1] == f"{100 * measured[key]['worst_loss']:.1f}", key
    fail = cli(
        "collective",
        "allreduce",
        "--sku",
        "nl72x2",
        "--sizes",
        "1G",
        "--fail",
        "switch:r0.n0.sw0",
        "--runtime",
        "ideal",
        "--format",
        "json",
    )  # fmt: skip (a fault study is the ideal's)
    healthy = measured[("trn3-nl72x2-gen1", "switch node")]["busbw_before_gbps"]
    after = json.loads(fail.out)["rows"][0]["busbw_gbps"]
    assert f"{after:.2f} GB/s against {healthy:.2f}" in bullet


def test_the_sweep_row_count_is_the_catalog_s():
    # the rows a default sweep writes: every catalog system x the four ops x 8 B..1 GiB (factor 2),
    # less the sizes nccl-tests would align to nothing on that many ranks
    from tests.conftest import CATALOG
    from trnsim.collectives.ops import BASIC, dtype_size, get_op
    from trnsim.topology import load_topology
    from trnsim.units import size_sweep

    sizes = size_sweep(8, 1 << 30, 2)
    rows = 0
    for path in CATALOG:
        ranks = load_topology(path.stem).n_ranks
        rows += sum(
            1 for op in map(get_op, BASIC) for size in sizes if op.align(size, ranks, dtype_size("float"))[0]
        )
    claim = re.search(r"8 B\.\.1 GiB: ([\d,]+) rows", COMPARE.read_text(encoding="utf-8"))
    assert claim and int(claim[1].replace(",", "")) == rows


def test_the_page_says_which_commands_take_the_what_ifs():
    # "What-ifs on every command": every command that models a system takes the four, with the
    # exceptions the paragraph names; the parser is the truth

    from trnsim.cli.app import command_tree

    assert (
        "all but `topo list`, `topo validate`, `topo new`, `collective algorithms`, `validate` and the `schedule` "
        "commands (which read a file, not a system), except that "
        "`cluster fabric` and `topo cost` "
        "(which only count parts) take `--set` alone, `topo draw` `--set` and `--fail`, and "
        "`calibrate` no `--calibration`" in _flat(OUTPUT)
    )
    every = {"--set", "--fail", "--routing", "--calibration"}
    expected = {
        "topo list": set(),
        "topo validate": set(),
        "topo new": set(),
        "collective algorithms": set(),
        "validate": set(),
        "schedule check": set(),
        "schedule formats": set(),
        "cluster fabric": {"--set"},
        "topo cost": {"--set"},
        "topo draw": {"--set", "--fail"},
        "calibrate": every - {"--calibration"},
    }

    def walk(command, path):
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                yield from walk(sub, [*path, name])
        else:
            names = {name for param in command.params for name in getattr(param, "opts", [])}
            yield " ".join(path), names & every

    for path, taken in walk(command_tree(), []):
        assert taken == expected.get(path, every), path


def test_the_cluster_table_is_current(cli):
    text = CLUSTERS.read_text(encoding="utf-8")
    table = text[text.index("| domains | chips | layers |") :].split("\n\n")[0]
    rows = {
        line.split("|")[1].strip(): [float(cell.replace(",", "")) for cell in line.split("|")[4:8]]
        for line in table.splitlines()[2:]
    }
    for label, sku, domains in (("2 x Trn2 NL64", "nl64", 2), ("16 x NL72x2", "nl72x2", 16)):
        result = cli("cluster", "collective", "allreduce", "--sku", sku, "--domains", str(domains),
                     "--runtime", "ideal", "--sizes", "1M,64M,1G,16G", "--format", "json")  # fmt: skip
        got = [round(row["busbw_gbps"], 1) for row in json.loads(result.out)["rows"]]
        assert got == rows[label], label
    assert re.search(r"34,376 switches", text)


def test_the_limits_table_lists_every_limit_with_its_default():
    from trnsim import limits
    from trnsim.units import parse_size

    text = OUTPUT.read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| `(TRNSIM_MAX_\w+)` \|.*\| ([0-9][0-9,]*(?: [KMG]iB)?) \|$", text, re.M))
    declared = {v.env: v.default for v in vars(limits).values() if isinstance(v, limits.Limit)}
    assert table.keys() == declared.keys()
    for env, default in declared.items():
        shown = table[env].replace(",", "")
        assert (parse_size(shown.replace(" ", "")) if "iB" in shown else int(shown)) == default, env


def test_the_runtime_section_states_nccls_nvl72_figures(cli):
    text = _flat(DOCS / "guide" / "collective.md")
    result = cli(
        "collective",
        "allreduce",
        "--sku",
        "nvl72",
        "--runtime",
        "nccl",
        "--sizes",
        "8,1G",
        "--format",
        "json",
    )
    assert result.code == 0, result.err
    small, large = json.loads(result.out)["rows"]
    claim = (
        f"at 1 GiB it reaches about {large['busbw_gbps']:,.0f} GB/s busbw where the ideal NVLS schedule "
        f"reaches {large['ideal_busbw_gbps']:,.0f}"
    )
    assert claim in text
    assert large["algorithm"] == small["algorithm"] == "nvls/simple"
    assert f"NCCL's own latencies ({small['time_us']:.0f} us for NVLS)" in text


def test_the_schedule_page_quotes_the_example_file_as_it_is():
    page = (ROOT / "docs" / "schedules.md").read_text()
    quoted = page.split("```xml\n", 1)[1].split("```", 1)[0].splitlines()
    lines = (ROOT / "examples" / "schedules" / "ring4.xml").read_text().splitlines()
    assert quoted == lines[: len(quoted)]
