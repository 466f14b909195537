"""The design space: what-if edits varied over values, across systems, as a grid of points.

An axis is one ``KEY=V1,V2,...`` (the ``KEY=VALUE`` of a what-if edit, :mod:`trnsim.spec.overrides`,
with several values); the grid is the cross product of the systems and every axis. Points are
numbered in mixed radix, the systems slowest and the last axis fastest, so that point ``i`` of a
grid is the same whoever asks and the grid itself is never held in memory: a search draws point
numbers (:func:`choose`) and builds only those.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from trnsim.errors import ParameterError, UsageError
from trnsim.limits import DESIGN_POINTS


@dataclass(frozen=True)
class Axis:
    """One edit's key and the values it takes, each as written (``8``, ``[A, B]``, ``'x'``)."""

    key: str
    values: tuple[str, ...]

    def edit(self, n: int) -> str:
        """The ``KEY=VALUE`` edit of the axis's ``n``-th value."""
        return f"{self.key}={self.values[n]}"


def split_values(text: str) -> list[str]:
    """Split ``V1,V2,...`` at the commas outside brackets, braces and quotes (a value may be a flow
    list ``[A, B]`` or a quoted string with commas, as a ``--set`` value may)."""
    parts, depth, quote, start = [], 0, None, 0
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [part.strip() for part in parts]


