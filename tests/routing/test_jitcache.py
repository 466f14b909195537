"""numba's disk cache fails soft: a damaged cache or none at all costs a compilation and one warning,
never the run; processes sharing an empty cache all succeed with the same numbers."""

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

numba = pytest.importorskip("numba")

from trnsim.routing.jitcache import CacheWarning, Compiled  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
KERNEL = """
import numba
import numpy as np

CACHE = globals().get("CACHE", True)


@numba.njit(cache=CACHE)
def weighted(values, weight):
    total = 0.0
    for v in values:
        total += v * weight
    return total
"""


@pytest.fixture
def kernel_module(tmp_path, monkeypatch):
    """A small numba module of its own (compiled in a fraction of a second), cached in tmp_path."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "tiny_kernels.py").write_text(KERNEL)
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "cache"))

    def fresh() -> Compiled:
        """A new process's view: the module imported anew, so that numba reads its disk cache."""
        sys.modules.pop("tiny_kernels", None)
        return Compiled("tiny_kernels")

    yield fresh, tmp_path / "cache"
    sys.modules.pop("tiny_kernels", None)


def _cache_files(folder: Path, suffix: str) -> list[Path]:
    return sorted(path for path in folder.rglob(f"*{suffix}"))


def _call(compiled: Compiled) -> float:
    import numpy as np

    return compiled.call("weighted", np.arange(10.0), 0.5)


@pytest.mark.parametrize("damage", ["truncated nbc", "garbage nbi"])
def test_a_damaged_cache_is_compiled_around_once_and_rebuilt(kernel_module, recwarn, damage):
    fresh, cache = kernel_module
    assert _call(fresh()) == 22.5
    indexes, data = _cache_files(cache, ".nbi"), _cache_files(cache, ".nbc")
    assert indexes and data
    for path in data if damage == "truncated nbc" else indexes:
        if damage == "truncated nbc":
            path.write_bytes(path.read_bytes()[:100])
        else:
            path.write_text("garbage\n")
    assert recwarn.list == []
    with pytest.warns(CacheWarning, match="could not be used .*NUMBA_CACHE_DIR"):
        assert _call(fresh()) == 22.5
    # the next process finds a cache it can use again: no warning, and it is read from disk
    recwarn.clear()
    compiled = fresh()
    assert _call(compiled) == 22.5 and recwarn.list == []
    third = fresh()
    assert _call(third) == 22.5 and third.module.weighted.stats.cache_hits


def test_no_folder_to_cache_in_compiles_without_a_cache(kernel_module, monkeypatch):
    """A read-only install with no writable home: numba finds no locator and fails the import."""
    from numba.core import caching

    fresh, _ = kernel_module
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # renamed in numba 0.6x
    monkeypatch.setattr(impl, "_locator_classes", [])
    fresh()  # forgets any earlier import
    with pytest.raises(RuntimeError, match="no locator available"):
        importlib.import_module("tiny_kernels")  # what numba alone does
    with pytest.warns(CacheWarning, match="no locator available"):
        assert _call(fresh()) == 22.5


def test_an_error_of_the_kernel_itself_is_not_taken_for_the_cache(kernel_module, recwarn):
    fresh, _ = kernel_module
    compiled = fresh()
    with pytest.raises(numba.core.errors.TypingError):
        compiled.call("weighted", "not an array", 0.5)
    assert recwarn.list == [] and compiled.module.CACHE is True


def _mesh_file(folder: Path) -> Path:
    """A 34 x 34 mesh (1,156 chips) of the 16x16x16 example's chips and links: its multidim all-reduce
    routes each axis's lines for 1,156 rows, past the compiled kernels' threshold, in a fraction of the
    4,096-chip torus's time. Its axes do not wrap: a wrapped torus is routed by translation, off chip
    0's rows, and may never call the kernels."""
    text = (ROOT / "examples" / "torus-16x16x16.yaml").read_text()
    lines = [line for line in text.splitlines() if not line.strip().startswith("- {name: z,")]
    text = (
        "\n".join(lines)
        .replace("size: 16,", "size: 34, wrap: false,")
        .replace("name: torus-16x16x16", "name: mesh-34x34")
    )
    path = folder / "mesh-34x34.yaml"
    path.write_text(text + "\n")
    return path


