"""The parts catalog's files: the one that ships with trnsim and a user's, read and validated into
:class:`~trnsim.spec.parts.Parts` layers (the layers themselves are :mod:`trnsim.spec.parts`)."""

from pathlib import Path

from trnsim.errors import ConfigError
from trnsim.spec.parts import Parts, PartsFile, PartSpec


def default_parts_file() -> Path:
    """The parts catalog that ships with trnsim, next to the topology catalog (package data
    ``trnsim.topologies``, ``topologies/parts/parts.yaml`` in the source tree)."""
    from trnsim.spec.names import _package_folder

    folder = _package_folder()
    if folder is None:
        folder = Path(__file__).resolve().parent.parent.parent / "topologies"
    return folder / "parts" / "parts.yaml"


def read_parts_file(path: Path | str) -> dict[str, PartSpec]:
    """A parts file's ``parts:`` by name, validated.

    Raises
    ------
    ConfigError
        With one line naming the file, the key path and what was expected.
    """
    from trnsim.spec.catalog import convert_document
    from trnsim.yamlio import load_yaml

    document = load_yaml(Path(path), "parts file")
    if not isinstance(document, dict):
        got = "an empty file" if document is None else type(document).__name__
        raise ConfigError(f"{path}: (top level): expected a mapping with a parts: section, got {got}")
    return convert_document(document, PartsFile, lambda keypath: str(path)).parts


def load_parts(path: Path | str | None = None) -> Parts:
    """The default parts catalog, with a user's parts file on top.

    A topology file's own ``parts:`` section and a run's ``--set parts...`` edits are added by
    :func:`trnsim.studies.cost.bill_of_materials` (between the two, and on top).

    Parameters
    ----------
    path : Path or str, optional
        A YAML file ``parts: {NAME: {price_usd, power_w, per, gbit, source}}``.
    """
    default = default_parts_file()
    parts = Parts(((str(default), read_parts_file(default)),))
    if path is not None:
        parts = parts.over(str(path), read_parts_file(path))
    return parts
