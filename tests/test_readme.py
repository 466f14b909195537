"""The README's collective tables are what the command line prints today."""

from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
# (text just before the table, the command that prints it)
TABLES = [
    ("`trnsim collective allreduce --sku nl72x2 -b 1K -e 1G -f 32` (the default sweep", "-b 1K -e 1G -f 32"),
    (
        "`trnsim collective allreduce --sku nl72x2 --sizes 1M,32M,1G --explain`:",
        "--sizes 1M,32M,1G --explain",
    ),
    ("`--algo all` puts every applicable algorithm side by side", "--algo all --sizes 64K,1M,16M,1G"),
    (
        "time, while `multidim` gives the z axis only its share of the bytes:",
        "--algo all --sizes 64K,1M,16M,1G",
    ),
    ("All-to-all on the Trn2 3D torus", "--sizes 16K,256K,1M,16M"),
]
COMMANDS = [
    ["collective", "allreduce", "--sku", "nl72x2"],
    ["collective", "allreduce", "--sku", "nl72x2"],
    ["collective", "allreduce", "--sku", "nl16"],
    ["collective", "allreduce", "--sku", "nl64"],
    ["collective", "alltoall", "--sku", "nl64"],
]


def _block_after(text: str, anchor: str) -> str:
    """The markdown table (and its ``\\#`` footer lines) that follows ``anchor``."""
    start = text.index("\n| size (B)", text.index(anchor)) + 1
    lines = text[start:].split("\n")
    i = 0
    while i < len(lines) and (
        lines[i].startswith(("|", "\\#"))
        or (lines[i] == "" and i + 1 < len(lines) and lines[i + 1].startswith("\\#"))
    ):
        i += 1
    return "\n".join(lines[:i]).strip()


@pytest.mark.parametrize(("index"), range(len(TABLES)))
def test_readme_tables_match_the_cli(cli, index):
    anchor, options = TABLES[index]
    result = cli(*COMMANDS[index], *options.split(), "--format", "markdown")
    assert result.code == 0
    printed = "\n".join(line for line in result.out.splitlines() if not line.startswith("**")).strip()
    assert _block_after(README.read_text(encoding="utf-8"), anchor) == printed


def test_readme_layout_table_matches_the_cli(cli):
    command = "layout --sku nl72x2 --ep 72 --tp 2 --size ep=64M,tp=16M --compare-mappings"
    text = README.read_text(encoding="utf-8")
    anchor = text.index("`trnsim layout --sku nl72x2 --ep 72 --tp 2 --size")  # the README wraps the rest
    start = text.index("\n| order", anchor) + 1
    table = text[start : text.index("\n\n", start)].strip()
    result = cli(*command.split(), "--format", "markdown")
    assert result.code == 0, result.err
    printed = [line for line in result.out.splitlines() if line.startswith("|")]
    assert table.splitlines() == printed


def test_readme_faults_table_matches_the_cli(cli):
    command = "faults nl64 trn2-nl256-concept nl32x2 nl72x2 --op allreduce --domains 100"
    text = README.read_text(encoding="utf-8")
    anchor = text.index("`trnsim faults nl64 trn2-nl256-concept nl32x2 nl72x2")
    start = text.index("\n| system", anchor) + 1
    table = text[start : text.index("\n\n", start)].strip()
    result = cli(*command.split(), "--format", "markdown")
    assert result.code == 0, result.err
    printed = result.out.split("**side by side**")[1]
    assert table.splitlines() == [line for line in printed.splitlines() if line.startswith("|")]