def _big_run(cache: Path, pycache: Path, torus: Path) -> subprocess.Popen:
    # trnsim's own disk cache off: every run computes, so each one loads the kernels
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPYCACHEPREFIX=str(pycache), TRNSIM_CACHE="off")
    return subprocess.Popen(
        [sys.executable, "-m", "trnsim", "collective", "allreduce", "--topology", str(torus),
         "--algo", "multidim", "--sizes", "1M", "--format", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


@pytest.mark.slow
def test_parallel_runs_on_empty_caches_agree_and_a_damaged_cache_costs_one_warning(tmp_path):
    """8 processes at once with empty numba and Python caches, on a 1,156-chip mesh that uses the
    compiled kernels; then the shared cache damaged in both ways."""
    cache, pycache, torus = tmp_path / "numba", tmp_path / "pycache", _mesh_file(tmp_path)
    runs = [_big_run(cache, pycache, torus) for _ in range(8)]
    results = [run.communicate(timeout=1800) for run in runs]
    assert [run.returncode for run in runs] == [0] * 8, [err for _, err in results]
    assert all(err == "" for _, err in results), [err for _, err in results]
    outputs = {out for out, _ in results}
    assert len(outputs) == 1 and '"ranks": 1156' in outputs.pop() and _cache_files(cache, ".nbc")
    (expected,) = {out for out, _ in results}
    for damage in ("truncated nbc", "garbage nbi"):
        for path in _cache_files(cache, ".nbc" if damage == "truncated nbc" else ".nbi"):
            if damage == "truncated nbc":
                path.write_bytes(path.read_bytes()[:100])
            else:
                path.write_text("garbage\n")
        damaged = _big_run(cache, pycache, torus)
        out, err = damaged.communicate(timeout=1800)
        assert damaged.returncode == 0 and out == expected
        (line,) = err.splitlines()
        assert line.startswith("warning: numba's disk cache of the compiled kernels could not be used")
        rebuilt = _big_run(cache, pycache, torus)
        out, err = rebuilt.communicate(timeout=1800)
        assert (rebuilt.returncode, out, err) == (0, expected, "")


def test_each_kernel_is_compiled_for_one_signature_whatever_the_callers_arrays():
    """Processes sharing a cache stay consistent only if each kernel has one signature (see
    trnsim.routing.jitcache): strided views and narrow distance types are normalised first."""
    import numpy as np

    from trnsim.routing import kernels
    from trnsim.routing.shortest import bfs, transit_mask
    from trnsim.topology.arrays import graph_arrays
    from trnsim.topology.load import load_topology

    topology = load_topology("trn1-nl16")
    arrays = graph_arrays(topology)
    transit = transit_mask(arrays, True)
    every = np.arange(arrays.n_nodes)
    for sources in (every, every[::2]):  # contiguous, then a strided view
        reference = bfs(arrays, sources, transit)
        kernels.bfs_all(arrays, sources, transit, columns=every[::2])
        flows = (np.arange(4), np.arange(4, 8), np.ones(4), np.zeros(4, dtype=np.int64))
        for dist in (reference.dist, reference.dist.astype(np.int16)):
            kernels.flow_loads(arrays, dist, reference.sigma, sources, flows, 1, transit)
        kernels.hop_counts(arrays, sources, transit)
        for starts, order in (
            (arrays.out_edges[1], arrays.out_edges[0]),
            kernels.csr(arrays.src, arrays.n_nodes),
        ):
            for demand in (
                np.ones(arrays.n_nodes, dtype=np.float32),
                np.ones((len(sources), arrays.n_nodes))[:, ::1],
            ):
                csr = (starts.astype(np.int32), np.stack([order, order], axis=1)[:, 0])  # a strided view
                kernels.demand_loads(arrays.src, arrays.dst, arrays.n_nodes, sources, None, demand, csr)
    compiled = sys.modules["trnsim.routing._compiled"]
    names = ("bfs_all", "flow_loads", "hop_counts", "nearby", "ecmp_demand")
    assert [len(getattr(compiled, name).signatures) for name in names] == [1] * len(names)
