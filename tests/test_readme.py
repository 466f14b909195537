"""The README: short, its set-up commands the Makefile's, its outputs real and its links alive.

Its pasted outputs are checked with every page's by tests/docs/test_outputs.py, its command lines
by tests/docs/test_commands.py; the documentation it links to is checked by tests/docs/.
"""

import re

from tests.docs.pages import OUTPUT, README, ROOT

TEXT = README.read_text(encoding="utf-8")


def test_the_readme_is_short():
    # the rest lives in docs/ (the site): about 250 lines at most
    assert len(TEXT.splitlines()) <= 250


def test_the_two_commands_are_the_makefile_s():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z]+):", makefile, re.M))
    shown = re.findall(r"^make (\w+)", TEXT, re.M)
    assert shown == ["run", "test"]
    assert set(shown) <= targets
    # what the README says `make run` prints is what the target runs
    run = makefile[makefile.index("\nrun:") :].split("\n\n")[0]
    assert "topo list" in run and "topo show nl72x2" in run and "collective allreduce --sku nl72x2" in run
    assert "prints the catalog, the NL72x2 structure and the all-reduce table for `nl72x2`" in TEXT


def test_five_commands_show_their_real_output():
    commands = [command for _, command, _ in OUTPUT.findall(TEXT)]
    assert len(commands) == 5, commands
    assert all(pasted.strip() for _, _, pasted in OUTPUT.findall(TEXT))


def test_every_link_resolves():
    """Relative links (to docs/*.md, so that they work on GitHub and in a checkout) name files that
    exist, and anchors that the target page has (a heading or an explicit id)."""
    links = re.findall(r"\]\(([^)\s]+)\)", TEXT)
    assert any(link.startswith("docs/") for link in links)
    for link in links:
        if re.match(r"[a-z]+://", link):
            continue
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.is_file(), link
        if anchor:
            page = target.read_text(encoding="utf-8")
            headings = {_slug(h) for h in re.findall(r"^#+ (.*?)(?: \{#[^}]*\})?$", page, re.M)}
            ids = set(re.findall(r'id="([^"]+)"|\{#([^}]+)\}', page))
            assert anchor in headings | {i for pair in ids for i in pair if i}, link


def _slug(heading: str) -> str:
    """The anchor MkDocs (Python-Markdown's toc) gives a heading."""
    text = re.sub(r"[`*_]", "", heading).lower()
    text = re.sub(r"[^\w\s-]", "", text)
    return re.sub(r"[-\s]+", "-", text).strip("-")


def test_every_page_of_the_site_is_linked_from_the_readme():
    # the nav's entries ("Title: page.md"), read as text
    pages = set(re.findall(r":\s+([\w/-]+\.md)$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M))
    linked = {link.split("#")[0].removeprefix("docs/") for link in re.findall(r"\]\((docs/[^)\s]+)\)", TEXT)}
    assert pages and pages <= linked, sorted(pages - linked)