def _shown(text: str, most: int = 60) -> str:
    """``text`` quoted for a message, its middle left out past ``most`` characters (a list of
    thousands of values is not echoed whole)."""
    return repr(text) if len(text) <= most else repr(text[: most // 2]) + " ... " + repr(text[-most // 4 :])


def parse_axis(text: str) -> Axis:
    """An axis from ``KEY=V1,V2,...``.

    Raises
    ------
    ParameterError
        No ``=``, no key, an empty value, or a value given twice (named as the parameter ``vary``).
    """
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ParameterError(
            "expected KEY=V1,V2,... e.g. switched.cross_rack.lanes=4,8,16", "vary", repr(text)
        )
    values = split_values(raw)
    if any(not value for value in values):
        raise ParameterError("a value is empty (two commas in a row, or one at an end)", "vary", _shown(text))
    seen: dict[tuple, int] = {}
    for n, value in enumerate(values):
        first = seen.setdefault(_meaning(value, key), n)
        if first != n:  # 0.8 and 0.80 build the same system: it would run twice
            same = "given twice" if values[first] == value else f"the same as {values[first]!r}"
            raise ParameterError(f"the value {value!r} is {same}", "vary", _shown(text))
    return Axis(key, tuple(values))


def _meaning(value: str, key: str):
    """What a value means as an edit (:func:`trnsim.spec.overrides.parse_value`), typed exactly: the
    schema tells ``8`` from ``8.0`` and ``1`` from ``true``, so they stay apart; a mapping's keys in
    any order mean the same."""
    from trnsim.spec.overrides import parse_value

    return _canonical(parse_value(value, key))


def _canonical(typed):
    if isinstance(typed, dict):
        return ("map", tuple(sorted(((str(k), _canonical(v)) for k, v in typed.items()), key=repr)))
    if isinstance(typed, list):
        return ("list", tuple(_canonical(v) for v in typed))
    return (type(typed).__name__, typed)


@dataclass(frozen=True)
class Grid:
    """The cross product of ``systems`` (each a variant as written: a SKU, a file, ``NAME:set=...``)
    and ``axes``."""

    systems: tuple[str, ...]
    axes: tuple[Axis, ...] = ()

    @property
    def size(self) -> int:
        """The number of points (a Python int: a huge grid is counted, never listed)."""
        return len(self.systems) * math.prod(len(axis.values) for axis in self.axes)

    def choice(self, index: int) -> tuple[int, tuple[int, ...]]:
        """Point ``index`` as (its system's number, each axis's value number)."""
        if not 0 <= index < self.size:
            raise IndexError(index)
        picks = []
        for axis in reversed(self.axes):
            index, pick = divmod(index, len(axis.values))
            picks.append(pick)
        return index, tuple(reversed(picks))

    def edits(self, index: int) -> tuple[str, ...]:
        """The edits point ``index`` makes, one per axis, in the axes' order."""
        _, picks = self.choice(index)
        return tuple(axis.edit(pick) for axis, pick in zip(self.axes, picks, strict=True))

    def values(self, index: int) -> dict[str, str]:
        """Each axis's key with the value point ``index`` gives it (as written)."""
        _, picks = self.choice(index)
        return {axis.key: axis.values[pick] for axis, pick in zip(self.axes, picks, strict=True)}


def make_grid(systems: list[str], axes: list[Axis], common: list[str] = ()) -> Grid:
    """The grid, checked: at least one system, each key varied once and not also edited in common.

    Raises
    ------
    UsageError
        A key varied twice, or both varied and set (which value would win is not obvious).
    """
    if not systems:
        raise UsageError("name at least one system ({sku} or {topology})")
    keys = [axis.key for axis in axes]
    for n, key in enumerate(keys):
        if key in keys[:n]:
            raise ParameterError("the key is varied twice: give all its values in one", "vary", key)
    fixed = {text.partition("=")[0].strip() for text in common}
    both = [key for key in keys if key in fixed]
    if both:
        raise ParameterError(
            "the key is also given a fixed value ({overrides}): vary it or set it, not both", "vary", both[0]
        )
    return Grid(tuple(systems), tuple(axes))


@dataclass(frozen=True)
class Search:
    """How points are chosen: every point (``grid``) or ``samples`` drawn at random with ``seed``."""

    kind: str = "grid"
    samples: int | None = None
    seed: int = 0

    def describe(self, grid: Grid) -> str:
        if self.kind == "grid":
            return f"every point of the grid ({grid.size:,})"
        taken = min(self.samples, grid.size)
        return f"{taken:,} of the grid's {grid.size:,} points drawn at random without replacement (seed {self.seed})"


def parse_search(text: str | None, seed: int = 0) -> Search:
    """``grid`` (the default) or ``random:N``.

    Raises
    ------
    ParameterError
        Another spelling, or N not a whole number >= 1 (named as the parameter ``search``).
    """
    if text is None or text.strip().lower() == "grid":
        return Search(seed=seed)
    kind, _, count = text.strip().partition(":")
    if kind.strip().lower() != "random" or not count.strip().isdigit() or int(count) < 1:
        raise ParameterError("expected grid or random:N with N a whole number >= 1", "search", repr(text))
    return Search("random", int(count), seed)


def choose(grid: Grid, search: Search) -> list[int]:
    """The point numbers to evaluate, ascending; refused before any work past the points' limit.

    ``random:N`` draws N distinct points uniformly (every N-subset of the grid equally likely: a
    simple random sample: point numbers drawn with :meth:`random.Random.randrange`, repeats drawn
    again, so the grid is never listed); N at least the grid's size takes every point. The same grid, N and seed draw the same
    points on any machine and engine.
    """
    if search.kind == "grid":
        _check(grid.size, "the design grid has", "sample it with {search} random:N")
        return list(range(grid.size))
    taken = min(search.samples, grid.size)
    _check(taken, "the search would evaluate", "draw fewer")
    if taken == grid.size:
        return list(range(grid.size))
    rng, drawn = random.Random(search.seed), set()
    while len(drawn) < taken:  # draws without replacement: every ``taken``-subset equally likely
        drawn.add(rng.randrange(grid.size))  # a Python int: any grid's size (sample() needs < 2^63)
    return sorted(drawn)


def _check(count: int, subject: str, hint: str) -> None:
    try:
        DESIGN_POINTS.check(count, subject)
    except UsageError as exc:
        raise UsageError(f"{exc.template}; or {hint}", names="search") from None
