"""Load a SKU or a user's topology file: validate, build, check the hardware, check connectivity."""

from pathlib import Path

from trnsim.topology.graph import Topology


def load_topology(
    sku: str | None = None,
    topology: Path | None = None,
    overrides: list[str] = (),
    keep_largest: bool = False,
) -> Topology:
    """Load, validate, build and hardware-check a SKU (or a user's YAML file).

    A file whose chips host several ranks gives a topology whose endpoints are the ranks
    (:func:`trnsim.topology.builders.expand_ranks`).

    Parameters
    ----------
    sku : str, optional
        Catalog name or alias.
    topology : Path, optional
        A user's topology file in the catalog schema.
    overrides : list of str
        ``KEY=VALUE`` what-if edits (see :mod:`trnsim.spec.overrides`); ``fail=KIND:WHAT`` fails a
        component (:mod:`trnsim.topology.faults`) once the healthy system is built and checked.
    keep_largest : bool
        When failures split the chips, keep the largest part instead of refusing.
    """
    from trnsim.errors import UsageError
    from trnsim.spec.catalog import load_spec
    from trnsim.topology.builders import build, expand_ranks
    from trnsim.topology.faults import apply_faults, ranks_to_chips
    from trnsim.topology.hardware import check_connected, check_efficiency, check_hardware
    from trnsim.topology.size import check_size

    edits = [text for text in overrides if not _is_fault(text)]
    faults = [text.split("=", 1)[1] for text in overrides if _is_fault(text)]
    loaded = load_spec(sku, topology, edits)
    _check_parts(loaded)
    check_size(loaded.spec, loaded.where)
    built = build(loaded.spec)
    built.path, built.overrides = loaded.path, tuple(overrides)
    built.notes = _notes(loaded)
    check_hardware(built)
    check_efficiency(built)
    check_connected(built)
    if not faults:
        return expand_ranks(built)
    healthy = expand_ranks(built)
    if loaded.spec.chip.ranks > 1:  # numbers name ranks, as in every other option
        given, faults = faults, ranks_to_chips(faults, healthy)
        for n, text in enumerate(faults):  # two ranks of one chip fail one chip: say so in their words
            first = faults.index(text)
            if first < n and not text.strip().lower().startswith("lanes"):  # failed lanes add up
                same = (
                    "is given twice"
                    if given[first] == given[n]
                    else f"fails what {given[first]!r} does ({text}: a rank's failure is its chip's)"
                )
                raise UsageError(f"{{fail}} {given[n]!r} {same}: give each failure once")
    degraded = expand_ranks(apply_faults(built, faults, keep_largest))
    degraded.healthy = healthy
    return degraded


def _check_parts(loaded) -> None:
    """Every part the file's ``parts:`` section (or an edit) names is whole once the default parts
    catalog is under it: a new part gives every figure, and a misspelt name is refused here, before
    any work, not when a bill is priced."""
    if not loaded.spec.parts:
        return
    from trnsim.spec.parts_catalog import load_parts

    parts = load_parts().under(loaded.where, dict(loaded.spec.parts))
    for name in loaded.spec.parts:
        parts.get(name)


def _notes(loaded) -> tuple[str, ...]:
    """A file without an ``efficiency`` section runs every link at its raw rate: an upper bound that
    no protocol reaches, which a first file reaches by omission (the catalog's files all set one)."""
    document = loaded.document if isinstance(loaded.document, dict) else {}
    if "efficiency" in document:
        return ()
    return (
        f"{loaded.where}: no efficiency section, so every link runs at its raw rate (an upper bound; "
        "set efficiency.default to the payload share, e.g. 0.9 for PCIe-class links)",
    )


def _is_fault(text: str) -> bool:
    from trnsim.topology.faults import FAIL_KEY

    return text.split("=", 1)[0].strip().lower() == FAIL_KEY
