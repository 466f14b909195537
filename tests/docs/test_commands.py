"""Every `trnsim ...` command line the README and the documentation pages show, fenced or inline,
runs and exits as documented (0, or the `# exit N` its line says)."""

import re
import shlex

import pytest

from tests.docs.pages import OUTPUT, PAGES, ROOT, command_lines, exit_code, name

# Lines that are not run, each with why. A placeholder (SKU, FILE, OP, ...) or a bare command name
# cannot run as written; a line whose output a page pastes is run by tests/docs/test_outputs.py.
SKIPPED = {
    "trnsim topo ...": "names the command group",
    "trnsim layout": "names the command",
    "trnsim faults": "names the command",
    "trnsim design": "names the command",
    "trnsim calibrate": "names the command",
    "trnsim measure-plan": "names the command",
    "trnsim cluster": "names the command group",
    "trnsim collective OP --sku NAME": "placeholders OP and NAME",
    "trnsim topo path --topology my.yaml 0 5": "my.yaml stands for the reader's own file",
    "trnsim topo export SKU --format graphml|json|dot": "placeholders SKU and a choice of formats",
    "trnsim topo export SKU --format astra-sim": "placeholder SKU",
    "trnsim topo validate FILE...": "placeholder FILE...",
    "trnsim topo validate FILE": "placeholder FILE",
    "trnsim topo validate topologies/NAME.yaml": "placeholder NAME",
    "trnsim compare OP --sku A --sku B ...": "placeholders OP, A, B",
    "trnsim sweep [--sku ...] [--op ...] [--algo ...] [sizes] -o results.csv|results.json [--jobs N]": (
        "a synopsis of optional parts"
    ),
    "trnsim plot OP --sku A --sku B ... -o curve.png|svg": "placeholders OP, A, B and a choice of files",
    "trnsim sweep --sizes 1M,1G -o results.csv --scheduler tcp://10.0.0.5:8786": "a Dask scheduler of the reader's",
    "trnsim report OP VARIANTS... -o report.html": "placeholders OP and VARIANTS",
    "trnsim collective alltoall --sku nl72x2 --skew F:4 --sizes 256M": "F stands for the table's imbalances",
    "trnsim collective allreduce --sku nl72x2 --sizes 1G --fail ...": "... stands for the table's failures",
    "trnsim faults SKU [SKU...]": "placeholder SKU",
    "trnsim calibrate RUN --sku SKU [--group G] [--set ...]": "placeholders RUN, SKU, G",
    "trnsim plot ... --measured RUN": "placeholder RUN",
}


def _pasted() -> set[str]:
    """The commands whose output a page pastes, also without the `--format markdown` that the page
    adds to show a table (the text names the command as a user would type it)."""
    found = set()
    for page in PAGES:
        for _, command, _ in OUTPUT.findall(page.read_text(encoding="utf-8")):
            line = " ".join(shlex.split(command, comments=True))
            found |= {line, line.replace(" --format markdown", "")}
    return found


def _lines() -> list[tuple[str, str, tuple[str, ...]]]:
    pasted = _pasted()
    found: dict[tuple[str, tuple[str, ...]], str] = {}
    for page in PAGES:
        for kind, lines in command_lines(page.read_text(encoding="utf-8")):
            if kind == "inline" and (lines[0] in SKIPPED or lines[0] in pasted):
                continue
            found.setdefault((kind, lines), name(page))
    return [(page, kind, lines) for (kind, lines), page in found.items()]


LINES = _lines()


def test_every_skip_is_a_line_of_a_page():
    shown = {
        lines[0] for page in PAGES for kind, lines in command_lines(page.read_text()) if kind == "inline"
    }
    assert set(SKIPPED) <= shown, sorted(set(SKIPPED) - shown)  # no stale entry


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A folder like the checkout (its examples, topologies and benchmarks at hand, an empty docs/),
    where the commands' output files land."""
    for folder in ("examples", "topologies", "benchmarks"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    (tmp_path / "docs").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("page", "kind", "lines"), LINES, ids=[f"{page}: {' && '.join(lines)}"[:100] for page, _, lines in LINES]
)
def test_every_command_line_runs(cli, checkout, page, kind, lines):
    for line in lines:
        args = shlex.split(line, comments=True)
        assert args[0] == "trnsim"
        result = cli(*args[1:])
        assert result.code == exit_code(line), (page, line, result.err[-500:])


def test_a_documented_exit_code_is_read():
    assert exit_code("trnsim compare ... --max-regression 5%   # exit 1: REGRESSION") == 1
    assert exit_code("trnsim topo list") == 0
    assert re.search(r"#\s*exit 1", " ".join(lines for _, _, group in LINES for lines in group))
