"""What a routed schedule costs at each size: plain steps one after another, pipelines round by round.

A plain step costs ``repeat x (alpha + its largest path latency + size x its busiest link's seconds
per byte)``.

A pipeline of ``D`` stages moves the data in ``m`` chunks. In round ``r`` the stages ``i`` with
``0 <= r - i < m`` are busy, each on its own chunk, all at once, so ``m + D - 1`` rounds run: ``D - 1``
to fill, ``m - D + 1`` in the steady state (when ``m >= D``), ``D - 1`` to drain. A round costs the
largest latency among its busy stages (``repeat x (alpha + path latency)``) plus ``size / m`` times the
busiest link's seconds per byte under the busy stages' combined load. The chunk count is chosen per
size to minimise the total, between 1 and :data:`MAX_CHUNKS` chunks of at least
:data:`MIN_CHUNK_BYTES` each (both assumptions, overridable). With fewer chunks than stages the
pipeline never fills; those rounds are costed one by one.
"""

from dataclasses import dataclass

import numpy as np

from trnsim.collectives.schedule import NotApplicable, Step
from trnsim.errors import ParameterError
from trnsim.model.router import StepRoute
from trnsim.topology.graph import Topology

# Assumptions (not published figures): a pipeline splits the collective into at most this many chunks,
# each at least this large; below that, per-message costs the model does not count would dominate.
MAX_CHUNKS = 1024
MIN_CHUNK_BYTES = 64 * 1024
# rounds x basis patterns x links costed for chunk counts below the pipeline's depth; above it, only
# one chunk or at least depth chunks are considered (a speed limit, not a model assumption)
SHORT_PIPELINE_WORK = 200_000_000


def step_alpha(topology: Topology, alpha_us: float | None) -> tuple[float, float]:
    """The per-step alpha in nanoseconds and in microseconds: ``alpha_us`` when given, else the
    system's ``latency.step_ns``. Each is the number given, never converted back from the other, so
    that a run shows the alpha it was asked for digit for digit."""
    step_ns = topology.spec.latency.step_ns
    if alpha_us is None:
        return step_ns, step_ns / 1e3
    return alpha_us * 1e3, alpha_us


def assumptions(topology: Topology, alpha_us: float | None) -> set[str]:
    """Which of a run's figures rest on an assumption of the system's file (its section's ``source``
    says so) rather than on the caller (an ``alpha_us`` given, an edit, a calibration): ``alpha``
    (the per-step latency, :func:`step_alpha`), ``efficiency`` (the links' share of their raw rate)."""
    from trnsim.topology.metrics import model_parameters

    by_key = {p["key"]: p["basis"] for p in model_parameters(topology)}
    out = set()
    if alpha_us is None and by_key["latency.step_ns"] == "assumption":
        out.add("alpha")
    if any(basis == "assumption" for key, basis in by_key.items() if key.startswith("efficiency.")):
        out.add("efficiency")
    return out


def cost_options(
    topology: Topology, alpha_us: float | None, max_chunks: int | None, min_chunk_bytes: int | None
) -> tuple[float, float, tuple[int, int]]:
    """The checked ``alpha_us``, ``max_chunks`` and ``min_chunk_bytes``: alpha in ns and in us
    (:func:`step_alpha`), and the chunking."""
    from trnsim.units import check_finite

    check_finite("alpha_us", alpha_us, minimum=0, maximum=1e6)
    if max_chunks is not None and not 1 <= max_chunks <= 1_000_000:
        raise ParameterError(f"expected a whole number from 1 to 1,000,000, got {max_chunks}", "max_chunks")
    if min_chunk_bytes is not None and not 1 <= min_chunk_bytes <= 1 << 50:
        raise ParameterError(f"expected 1 B to 1 PiB, got {min_chunk_bytes}", "min_chunk_bytes")
    alpha_ns, alpha_us = step_alpha(topology, alpha_us)
    return alpha_ns, alpha_us, (max_chunks or MAX_CHUNKS, min_chunk_bytes or MIN_CHUNK_BYTES)


