"""What an op needs besides its size: a root, source-target pairs, or per-rank counts.

* ``broadcast``, ``reduce``, ``gather`` and ``scatter`` have a root (a rank of the group, 0 by
  default, as in nccl-tests' ``-r``).
* ``sendrecv`` and ``permute`` have source-target pairs: every source sends its whole buffer to its
  target, all pairs at once (a rank paired with itself copies locally: nothing crosses a link, as in
  nccom-test's permute). By default rank ``i`` sends to rank ``i + 1`` (mod p), as nccl-tests'
  ``sendrecv_perf`` and nccom-test's permute do.
* ``alltoallv`` has a ``p x p`` count matrix (row ``i``: what rank ``i`` sends each rank), scaled so
  that a rank sends the size on average; ``allgatherv`` and ``reducescatterv`` have ``p`` counts (rank
  ``i``'s block), scaled to add up to the size. Without counts they are the even ops.

A demand op becomes a traffic matrix (:meth:`Arguments.traffic`: rank ``i`` sends ``T[i, j]`` of the
size to rank ``j``), an uneven one block shares (:meth:`Arguments.blocks`).
"""

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trnsim import limits
from trnsim.collectives.ops import Op
from trnsim.errors import ParameterError, UsageError


@dataclass(frozen=True, eq=False)
class Arguments:
    """An op's root, pairs and counts (module docstring); what an op does not use is ignored.

    Examples
    --------
    >>> from trnsim.collectives.ops import get_op
    >>> Arguments(root=2).traffic(get_op("gather"), 4)[:, 2]  # every rank's quarter to rank 2
    array([0.25, 0.25, 0.25, 0.25])
    >>> Arguments().traffic(get_op("sendrecv"), 3)  # rank i sends its whole buffer to rank i + 1
    array([[0., 1., 0.],
           [0., 0., 1.],
           [1., 0., 0.]])
    >>> Arguments(counts=np.array([1.0, 3.0])).blocks(get_op("allgatherv"), 2)
    (0.25, 0.75)
    """

    root: int = 0
    pairs: tuple[tuple[int, int], ...] | None = None
    counts: np.ndarray | None = None

    def for_op(self, op: Op) -> "Arguments":
        """Only what ``op`` takes (a run of several ops shares one set of options).

        >>> from trnsim.collectives.ops import get_op
        >>> Arguments(root=3, pairs=((0, 1),)).for_op(get_op("allreduce")).root
        0
        """
        takes_counts = op.name == "alltoallv" or op.uneven
        return Arguments(
            root=self.root if op.rooted else 0,
            pairs=self.pairs if op.name in ("sendrecv", "permute") else None,
            counts=self.counts if takes_counts else None,
        )

    def check(self, op: Op, p: int) -> None:
        """Refuse a root, a pair or counts that do not fit ``op`` on ``p`` ranks."""
        if op.rooted and not 0 <= self.root < p:
            raise ParameterError(f"the root is a rank of the group, 0 to {p - 1}", "root", str(self.root))
        if self.pairs is not None:
            if op.name not in ("sendrecv", "permute"):
                raise UsageError(f"{{pairs}} are for sendrecv and permute, not {op.name}", names="pairs")
            for src, dst in self.pairs:
                if not (0 <= src < p and 0 <= dst < p):
                    raise ParameterError(
                        f"each pair is two ranks of the group, 0 to {p - 1}",
                        "pairs",
                        f"{src}:{dst}",
                    )
        if self.counts is not None:
            if not (op.name == "alltoallv" or op.uneven):
                raise UsageError(
                    f"{{counts}} are for alltoallv, allgatherv and reducescatterv, not {op.name}",
                    names="counts",
                )
            square = op.name == "alltoallv"
            # one row or one column of a file, or a vector
            line = self.counts.ndim == 1 or 1 in self.counts.shape
            fits = self.counts.shape == (p, p) if square else self.counts.size == p and line
            if not fits:
                wanted = f"{p} rows of {p}" if square else f"{p} values (one per rank)"
                got = " x ".join(str(n) for n in self.counts.shape)
                raise UsageError(
                    f"{{counts}}: expected {wanted} for {op.name} on {p} ranks, got {got}", names="counts"
                )
            off = self.counts[~np.eye(p, dtype=bool)] if square else self.counts
            if not np.any(off > 0):
                raise UsageError("{counts}: no rank sends anything to another", names="counts")

    def traffic(self, op: Op, p: int) -> np.ndarray | None:
        """The demand matrix of a demand op other than ``alltoall`` (whose skew is given apart), else None."""
        if not op.demand or op.name == "alltoall":
            return None
        if op.name == "alltoallv":
            if self.counts is None:
                return np.full((p, p), 1.0 / p)
            return normalised_rows(self.counts)
        matrix = np.zeros((p, p))
        if op.name == "gather":
            matrix[:, self.root] = 1.0 / p
        elif op.name == "scatter":
            matrix[self.root, :] = 1.0 / p
        else:
            for src, dst in self.pairs or [(i, (i + 1) % p) for i in range(p)]:
                matrix[src, dst] = 1.0
        return matrix

    def blocks(self, op: Op, p: int) -> tuple[float, ...] | None:
        """Each rank's block's share of the size for ``allgatherv``/``reducescatterv`` with counts, else None."""
        if not op.uneven or self.counts is None:
            return None
        counts = self.counts.ravel()
        total = float(counts.sum())
        return tuple(float(c) / total for c in counts)

    def describe(self, op: Op, p: int) -> str:
        """The arguments in a header's words: ``root 0``, ``pairs 0->1, 1->2 (each rank to the next)``."""
        words = []
        if op.rooted:
            words.append(f"root {self.root}")
        if op.name in ("sendrecv", "permute"):
            pairs = self.pairs or tuple((i, (i + 1) % p) for i in range(p))
            shown = ", ".join(f"{s}->{t}" for s, t in pairs[:4]) + (", ..." if len(pairs) > 4 else "")
            words.append(
                f"{len(pairs)} pair{'s' * (len(pairs) != 1)} {shown}"
                + ("" if self.pairs else " (each rank to the next)")
            )
        if op.name == "alltoallv" or op.uneven:
            words.append("even counts" if self.counts is None else "counts given")
        return "; ".join(words)


