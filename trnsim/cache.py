"""trnsim's disk cache: results that do not change between runs, kept for the next run.

A catalog command asks the same questions every time it runs (the exact bound of a system, the rows
of a request), and the answers depend only on what is asked, the system's file and trnsim itself.
They are kept here, like numba's cache of compiled kernels:

* **Where.** ``$TRNSIM_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/trnsim``, else ``~/.cache/trnsim``;
  ``TRNSIM_CACHE=off`` turns the cache off (nothing is read or written). Deleting the folder clears it.
* **Keys.** An entry's key is a digest of everything its value depends on (the caller names it: a
  built system's digest, the options of a request, ...) and of the ``TRNSIM_*`` environment
  variables. Entries live in a folder per *version*: trnsim's own files (each one's path, size and
  modification time, as numba keys on its source file, and the version number), the Python and
  numpy versions and the installed packages (each ``site-packages`` folder's modification time).
  Editing trnsim, upgrading it or a dependency starts a new folder; the newest few are kept.
* **Safety.** An entry is written whole (:func:`trnsim.atomic.write_atomic`), so concurrent runs
  (``sweep --jobs``) read a whole entry or none, and two writers of one key write the same value. It
  starts with a magic line and a digest of its body: an entry that fails the check or does not load
  is ignored and computed afresh (then replaced); a folder that cannot be written leaves the run
  uncached. Entries are not forced to the disk (no ``fsync``, a few ms each): one a crash of the
  machine tears fails its check. The cache never changes an answer, only how soon it comes.

Entries are Python pickles of trnsim's own values: the folder is trusted as the user's own files are.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:  # the builtin module: ``hashlib`` itself loads OpenSSL, ~20 ms of every start
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python without it
    from hashlib import blake2b

ENV_DIR = "TRNSIM_CACHE_DIR"
ENV_SWITCH = "TRNSIM_CACHE"
_OFF = ("off", "0", "no", "false")
_MAGIC = b"trnsim-cache 1\n"
_DIGEST = 32  # bytes of the body's digest after the magic line
_KEEP_VERSIONS = 4  # version folders kept when a new one starts
MAX_ENTRY_BYTES = 64 << 20  # a larger value is not kept (it would cost more to read than to make)


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()  # what :func:`recall` returns for no (usable) entry


def enabled() -> bool:
    """Whether the cache is on (``TRNSIM_CACHE`` is not ``off``)."""
    return os.environ.get(ENV_SWITCH, "").strip().lower() not in _OFF


def root() -> Path:
    """The cache's folder (see the module's description); it may not exist yet."""
    given = os.environ.get(ENV_DIR, "").strip()
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".cache") / "trnsim"


class Unkeyable(ValueError):
    """Parts that make no key (text that is not Unicode, such as a command line's undecodable bytes;
    a value of no known form): what they would key is computed and not kept."""


def digest(*parts: Any) -> str:
    """A hex digest of ``parts``: anything msgspec encodes (numbers, strings, lists, dicts, structs;
    sets and dicts in sorted order, so the same on every run), numpy values as lists, paths as text.

    Raises
    ------
    Unkeyable
        For parts that cannot be encoded.
    """
    import msgspec

    try:
        encoded = msgspec.msgpack.encode(parts, enc_hook=_encode, order="deterministic")
    except (UnicodeError, TypeError, ValueError, OverflowError) as exc:
        raise Unkeyable(str(exc)) from None
    return blake2b(encoded, digest_size=20).hexdigest()


def _encode(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return value.tolist()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if hasattr(value, "value") and hasattr(type(value), "__members__"):  # an Enum
        return value.value
    raise TypeError(f"cannot key on a {type(value).__name__}")


@functools.cache
def _version() -> str:
    """The digest of the code that computes the values (see the module's description)."""
    import trnsim

    package = os.path.dirname(os.path.realpath(trnsim.__file__))
    files = []
    for folder, subfolders, names in os.walk(package):
        subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
        inside = folder[len(package) :]
        for name in sorted(names):
            if not name.endswith((".pyc", ".pyo")):
                info = os.stat(os.path.join(folder, name))
                files.append((f"{inside}/{name}", info.st_size, info.st_mtime_ns))
    installed = []
    for entry in sys.path:
        if entry.endswith(("site-packages", "dist-packages")):
            with contextlib.suppress(OSError):
                installed.append((entry, os.stat(entry).st_mtime_ns))
    import numpy

    return digest(trnsim.__version__, sys.version, numpy.__version__, files, installed)


def _environment() -> list[tuple[str, str]]:
    """The ``TRNSIM_*`` variables (limits, the catalog's folder) but the cache's own."""
    return sorted(
        (name, value)
        for name, value in os.environ.items()
        if name.startswith("TRNSIM_") and name not in (ENV_DIR, ENV_SWITCH)
    )


def _path(namespace: str, key: str) -> Path:
    return root() / _version()[:16] / namespace / f"{digest(key, _environment())}.bin"


def recall(namespace: str, key: str) -> Any:
    """The value kept under ``key`` (a :func:`digest`), or :data:`MISSING` when there is none, the
    cache is off, or the entry is damaged (it is then ignored)."""
    if not enabled():
        return MISSING
    try:
        with open(_path(namespace, key), "rb") as stream:
            data = stream.read(MAX_ENTRY_BYTES + len(_MAGIC) + _DIGEST + 1)
    except (OSError, ValueError):  # no entry, an unreadable one, a name the system cannot hold, Unkeyable
        return MISSING
    body = data[len(_MAGIC) + _DIGEST :]
    if not data.startswith(_MAGIC) or data[len(_MAGIC) : len(_MAGIC) + _DIGEST] != _checksum(body):
        return MISSING
    try:
        return pickle.loads(body)
    except Exception:  # noqa: BLE001 - a damaged or foreign entry is no answer: compute afresh
        return MISSING


def remember(namespace: str, key: str, value: Any) -> None:
    """Keep ``value`` under ``key`` (best effort: a folder that cannot be written, or a value that
    cannot be kept, leaves the run uncached)."""
    if not enabled():
        return
    try:
        body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - e.g. a value holding a function that cannot be named
        return
    if len(body) > MAX_ENTRY_BYTES:
        return
    from trnsim.atomic import write_atomic
    from trnsim.errors import TrnsimError

    try:
        path = _path(namespace, key)
        if not path.parent.parent.exists():
            _prune(path.parent.parent.parent)
        path.parent.mkdir(parents=True, exist_ok=True)
        # not flushed to the disk: an entry a crash tears fails its checksum and is computed again
        write_atomic(path, _MAGIC + _checksum(body) + body, durable=False)
    except (OSError, ValueError, TrnsimError):  # a folder that cannot be written; Unkeyable
        pass


def cached(namespace: str, key: str, compute: Callable[[], Any]) -> Any:
    """``compute()``, or the value kept under ``key`` from an earlier run (then kept if new)."""
    value = recall(namespace, key)
    if value is MISSING:
        value = compute()
        remember(namespace, key, value)
    return value


def _checksum(body: bytes) -> bytes:
    return blake2b(body, digest_size=_DIGEST).digest()


def _prune(folder: Path) -> None:
    """Before a new version's folder starts: remove all but the newest few others."""
    import shutil

    try:
        versions = sorted(
            (entry for entry in folder.iterdir() if entry.is_dir()), key=lambda e: e.stat().st_mtime
        )
    except OSError:
        return
    for old in versions[: max(0, len(versions) - (_KEEP_VERSIONS - 1))]:
        shutil.rmtree(old, ignore_errors=True)