# Every `trnsim ...` command line the README shows, fenced or inline, runs and exits as documented.
def _command_lines(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """(kind, lines): each fenced block's command lines (run in order, in one folder), and each
    inline code span that starts with ``trnsim``."""
    import re

    found = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        lines, current = [], None
        for line in block.split("\n"):
            if current is not None:
                current += " " + line.strip()
            elif line.strip().startswith("trnsim "):
                current = line.strip()
            if current is not None and not current.endswith("\\"):
                lines.append(current)
                current = None
            elif current is not None:
                current = current[:-1].rstrip()
        if lines:
            found.append(("fenced", tuple(lines)))
    inline = re.sub(r"```.*?```", "", text, flags=re.S)
    found += [("inline", (" ".join(span.split()),)) for span in re.findall(r"`(trnsim [^`]*)`", inline)]
    return found


# Lines that are not run, each with why. A placeholder (SKU, FILE, OP, ...) or a bare command name
# cannot run as written; a table the tests above compare with the CLI is run there already.
CHECKED_ABOVE = "its table is compared with the CLI by a test above"
SKIPPED = {
    "trnsim topo ...": "names the command group",
    "trnsim topo show": "names the command",
    "trnsim layout": "names the command",
    "trnsim cluster": "names the command group",
    "trnsim collective OP --sku NAME": "placeholders OP and NAME",
    "trnsim topo path --topology my.yaml 0 5": "my.yaml stands for the reader's own file",
    "trnsim topo show SKU": "placeholder SKU",
    "trnsim topo export SKU --format graphml|json|dot": "placeholders SKU and a choice of formats",
    "trnsim topo export SKU --format astra-sim": "placeholder SKU",
    "trnsim topo validate FILE...": "placeholder FILE...",
    "trnsim compare OP --sku A --sku B ...": "placeholders OP, A, B",
    "trnsim sweep [--sku ...] [--op ...] [--algo ...] [sizes] -o results.csv|results.json [--jobs N]": (
        "a synopsis of optional parts"
    ),
    "trnsim plot OP --sku A --sku B ... -o curve.png|svg": "placeholders OP, A, B and a choice of files",
    "trnsim report OP VARIANTS... -o report.html": "placeholders OP and VARIANTS",
    "trnsim collective alltoall --sku nl72x2 --skew F:4 --sizes 256M": "F stands for the table's imbalances",
    "trnsim collective allreduce --sku nl72x2 --sizes 1G --fail ...": "... stands for the table's failures",
    "trnsim faults SKU [SKU...]": "placeholder SKU",
    "trnsim calibrate RUN --sku SKU [--group G] [--set ...]": "placeholders RUN, SKU, G",
    "trnsim plot ... --measured RUN": "placeholder RUN",
    "trnsim collective allreduce --sku nl72x2 -b 1K -e 1G -f 32": CHECKED_ABOVE,
    "trnsim collective allreduce --sku nl72x2 --sizes 1M,32M,1G --explain": CHECKED_ABOVE,
    "trnsim collective allreduce --sku nl16 --algo all --sizes 64K,1M,16M,1G": CHECKED_ABOVE,
    "trnsim collective allreduce --sku nl64 --algo all --sizes 64K,1M,16M,1G": CHECKED_ABOVE,
    "trnsim collective alltoall --sku nl64 --sizes 16K,256K,1M,16M": CHECKED_ABOVE,
    "trnsim layout --sku nl72x2 --ep 72 --tp 2 --size ep=64M,tp=16M --compare-mappings": CHECKED_ABOVE,
    "trnsim faults nl64 trn2-nl256-concept nl32x2 nl72x2 --op allreduce --domains 100": CHECKED_ABOVE,
}
LINES = [
    entry
    for entry in dict.fromkeys(_command_lines(README.read_text(encoding="utf-8")))
    if not (entry[0] == "inline" and entry[1][0] in SKIPPED)
]


def test_every_skip_is_a_readme_line():
    shown = {
        lines[0] for kind, lines in _command_lines(README.read_text(encoding="utf-8")) if kind == "inline"
    }
    assert set(SKIPPED) <= shown, sorted(set(SKIPPED) - shown)  # no stale entry


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A folder like the checkout (its examples and topologies at hand, an empty docs/), where the
    README's output files land."""
    root = README.parent
    for name in ("examples", "topologies", "benchmarks"):
        (tmp_path / name).symlink_to(root / name)
    (tmp_path / "docs").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(("kind", "lines"), LINES, ids=[" && ".join(lines)[:90] for _, lines in LINES])
def test_every_readme_command_line_runs(cli, checkout, kind, lines):
    import re
    import shlex

    for line in lines:
        documented = re.search(r"#\s*exit (\d)", line)
        args = shlex.split(line, comments=True)
        assert args[0] == "trnsim"
        result = cli(*args[1:])
        expected = int(documented[1]) if documented else 0
        assert result.code == expected, (line, result.err[-500:])


def test_readme_sweep_row_count_is_the_catalog_s():
    # the rows a default sweep writes: every catalog system x the four ops x 8 B..1 GiB (factor 2),
    # less the sizes nccl-tests would align to nothing on that many ranks
    import re

    from tests.conftest import CATALOG
    from trnsim.collectives.ops import OPS, dtype_size
    from trnsim.topology import load_topology
    from trnsim.units import size_sweep

    sizes = size_sweep(8, 1 << 30, 2)
    rows = 0
    for path in CATALOG:
        ranks = load_topology(path.stem).n_ranks
        rows += sum(
            1 for op in OPS.values() for size in sizes if op.align(size, ranks, dtype_size("float"))[0]
        )
    claim = re.search(r"8 B\.\.1 GiB: ([\d,]+) rows", README.read_text(encoding="utf-8"))
    assert claim and int(claim[1].replace(",", "")) == rows


def test_readme_says_which_commands_take_the_what_ifs():
    # "What-ifs on every command": every command that models a system takes the four, with the
    # exceptions the paragraph names; the parser is the truth
    import typer

    from trnsim.cli.app import _register_collective, app

    text = " ".join(README.read_text(encoding="utf-8").split())
    assert (
        "all but `topo list`, `topo validate` and `collective algorithms`, except that `cluster fabric` "
        "(which only counts switches) takes `--set` alone, `topo draw` `--set` and `--fail`, and "
        "`calibrate` no `--calibration`" in text
    )
    every = {"--set", "--fail", "--routing", "--calibration"}
    expected = {
        "topo list": set(),
        "topo validate": set(),
        "collective algorithms": set(),
        "cluster fabric": {"--set"},
        "topo draw": {"--set", "--fail"},
        "calibrate": every - {"--calibration"},
    }
    _register_collective()

    def walk(command, path):
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                yield from walk(sub, [*path, name])
        else:
            names = {name for param in command.params for name in getattr(param, "opts", [])}
            yield " ".join(path), names & every

    for path, taken in walk(typer.main.get_command(app), []):
        assert taken == expected.get(path, every), path


def test_readme_spares_claims_are_what_faults_measures(cli):
    """The Spares bullet: which failures the spare lanes hide, with the losses `faults` measures."""
    import json
    import re

    text = " ".join(README.read_text(encoding="utf-8").split())
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
    fail = cli("collective", "allreduce", "--sku", "nl72x2", "--sizes", "1G", "--fail", "switch:r0.n0.sw0",
               "--format", "json")  # fmt: skip
    healthy = measured[("trn3-nl72x2-gen1", "switch node")]["busbw_before_gbps"]
    after = json.loads(fail.out)["rows"][0]["busbw_gbps"]
    assert f"{after:.2f} GB/s against {healthy:.2f}" in bullet
