"""The one place that names the library's parameters as the command line's flags.

The library says what was wrong in its own terms: a message names a parameter in braces
(``{alpha_us} must be >= 0``; :class:`trnsim.errors.TrnsimError`). The command line shows each as the
option that sets it (``--alpha-us must be >= 0``): :func:`error_text` for an error's line,
:func:`edits_text` for a run's edits in a header.
"""

from trnsim.errors import FileAsSkuError, TrnsimError

# every parameter of trnsim.errors.PARAMETERS, as the option that sets it
# (tests/cli/test_flags.py checks that each is an option of some command)
FLAGS = {
    "algo": "--algo",
    "alpha_us": "--alpha-us",
    "blast_radius": "--blast-radius",
    "calibration": "--calibration",
    "chips_per_rack": "--chips-per-rack",
    "design": "--design",
    "constraint": "--constraint",
    "counts": "--counts",
    "domains": "--domains",
    "dtype": "--dtype",
    "efa_routing": "--efa-routing",
    "engine": "--engine",
    "experts": "--experts",
    "fabric_tbit": "--fabric-tbit",
    "fail": "--fail",
    "fit": "--fit",
    "fit_sizes": "--fit-sizes",
    "group": "--group",
    "groups": "--groups",
    "hidden": "--hidden",
    "hop_us": "--hop-us",
    "inter_algo": "--inter-algo",
    "jobs": "--jobs",
    "kind": "--kind",
    "layers": "--layers",
    "loss": "--loss",
    "max_chunks": "--max-chunks",
    "min_chunk_bytes": "--min-chunk",
    "nic_gbit_per_chip": "--nic-gbit",
    "nodes": "--nodes",
    "objective": "--objective",
    "overrides": "--set",
    "oversubscription": "--oversubscription",
    "pairs": "--pairs",
    "params": "--params",
    "port_gbit": "--port-gbit",
    "random": "--random",
    "ranks": "--ranks",
    "ranks_per_chip": "--ranks-per-chip",
    "root": "--root",
    "routing": "--routing",
    "runtime": "--runtime",
    "save_baseline": "--save-baseline",
    "scheduler": "--scheduler",
    "search": "--search",
    "size": "--size",
    "skew": "--skew",
    "sku": "--sku",
    "switch_layers": "--switch-layers",
    "tokens": "--tokens",
    "topk": "--topk",
    "topology": "--topology",
    "tor_tbit": "--tor-tbit",
    "tors_per_rack": "--tors-per-rack",
    "traffic": "--traffic",
    "vary": "--vary",
}


def flag(parameter: str) -> str:
    """The option that sets a library parameter (the parameter itself when no option does)."""
    return FLAGS.get(parameter, parameter)


def error_text(error: TrnsimError) -> str:
    """An error's line as the command line shows it: each parameter named by its option."""
    text = error.render(flag)
    # the library names no option; every command that takes a SKU takes files with --topology
    return f"{text} with --topology" if isinstance(error, FileAsSkuError) else text


def edits_text(edits) -> str:
    """A run's edits as a header shows them: ``--set K=V, K=V --fail SPEC --calibration FILE``."""
    from trnsim.spec.overrides import named_edits

    return named_edits(edits, flag)
