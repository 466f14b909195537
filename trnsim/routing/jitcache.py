"""numba kernels whose disk cache fails soft.

numba keeps compiled kernels on disk (``cache=True``): next to the code in ``__pycache__`` when that
folder is writable, else in the user's cache folder, or in ``$NUMBA_CACHE_DIR`` when it is set. When
that cache is damaged (a truncated ``.nbc``, a garbage ``.nbi``) numba fails every call, and with no
writable folder at all it fails the import ("no locator available"). :class:`Compiled` catches what
numba's cache raises, loads a second copy of the kernels' module that compiles without the cache,
warns once, and empties the damaged cache's index so that the next run rebuilds it.

A kernels' module opts in by reading its caching from its globals before it decorates:
``CACHE = globals().get("CACHE", True)`` and ``numba.njit(cache=CACHE, ...)``.

Processes that share a cache are safe with numba's own writes (each file is written aside and
renamed over) as long as each kernel is compiled for one signature only: a cache index names its
data files by number, and two processes saving different signatures at once could leave an index
entry pointing at the other's data. Callers therefore pass contiguous arrays of fixed dtypes.
"""

import contextlib
import importlib
import importlib.util
import os
import sys
import traceback
import warnings
from pathlib import Path


class CacheWarning(UserWarning):
    """numba's disk cache could not be used; the kernels were compiled without it."""


class Compiled:
    """The numba module ``name``, imported on first use; see the module's description."""

    def __init__(self, name: str):
        self.name = name
        self.module = None

    def call(self, kernel: str, *args):
        """Run ``kernel``; if numba's disk cache fails it, compile it without the cache and rerun."""
        module = self._module()
        try:
            return getattr(module, kernel)(*args)
        except Exception as exc:
            if not module.CACHE or not from_cache(exc):
                raise
            reset_cache(module)
            module = self._uncached(exc)
        return getattr(module, kernel)(*args)

    def _module(self):
        if self.module is None:
            try:
                self.module = importlib.import_module(self.name)
            except Exception as exc:  # numba finds no folder to cache in ("no locator available")
                if not from_cache(exc):
                    raise
                self._uncached(exc)
        return self.module

    def _uncached(self, error: BaseException):
        """A second copy of the module, ``CACHE`` set False before its decorators run, in place of
        the first from now on; one warning says why and where the cache is."""
        spec = importlib.util.find_spec(self.name)
        module = importlib.util.module_from_spec(spec)
        module.CACHE = False
        # numba looks a kernel's globals (the other kernels it calls) up by its module's name
        sys.modules[self.name] = module
        spec.loader.exec_module(module)
        self.module = module
        where = (
            os.environ.get("NUMBA_CACHE_DIR") or "__pycache__ next to trnsim's code, else the user's cache"
        )
        warnings.warn(
            f"numba's disk cache of the compiled kernels could not be used ({type(error).__name__}: "
            f"{error}); compiled them without it, which costs seconds per run (the cache: {where}; "
            "NUMBA_CACHE_DIR names a writable folder for it; a damaged cache is rebuilt on the next run)",
            CacheWarning,
            stacklevel=3,
        )
        return module


def from_cache(error: BaseException) -> bool:
    """Whether ``error`` was raised by numba's disk cache (reading, writing or locating it)."""
    frames = traceback.extract_tb(error.__traceback__)
    return any(Path(frame.filename).parts[-3:] == ("numba", "core", "caching.py") for frame in frames)


def reset_cache(module) -> None:
    """Empty the index of each kernel's disk cache (best effort), so that the next run compiles and
    caches them afresh instead of tripping over the same damaged file."""
    try:
        from numba.core.caching import FunctionCache
        from numba.core.dispatcher import Dispatcher
    except ImportError:
        return
    for value in vars(module).values():
        if isinstance(value, Dispatcher):
            with contextlib.suppress(Exception):
                FunctionCache(value.py_func).flush()
