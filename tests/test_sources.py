"""The provenance trail ends in the repository: every citation of docs/sources.md resolves to an
anchor there, every anchor names a public document, and nothing cites the notes users do not have."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "docs" / "sources.md"
CITATION = re.compile(r"docs/sources\.md#([^\s\"'`)\],;:]*)")
# the reference notes and seed documents the catalog was first built from (not in the repository)
FORBIDDEN = re.compile("|".join(["FACTS" + r"\.md", "MEASUREMENTS" + r"\.md", r"\bseeds? 0\d"]), re.I)


def _anchors() -> set[str]:
    return set(re.findall(r'<a id="([a-z0-9-]+)"></a>', SOURCES.read_text(encoding="utf-8")))


def _tracked() -> list[Path]:
    """The repository's text files (git's list when there is one, else a walk)."""
    try:
        names = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=30
        ).stdout.split(b"\0")
        files = [ROOT / name.decode() for name in names if name]
    except (OSError, subprocess.SubprocessError):
        files = [path for path in ROOT.rglob("*") if ".git" not in path.parts and ".venv" not in path.parts]
    suffixes = {".py", ".md", ".yaml", ".yml", ".sh", ".txt", ".toml", ".json", ".cfg"}
    return [path for path in files if path.suffix in suffixes and path.is_file()]


def _cited() -> list[Path]:
    return [
        *sorted((ROOT / "topologies").glob("*.yaml")),
        *sorted((ROOT / "topologies" / "parts").glob("*.yaml")),
        ROOT / "README.md",
        *sorted((ROOT / "trnsim").rglob("*.py")),
    ]


def test_every_anchor_is_unique_and_every_fact_names_its_documents():
    text = SOURCES.read_text(encoding="utf-8")
    ids = re.findall(r'<a id="([a-z0-9-]+)"></a>', text)
    assert len(ids) == len(set(ids))
    documents = {anchor for anchor in ids if anchor.startswith("doc-")}
    assert documents
    for line in text.split("\n- ")[1:]:  # each bullet
        anchor = re.match(r'<a id="([a-z0-9-]+)"></a>', line)
        if anchor and not anchor[1].startswith("doc-"):
            # a fact links at least one document of the list
            assert set(re.findall(r"\(#(doc-[a-z0-9-]+)\)", line)) & documents, anchor[1]
    for target in re.findall(r"\]\(#([a-z0-9-]+)\)", text):  # links inside the page resolve
        assert target in ids, target


@pytest.mark.parametrize("path", _cited(), ids=lambda path: str(path.relative_to(ROOT)))
def test_every_citation_resolves(path):
    anchors = _anchors()
    text = path.read_text(encoding="utf-8")
    cited = CITATION.findall(text)
    missing = sorted({anchor for anchor in cited if anchor not in anchors})
    assert not missing, f"{path.name} cites anchors docs/sources.md does not have: {missing}"


def test_every_catalog_file_cites_the_page():
    for path in sorted((ROOT / "topologies").glob("*.yaml")):
        assert CITATION.search(path.read_text(encoding="utf-8")), f"{path.name} cites no fact"


def test_no_file_cites_notes_users_do_not_have():
    me = Path(__file__).resolve()
    offenders = []
    for path in _tracked():
        if path.resolve() == me:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if FORBIDDEN.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}")
    assert not offenders, "\n".join(offenders)
