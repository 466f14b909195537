"""``trnsim collective algorithms``: the algorithms, the ops each implements and what it does."""

from trnsim.cli.options import FormatOption
from trnsim.outputs.render import Format, emit


def algorithms(fmt: FormatOption = Format.table) -> None:
    """List the algorithms, the ops each implements and what it does.

    Examples:

        trnsim collective algorithms
        trnsim collective algorithms --format markdown
    """
    from trnsim.collectives.algorithms import REGISTRY
    from trnsim.collectives.ops import OPS
    from trnsim.outputs.collective import algorithms_table

    payload, table = algorithms_table(REGISTRY, list(OPS))
    emit(payload, [table], fmt)
