"""What the format tests share: a test graph's program, and which programs a format of equal chunks
between the collective's own ranks can hold (worked out here, not by the writers' own checks)."""

import numpy as np

from collectives.graphs import contexts
from trnsim.collectives.algorithms import REGISTRY
from trnsim.collectives.program import NETWORK


def case_program(name, algo, op, skewed):
    return REGISTRY[algo].program(contexts(name)[1 if skewed else 0], op)


def expressible(program) -> bool:
    """No in-network steps, equal blocks, no relays, one of the four collectives the writers write
    (not broadcast or reduce): what trnsim writes in MSCCL's and MSCCL++'s files."""
    in_network = any(NETWORK in (t.src, t.dst) for t in program.transfers)
    sizes = program.block_sizes
    unequal = sizes is not None and not np.allclose(sizes, 1 / program.p)
    basic = program.op in ("allreduce", "allgather", "reducescatter", "alltoall")
    return basic and not in_network and not unequal and not program.relays


def assert_same_totals(program, back) -> None:
    """``back`` (a file's program read back) moves what ``program`` moves between every pair of ranks."""
    from trnsim.collectives.agreement import program_totals
    from trnsim.collectives.formats.grid import units

    mine, theirs = program_totals(program), program_totals(back)
    assert set(mine) == set(theirs)
    # parts that are not small fractions (forest's LP weights) are rounded to 1/120 of a block
    rtol = 1e-12 if units(program.parts)[2] else 0.1
    assert all(np.isclose(mine[pair], theirs[pair], rtol=rtol) for pair in mine)
