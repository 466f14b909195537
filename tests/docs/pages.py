"""The documentation as the tests read it: the README and every page under docs/, the outputs pasted
into them and the command lines they show."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]

# A pasted output sits between two comments (invisible on the site and on GitHub):
#     <!-- output: trnsim topo hops nl32x2 --format markdown -->
#     ...what that command prints on stdout...
#     <!-- end output -->
# `stderr:` instead of `output:` pastes what it prints on stderr; `# exit N` after the command says
# it exits N (0 otherwise).
OUTPUT = re.compile(r"<!-- (output|stderr): (trnsim [^\n]*?) -->\n(.*?)\n?<!-- end output -->", re.S)


def name(page: Path) -> str:
    return str(page.relative_to(ROOT))


def outputs() -> list[tuple[str, str, str, str]]:
    """(page, stream, command, pasted text) of every pasted output; stream is output or stderr."""
    return [
        (name(page), stream, command, pasted)
        for page in PAGES
        for stream, command, pasted in OUTPUT.findall(page.read_text(encoding="utf-8"))
    ]


def exit_code(command: str) -> int:
    """The exit code a command line documents with ``# exit N`` (0 when it says none)."""
    documented = re.search(r"#\s*exit (\d)", command)
    return int(documented[1]) if documented else 0


def unfence(text: str) -> str:
    """The text of a pasted block, without the code fence around it if it has one."""
    text = text.strip("\n")
    lines = text.split("\n")
    if lines and lines[0].startswith("```") and lines[-1] == "```":
        lines = lines[1:-1]
    return "\n".join(lines)


def printed(out: str) -> str:
    """What a command printed, as a page shows it: catalog paths relative to the checkout (they are
    absolute, and differ between checkouts), no trailing spaces."""
    out = out.replace(f"{ROOT}/", "")
    return "\n".join(line.rstrip() for line in out.strip("\n").split("\n"))


def command_lines(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """(kind, lines): each fenced block's command lines (run in order, in one folder), and each
    inline code span that starts with ``trnsim``."""
    found = []
    # a pasted output is what a command printed (tests/docs/test_outputs.py checks it), not commands
    text = re.sub(r"<!-- output:.*?<!-- end output -->", "", text, flags=re.S)
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
    inline = re.sub(r"<!--.*?-->", "", inline, flags=re.S)
    found += [("inline", (" ".join(span.split()),)) for span in re.findall(r"`(trnsim [^`]*)`", inline)]
    return found
