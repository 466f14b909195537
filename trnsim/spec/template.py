"""Starting topology files: a minimal annotated torus and switched fabric shipped with the package.

A first file written by hand takes trial and error; these are valid as shipped (the tests build
and cost them), say what every key means and which figures are examples, and carry an
``efficiency`` section (a file without one runs every link at its raw rate).

Examples
--------
>>> text = template_text("torus", "my-torus")
>>> text.splitlines()[4].split("#")[0].strip()
'name: "my-torus"'
"""

import json
from importlib import resources

from trnsim.errors import UsageError

KINDS = ("torus", "switched")


def template_text(kind: str, name: str) -> str:
    """The template for ``kind`` (``torus`` or ``switched``) with the system named ``name``.

    Raises
    ------
    UsageError
        For an unknown kind, or a name that is not one line of printable text.
    """
    if kind not in KINDS:
        raise UsageError(f"no template for {kind!r}; expected one of {', '.join(KINDS)}")
    if not name.strip() or not name.isprintable():
        raise UsageError(f"name {name!r}: expected one line of printable text")
    text = resources.files("trnsim.spec.templates").joinpath(f"{kind}.yaml").read_text("utf-8")
    # a JSON string is a YAML scalar that holds any printable text as written
    return text.replace("name: NAME       ", f"name: {json.dumps(name.strip())}", 1)
