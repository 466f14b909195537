"""Options about a chip's ranks: ``--ranks-per-chip``, one spelling of ``--set chip.ranks``."""

from typing import Annotated

import typer

RanksPerChip = Annotated[
    int | None,
    typer.Option(
        "--ranks-per-chip",
        min=1,
        max=64,
        help="Ranks (NeuronCores, as nccom-test counts them) per chip: the same as --set chip.ranks=N. "
        "Trainium2 and Trainium3 at LNC=2 (the default) have 4, at LNC=1 8; trn1 has 2. A rank's on-chip "
        "bandwidth is the file's chip.rank_gbps. With --ranks 16 and 4 per chip the group is 4 chips.",
        show_default=False,
    ),
]


def ranks_per_chip_edit(overrides: list[str] | None, ranks_per_chip: int) -> str:
    """``chip.ranks=N`` for --ranks-per-chip N, refusing a --set chip.ranks that says otherwise."""
    from trnsim.errors import UsageError

    for edit in overrides or ():
        key, _, value = edit.partition("=")
        if key.strip() == "chip.ranks" and value.strip() != str(ranks_per_chip):
            raise UsageError(
                f"--ranks-per-chip {ranks_per_chip} and --set {edit.strip()} disagree: both set chip.ranks; "
                "give one"
            )
    return f"chip.ranks={ranks_per_chip}"
