"""Every catalog system x op x algorithm at five sizes, as the engine computes them today.

This is a regression guard, not a source of expected values: the numbers are what the engine gave
before a change that must not change any (the package redesign of issue 24; later, ``--runtime
ideal``). Each test derives its expected values independently elsewhere; this one only says that a
refactoring moved nothing. Regenerate the snapshot on purpose, never to make a test pass:

    python tests/regression/catalog_numbers.py --write
"""

import json
import sys
from pathlib import Path

SNAPSHOT = Path(__file__).with_name("catalog_numbers.json")
SIZES = [1 << 10, 1 << 16, 1 << 20, 1 << 26, 1 << 30]
OPS = ("allreduce", "allgather", "reducescatter", "alltoall")
FIELDS = ("bytes", "time_us", "busbw_gbps", "bound_busbw_gbps", "raw_bound_busbw_gbps", "max_hops", "chunks")


def numbers() -> dict[str, list]:
    """``{"sku op algorithm": [[bytes, time_us, ...] per size]}`` for the whole catalog."""
    from trnsim.model.engine import evaluate
    from trnsim.spec.catalog import catalog_files
    from trnsim.topology import load_topology

    out = {}
    for path in catalog_files():
        topology = load_topology(path.stem)
        for op in OPS:
            result = evaluate(topology, op, SIZES, topology.chips, algo="all")
            for name, rows in result.by_algorithm.items():
                out[f"{path.stem} {op} {name}"] = [[getattr(row, f) for f in FIELDS] for row in rows]
    return out


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/regression/catalog_numbers.py --write")
    SNAPSHOT.write_text(json.dumps(numbers(), indent=0, sort_keys=True) + "\n")
    print(f"wrote {SNAPSHOT}")
