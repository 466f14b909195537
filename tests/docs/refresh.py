"""Re-paste every output the README and the pages show, as the commands print them today.

    .venv/bin/python -m tests.docs.refresh            # every page
    .venv/bin/python -m tests.docs.refresh README.md  # one page

Run it after a change that moves a number on purpose, then read the diff (`git diff README.md docs/`):
the text around each block must still say what the new numbers show. It runs each command as the
test does (in a scratch folder like the checkout, 100 columns wide) and keeps a block's code fence.
"""

import io
import os
import shlex
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from tests.docs.pages import OUTPUT, PAGES, ROOT, exit_code, printed


def run(command: str) -> tuple[int, str, str]:
    """Run ``trnsim ...`` in-process; its exit code, stdout and stderr."""
    from trnsim.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main(shlex.split(command, comments=True)[1:])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    return code, out.getvalue(), err.getvalue()


def refresh(page: Path) -> int:
    """Re-paste ``page``'s blocks; the number that changed."""
    text = page.read_text(encoding="utf-8")
    changed = 0

    def paste(match) -> str:
        nonlocal changed
        stream, command, pasted = match.group(1), match.group(2), match.group(3)
        code, out, err = run(command)
        if code != exit_code(command):
            raise SystemExit(f"{page.name}: `{command}` exited {code}: {err.strip()[-300:]}")
        new = printed(out if stream == "output" else err)
        lines = pasted.strip("\n").split("\n")
        if lines and lines[0].startswith("```") and lines[-1] == "```":
            new = f"{lines[0]}\n{new}\n```"
        if new != pasted.strip("\n"):
            changed += 1
        return f"<!-- {stream}: {command} -->\n{new}\n<!-- end output -->"

    updated = OUTPUT.sub(paste, text)
    if updated != text:
        page.write_text(updated, encoding="utf-8")
    return changed


def main(names: list[str]) -> None:
    pages = [ROOT / name for name in names] if names else PAGES
    with tempfile.TemporaryDirectory() as scratch:
        for name in ("examples", "topologies", "benchmarks"):
            (Path(scratch) / name).symlink_to(ROOT / name)
        (Path(scratch) / "docs").mkdir()
        os.chdir(scratch)
        os.environ["COLUMNS"] = "100"
        for page in pages:
            changed = refresh(page)
            if changed:
                print(f"{page.relative_to(ROOT)}: {changed} output(s) re-pasted")


if __name__ == "__main__":
    main(sys.argv[1:])