@dataclass
class StepCost:
    """One plain step, routed."""

    step: Step
    route: StepRoute
    alpha_ns: float

    def time_us(self, size: float) -> float:
        route = self.route
        return self.step.repeat * (
            (self.alpha_ns + route.latency_ns) / 1e3 + size * route.seconds_per_byte * 1e6
        )

    def chunks(self, size: float) -> int:
        return 1

    @property
    def max_links(self) -> int:
        return self.route.max_links

    @property
    def weight(self) -> float:
        """Seconds per byte this item spends on bandwidth (to name the bottleneck of a plan)."""
        return self.step.repeat * self.route.seconds_per_byte

    def edge_seconds_per_byte(self, bw_bps: np.ndarray) -> np.ndarray:
        """How long each directed link is busy, per byte of collective size."""
        return self.step.repeat * self.route.link_loads / bw_bps


class PipelineCost:
    """A pipeline's chains of stages, routed; costed at the best chunk count for each size.

    Every round's link loads are a combination of a few routed patterns (a stream's stages reuse the
    same flows at different weights), so rounds are costed in that small basis.

    Built in named steps: the basis and each stage's weights in it (:func:`_basis`), the rounds of
    pipelines with fewer chunks than stages (:func:`_short_rounds`), the fill and drain rounds
    (:func:`_fill_and_drain`), and the steady state (every stage busy).

    Examples
    --------
    Two stages, each moving every byte over its own 1 GB/s link, no latency: ``m`` chunks take
    ``m + 1`` rounds of ``size / m`` bytes, so the most chunks allowed (1 MiB in chunks of at least
    64 KiB: 16) is fastest, at ``17/16`` of the size over 1 GB/s.

    >>> import numpy as np
    >>> from trnsim.collectives.schedule import NotApplicable, Step
    >>> from trnsim.model.router import StepRoute
    >>> first, second = (Step(np.zeros(1, int), np.ones(1, int), np.ones(1)) for _ in range(2))
    >>> def on_link(e):  # every byte of the size crosses directed link e
    ...     return StepRoute(1e-9, 0.0, 1, "x", np.eye(2)[e])
    >>> chain = [[(first, on_link(0))], [(second, on_link(1))]]
    >>> cost = PipelineCost([chain], alpha_ns=0.0, bw_bps=np.full(2, 1e9))
    >>> cost.chunks(1 << 20), round(cost.time_us(1 << 20), 6), 17 / 16 * (1 << 20) / 1e3
    (16, 1114.112, 1114.112)
    """

    def __init__(
        self,
        chains,
        alpha_ns: float,
        bw_bps: np.ndarray,
        max_chunks: int = MAX_CHUNKS,
        min_chunk_bytes: int = MIN_CHUNK_BYTES,
    ):
        self.max_chunks, self.min_chunk_bytes = max_chunks, min_chunk_bytes
        check_size(chains, len(bw_bps))
        rows, coefs, lats, self.max_links = _basis(chains, alpha_ns)
        per_bw = np.array(rows) / bw_bps  # basis x directed edges: seconds per byte per unit weight
        depth = self.depth = max(len(c) for c in coefs)
        # rounds are costed on the links some pattern loads (a busiest link is one of them): a chain
        # of single flows on a large fabric loads a few hundred links of tens of thousands
        used = per_bw.any(axis=0)
        used[0] = used[0] or not used.any()
        loaded = _distinct_columns(per_bw[:, used])
        self._short = _short_rounds(coefs, lats, loaded, depth, per_bw.shape[1])
        self._edge_latency, self._edge_spb = _fill_and_drain(coefs, lats, loaded, depth)
        total = sum(c.sum(axis=0) for c in coefs)
        self._steady_latency = max(lt.max() for lt in lats)
        self._steady_busy = total @ per_bw
        self._steady_spb = float(self._steady_busy.max())

    def _times_us(self, size: float) -> tuple[np.ndarray, np.ndarray]:
        """Candidate chunk counts and the total time of each."""
        d = self.depth
        top = int(max(1, min(self.max_chunks, size // self.min_chunk_bytes)))
        short = [m for m in self._short if m <= top]
        counts = np.r_[short, np.arange(max(d, 2), top + 1)].astype(np.int64)
        m = counts.astype(float)
        full = m - d + 1
        times = self._edge_latency + full * self._steady_latency
        times = times + size / m * 1e6 * (self._edge_spb + full * self._steady_spb)
        for i, count in enumerate(short):
            latency, spb = self._short[count]
            times[i] = latency + size / count * 1e6 * spb
        return counts, times

    def time_us(self, size: float) -> float:
        return float(self._times_us(size)[1].min())

    def chunks(self, size: float) -> int:
        counts, times = self._times_us(size)
        return int(counts[int(np.argmin(times))])

    @property
    def weight(self) -> float:
        return self._steady_spb

    def edge_seconds_per_byte(self, bw_bps: np.ndarray) -> np.ndarray:
        return self._steady_busy


def check_size(chains, links: int) -> None:
    """Raise :class:`NotApplicable` when costing these chains of stages would pass
    :data:`trnsim.limits.PIPELINE_CELLS` (distinct step patterns x directed links); ``chains`` hold
    steps, or ``(step, route)`` pairs."""
    from trnsim import limits

    units = {
        id(step.unit if step.unit is not None else step)
        for chain in chains
        for stage in chain
        for step in (entry[0] if isinstance(entry, tuple) else entry for entry in stage)
    }
    cells, bound = len(units) * links, limits.PIPELINE_CELLS.value
    if cells > bound:
        stages = max(len(chain) for chain in chains)
        raise NotApplicable(
            f"its pipeline of {stages:,} stages would need {cells:,} cells to cost ({len(units):,} step "
            f"patterns x {links:,} directed links), more than the limit of {bound:,} (a default; raise it "
            f"with the environment variable {limits.PIPELINE_CELLS.env})"
        )


def _basis(chains, alpha_ns: float):
    """The routed patterns a pipeline's stages combine, and each stage as a combination of them.

    Returns the patterns' link loads (per unit weight), per chain a stages x patterns matrix of
    weights and a vector of stage latencies (microseconds), and the most links any route crosses.
    """
    basis: dict[int, int] = {}
    rows, max_links = [], 0
    coef_chains, lat_chains = [], []
    for chain in chains:
        coef = []
        lat = []
        for stage in chain:
            entry: dict[int, float] = {}
            latency = 0.0
            for step, route in stage:
                key = id(step.unit if step.unit is not None else step)
                if key not in basis:
                    basis[key] = len(rows)
                    rows.append(route.link_loads / step.scale if step.scale else route.link_loads)
                entry[basis[key]] = entry.get(basis[key], 0.0) + step.repeat * step.scale
                latency = max(latency, step.repeat * (alpha_ns + route.latency_ns) / 1e3)
                max_links = max(max_links, route.max_links)
            coef.append(entry)
            lat.append(latency)
        coef_chains.append(coef)
        lat_chains.append(lat)
    n = len(rows)

    def dense(entry):
        out = np.zeros(n)
        for k, v in entry.items():
            out[k] += v
        return out

    coefs = [np.array([dense(e) for e in chain]) for chain in coef_chains]
    lats = [np.array(chain) for chain in lat_chains]
    return rows, coefs, lats, max_links


def _distinct_columns(per_bw: np.ndarray) -> np.ndarray:
    """``per_bw`` with each column once: a round's busiest link is the same among the distinct ones
    (a translation-invariant pattern on a torus loads every link of an orbit alike)."""
    if per_bw.shape[1] < 2:
        return per_bw
    probe = np.linspace(1.0, 2.0, per_bw.shape[0]) @ per_bw  # equal columns, equal probes
    _, first, inverse = np.unique(probe, return_index=True, return_inverse=True)
    if len(first) == per_bw.shape[1]:
        return per_bw
    distinct = per_bw[:, first]
    # equal probes of unequal columns (a coincidence): keep every column
    return distinct if np.array_equal(distinct[:, inverse.ravel()], per_bw) else per_bw


def _busiest(weights: np.ndarray, per_bw: np.ndarray) -> np.ndarray:
    """Each round's seconds per byte: its busiest link under its row of ``weights`` (rounds x
    patterns), as one matrix product per block of rounds (0 where no stage is busy)."""
    out = np.zeros(len(weights))
    block = max(1, _BLOCK_ENTRIES // max(per_bw.shape[1], 1))
    for lo in range(0, len(weights), block):
        out[lo : lo + block] = (weights[lo : lo + block] @ per_bw).max(axis=1)
    out[~weights.any(axis=1)] = 0.0
    return out


# rounds x links of loads computed at once by _busiest (bounds its memory to about 64 MB)
_BLOCK_ENTRIES = 8_000_000


def _short_rounds(coefs, lats, per_bw: np.ndarray, depth: int, links: int) -> dict[int, tuple[float, float]]:
    """Fewer chunks than stages (1 <= m < depth): round r runs each chain's stages
    max(0, r - m + 1) .. min(r, its depth - 1); costed round by round, unless that is too much
    work (a deep pipeline on a large graph of ``links`` directed links), where only one chunk is
    considered. Per chunk count, the rounds' summed latency and summed seconds per byte."""
    n = per_bw.shape[0]
    prefixes = [np.vstack([np.zeros(n), np.cumsum(c, axis=0)]) for c in coefs]
    short_counts = range(1, max(depth, 2)) if depth * depth * n * links <= SHORT_PIPELINE_WORK else [1]
    rounds: list[tuple[int, np.ndarray, float]] = []  # (chunk count, busy weights, latency)
    for m in short_counts:
        for r in range(m + depth - 1):
            lo = max(0, r - m + 1)
            weights, latency = np.zeros(n), 0.0
            for prefix, lt in zip(prefixes, lats, strict=True):
                hi = min(r, len(lt) - 1)
                if lo <= hi:
                    weights = weights + prefix[hi + 1] - prefix[lo]
                    latency = max(latency, lt[lo : hi + 1].max())
            rounds.append((m, weights, latency))
    spb = _busiest(np.array([w for _, w, _ in rounds]).reshape(len(rounds), n), per_bw)
    short: dict[int, tuple[float, float]] = {}
    for (m, _, latency), round_spb in zip(rounds, spb.tolist(), strict=True):
        total_latency, total_spb = short.get(m, (0.0, 0.0))
        short[m] = (total_latency + latency, total_spb + round_spb)
    return short


def _fill_and_drain(coefs, lats, per_bw: np.ndarray, depth: int) -> tuple[float, float]:
    """With at least ``depth`` chunks: the fill rounds (stages 0..r busy) and the drain rounds
    (stages j.. busy), their summed latency and summed seconds per byte."""
    n = per_bw.shape[0]
    fill = [
        (sum(c[: r + 1].sum(axis=0) for c in coefs), max(lt[: r + 1].max() for lt in lats))
        for r in range(depth - 1)
    ]
    drain = [
        (
            sum((c[j:].sum(axis=0) for c in coefs if j < len(c)), np.zeros(n)),
            max((lt[j:].max() for lt in lats if j < len(lt)), default=0.0),
        )
        for j in range(1, depth)
    ]
    rounds = fill + drain
    spb = _busiest(np.array([w for w, _ in rounds]).reshape(len(rounds), n), per_bw)
    return sum(latency for _, latency in rounds), sum(spb.tolist())
