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
