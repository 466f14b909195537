"""Links between the documentation's pages resolve: the page exists and has the anchor. (`make docs`
checks the same with MkDocs' own validation; this runs in `make test`, without the docs extra.)"""

import re

import pytest

from tests.docs.pages import DOCS, PAGES, README, name


def _slug(heading: str) -> str:
    """The anchor Python-Markdown's toc extension gives a heading."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m[1] or "", heading).lower()
    text = re.sub(r"[^\w\s-]", "", text)
    return re.sub(r"[-\s]+", "-", text).strip("-")


def anchors(page) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    found = set()
    for heading in re.findall(r"^#{1,6} (.*)$", text, re.M):
        explicit = re.search(r"\{#([^}]+)\}\s*$", heading)
        found.add(explicit[1] if explicit else _slug(heading))
    found |= set(re.findall(r'<a id="([^"]+)"', text))
    return found


def _links(page) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return [link for link in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", link)]


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_every_relative_link_resolves(page):
    broken = []
    for link in _links(page):
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.is_file():
            broken.append(f"{link} (no such file)")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target):
            broken.append(f"{link} (no such anchor)")
    assert not broken, f"{name(page)}: {broken}"


def test_the_anchor_rule_is_mkdocs_s():
    # headings whose anchors other pages use, as MkDocs builds them
    assert "predicting-a-system-from-another-ones-fit" in anchors(DOCS / "validation.md")
    assert "hot-experts" in anchors(DOCS / "guide" / "layouts.md")
    assert "trn3-chip" in anchors(DOCS / "sources.md")
    assert README in PAGES
