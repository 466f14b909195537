"""The catalog's folder and its systems' names: which file a SKU name or alias is.

Every command that names a system by ``--sku`` starts here, so this module imports little: reading a
file's names takes its ``name:`` and ``aliases:`` lines, and YAML's parser only for a value that is
not a plain word or a flow list of plain words (:func:`_value`).
"""

import os
import re
from functools import cache
from pathlib import Path

from trnsim.errors import ConfigError, FileAsSkuError, TrnsimError, UsageError


def catalog_dir() -> Path:
    """The folder of built-in topology files.

    The catalog (``topologies/`` in the source tree) ships as the package data ``trnsim.topologies``,
    so a wheel, a normal and an editable install all find it; a source tree imported as is uses its
    ``topologies/``. ``$TRNSIM_CATALOG`` overrides both.

    Returns
    -------
    Path
        A directory holding the catalog's ``*.yaml`` files.

    Raises
    ------
    ConfigError
        If trnsim is imported from a zip archive, where the catalog is no directory.
    """
    override = os.environ.get("TRNSIM_CATALOG")
    if override:
        if not Path(override).is_dir():
            raise UsageError(
                f"environment variable TRNSIM_CATALOG={override!r}: expected a folder of topology files"
            )
        return Path(override)
    found = _package_folder()
    if found is not None:
        return found
    # imported here so that commands that never read the catalog do not pay for it
    from importlib.resources import files

    try:
        folder = files("trnsim.topologies")
    except ModuleNotFoundError:
        # a source tree put on sys.path as is (PYTHONPATH, a compat-mode editable install) has no
        # such package: the catalog is the checkout's topologies/
        return Path(__file__).resolve().parent.parent / "topologies"
    if not isinstance(folder, Path):
        # pip always unpacks a package; only a zipped import gets here, and as_file cannot
        # extract a folder before Python 3.12
        raise ConfigError(
            f"the built-in catalog is inside an archive ({folder}); "
            "set TRNSIM_CATALOG to a folder of topology files"
        )
    return folder


def _package_folder() -> Path | None:
    """The folder of the package ``trnsim.topologies`` when the import system names exactly one
    that exists (every unpacked install); None to ask :mod:`importlib.resources` (which costs an
    import of a few milliseconds on every run)."""
    from importlib.util import find_spec

    try:
        spec = find_spec("trnsim.topologies")
    except (ImportError, ValueError):
        return None
    places = list(spec.submodule_search_locations or ()) if spec is not None else []
    if len(places) != 1 or not os.path.isdir(places[0]):
        return None
    return Path(places[0])


# a plain scalar that YAML (trnsim's core schema, trnsim.yamlio) reads as the same text: a word that
# starts with a letter and is no boolean or null
_WORD = r"[A-Za-z][A-Za-z0-9._+-]*"
_PLAIN = re.compile(rf" *({_WORD}) *")  # spaces only: YAML refuses a tab in some places
_FLOW_LIST = re.compile(rf" *\[ *((?:{_WORD} *, *)*(?:{_WORD})?) *\] *")
_NOT_TEXT = {"true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL"}


def _value(text: str, where: str):
    """A ``name:`` or ``aliases:`` line's value as YAML reads it (:func:`trnsim.yamlio.load_text`),
    without the parser for a plain word or a flow list of plain words."""
    word = _PLAIN.fullmatch(text)
    if word and word.group(1) not in _NOT_TEXT:
        return word.group(1)
    listed = _FLOW_LIST.fullmatch(text)
    if listed:
        words = [item.strip() for item in listed.group(1).split(",") if item.strip()]
        if not _NOT_TEXT & set(words):
            return words
    from trnsim.yamlio import load_text

    return load_text(text, where)


def read_document(path: Path) -> dict:
    """Read a topology file safely (see :mod:`trnsim.yamlio`); refuse anything but a mapping."""
    from trnsim.yamlio import load_yaml

    document = load_yaml(path)
    if document is None:
        raise ConfigError(f"{path}: the file is empty; expected a topology (see topologies/ for examples)")
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: (top level): expected a mapping of keys, got {type(document).__name__}")
    return document


_TOP_LEVEL_NAMES = re.compile(r"^(name|aliases):(.*)$", re.M)


def catalog_names(path: Path) -> list[str]:
    """A file's name and aliases, read from its top-level lines (the whole file only if need be).

    Each line goes through the same depth and node bounds as a whole file: a one-line alias bomb in
    ``aliases:`` would otherwise cost minutes and gigabytes on every ``--sku`` lookup.
    """
    from trnsim.yamlio import read_text

    try:
        found = {
            key: _value(value, f"{path}: {key}")
            for key, value in _TOP_LEVEL_NAMES.findall(read_text(path, "topology file"))
        }
    except TrnsimError:
        # a line that is not YAML alone (a flow list over several lines) or breaks a bound: the
        # whole file is read, and refused with its own line numbers if it breaks the bound too
        found = {}
    if not isinstance(found.get("name"), str) or not isinstance(found.get("aliases", []), list):
        document = read_document(path)
        found = {"name": document.get("name", path.stem), "aliases": document.get("aliases", [])}
    return [str(found["name"]), *map(str, found.get("aliases") or [])]


@cache
def _catalog_index(folder: Path) -> dict[str, Path]:
    index: dict[str, Path] = {}
    for path in sorted(folder.glob("*.yaml")):
        for name in catalog_names(path):
            index.setdefault(name.lower(), path)
    return index


def catalog_files() -> list[Path]:
    """Every topology file of the built-in catalog, sorted by name."""
    return sorted(catalog_dir().glob("*.yaml"))


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):  # a name too long for a path, or with a NUL byte: no file
        return False


def find_sku(name: str) -> Path:
    """Resolve a SKU name or alias to its file; an unknown name suggests the closest ones."""
    index = _catalog_index(catalog_dir())
    key = name.strip().lower()
    if key in index:
        return index[key]
    is_file = _is_file(name.strip())
    if is_file or key.endswith((".yaml", ".yml")):
        exists = "" if is_file else " (and no such file exists)"
        raise FileAsSkuError(f"{name!r} is a file path, not a SKU name{exists}: load it as a topology file")
    import difflib

    close = difflib.get_close_matches(key, index, n=4, cutoff=0.5)
    if not close:
        close = [candidate for candidate in index if key in candidate or candidate in key][:4]
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise UsageError(f"unknown SKU {name!r}{hint} (see `trnsim topo list`)")


def system_file(sku: str | None, topology: Path | None) -> Path | None:
    """The file ``sku`` (a catalog name) or ``topology`` (a path) names, or None when they name none
    (neither or both, an unknown SKU: loading it says why)."""
    if (sku is None) == (topology is None):
        return None
    if topology is not None:
        return Path(topology)
    try:
        return find_sku(sku)
    except TrnsimError:
        return None


def system_bytes(path: Path | None) -> bytes | None:
    """A system file's bytes, read as every topology file is (:func:`trnsim.yamlio.read_bytes`), or
    None when it is no file to read (missing, a folder, a pipe, too large: loading it says why). What
    keys the values kept on disk for it (:mod:`trnsim.cache`)."""
    from trnsim.yamlio import read_bytes

    if path is None:
        return None
    try:
        return read_bytes(Path(path), "topology file")
    except (TrnsimError, OSError, ValueError):
        return None