def resolve(
    op: Op, p: int, arguments: "Arguments | None", traffic: np.ndarray | None = None, where: str = ""
):
    """``(traffic, root, blocks)`` of ``op`` on ``p`` ranks: the arguments ``op`` takes, checked (a run
    of several ops shares one set), and a demand op's matrix where no skewed ``traffic`` is given
    (refused before it is built when it passes :data:`trnsim.limits.DEMAND_CELLS`; ``where`` starts
    that message, e.g. the file).

    >>> from trnsim.collectives.ops import get_op
    >>> matrix, root, blocks = resolve(get_op("gather"), 2, Arguments(root=1))
    >>> matrix.tolist(), root, blocks
    ([[0.0, 0.5], [0.0, 0.5]], 1, None)
    """
    arguments = (arguments or Arguments()).for_op(op)
    arguments.check(op, p)
    if traffic is None:
        cells = p * p if op.demand and op.name != "alltoall" else 0
        limits.DEMAND_CELLS.check(cells, f"{where}{op.name} on {p:,} ranks would need")
        traffic = arguments.traffic(op, p)
    return traffic, arguments.root, arguments.blocks(op, p)


def normalised_rows(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` scaled so its mean row sum is 1 (a rank sends the size on average)."""
    total = float(matrix.sum())
    return matrix * (len(matrix) / total)


def parse_pairs(text: str) -> tuple[tuple[int, int], ...]:
    """Source-target pairs: ``SRC:DST,SRC:DST...``, or a ``.json`` file as nccom-test's
    ``--custom-src-target-pairs`` reads it (``{"src_target_pairs": [[[0, 1], [1, 0], ...]]}``, aws-neuron-sdk
    tools/neuron-sys-tools/nccom-test.rst), or a plain list ``[[0, 1], [1, 0]]``.

    >>> parse_pairs("0:5, 3:7")
    ((0, 5), (3, 7))
    """
    path = Path(text)
    if text.endswith(".json") or (":" not in text and path.is_file()):
        return _pairs_file(path)
    pairs = []
    for item in text.split(","):
        src, sep, dst = item.strip().partition(":")
        if not sep or not src.strip().isdigit() or not dst.strip().isdigit():
            raise ParameterError("expected SRC:DST[,SRC:DST...] (ranks) or a .json file", "pairs", repr(text))
        pairs.append((int(src), int(dst)))
    return tuple(pairs)


def _is_pair(item) -> bool:
    return (
        isinstance(item, list)
        and len(item) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in item)
    )


def _pairs_file(path: Path) -> tuple[tuple[int, int], ...]:
    """The pairs of a JSON file (see :func:`parse_pairs`); nccom-test nests one list of pairs per group."""
    from trnsim import limits
    from trnsim.yamlio import read_text

    try:
        document = json.loads(read_text(path, "pairs file", limits.TRAFFIC_BYTES))
    except json.JSONDecodeError as error:
        raise UsageError(f"{path}: not JSON ({error.msg} at line {error.lineno})") from None
    if isinstance(document, dict):
        document = document.get("src_target_pairs")
    if (
        isinstance(document, list)
        and document
        and all(isinstance(x, list) and x and all(_is_pair(y) for y in x) for x in document)
    ):
        document = [pair for group in document for pair in group]  # nccom-test: one list per group
    if not (isinstance(document, list) and document and all(_is_pair(item) for item in document)):
        raise UsageError(
            f'{path}: expected {{"src_target_pairs": [[[src, dst], ...]]}} (nccom-test) or a list of '
            "[source, target] rank pairs"
        )
    return tuple((int(a), int(b)) for a, b in document)


def read_counts(path: Path) -> np.ndarray:
    """Counts from a text file: rows of numbers (comma- or space-separated; ``#`` comments). An
    all-to-allv takes ``p`` rows of ``p`` (row ``i``: what rank ``i`` sends each rank); an all-gatherv
    or reduce-scatterv ``p`` numbers, one per rank, on one line or one per line. Element counts or
    bytes: only the proportions matter, the size sets the scale (:class:`Arguments` checks the shape
    against the op and the group). A ``.json`` file is nccom-test's ``--alltoallv-metadata``
    (``{"alltoallv_metadata": [{"send_counts": [...], ...}, ...]}``, aws-neuron-sdk nccom-test.rst):
    its ``send_counts``, one entry per rank, or one entry that every rank follows."""
    from trnsim import limits
    from trnsim.yamlio import read_text

    path = Path(path)
    text = read_text(path, "counts file", limits.TRAFFIC_BYTES)
    if path.suffix == ".json":
        return _checked_counts(_metadata_counts(text, path), path)
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].replace(",", " ").split()
        if not fields:
            continue
        try:
            rows.append([float(value) for value in fields])
        except ValueError:
            raise UsageError(
                f"{path}: line {number}: expected numbers separated by commas or spaces"
            ) from None
        if len(rows[-1]) != len(rows[0]):
            raise UsageError(
                f"{path}: line {number}: {len(rows[-1])} values; the first row has {len(rows[0])}"
            )
    if not rows:
        raise UsageError(f"{path}: no counts (expected rows of numbers)")
    return _checked_counts(np.array(rows), path)


def _metadata_counts(text: str, path: Path) -> np.ndarray:
    """The send counts of nccom-test's all-to-allv metadata (see :func:`read_counts`), a row per rank
    (one row: every rank's)."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"{path}: not JSON ({error.msg} at line {error.lineno})") from None
    entries = document.get("alltoallv_metadata") if isinstance(document, dict) else None
    rows = (
        [e.get("send_counts") for e in entries]
        if isinstance(entries, list) and entries and all(isinstance(e, dict) for e in entries)
        else None
    )
    if (
        not rows
        or not all(
            isinstance(r, list)
            and r
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in r)
            for r in rows
        )
        or len({len(r) for r in rows}) != 1
    ):
        raise UsageError(
            f'{path}: expected {{"alltoallv_metadata": [{{"send_counts": [...]}}, ...]}} (nccom-test), equal-length send_counts'
        )
    if len(rows) == 1:
        rows = rows * len(rows[0])  # one entry: every rank sends these counts
    return np.array(rows, dtype=float)


def _checked_counts(values: np.ndarray, path: Path) -> np.ndarray:
    """``values`` scaled to a largest count of 1, once every count is finite, not negative, not all 0."""
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise UsageError(f"{path}: every count must be a finite number >= 0")
    if not np.any(values > 0):
        raise UsageError(f"{path}: every count is 0")
    return values / float(values.max())
