"""Output files written whole or not at all, and never over a file the run reads.

Every file trnsim writes goes through :func:`write_atomic`: the bytes go to a temporary file in the
target's folder, reach the disk (``fsync``), and the temporary file is renamed over the target in one
step (``os.replace``). A crash, Ctrl-C, SIGTERM or a full disk leaves the old file as it was and no
temporary file behind; two processes writing one file leave a whole file, the last writer's.

The command line names the files a run reads (:func:`protecting`), and checks its outputs against
them before any work, naming the options; writing over one of them is refused here too, as the last
line of defence (for file names a command derives, such as one heatmap per variant).
"""

import contextlib
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from trnsim.errors import UsageError

_PROTECTED: list[tuple[str, Path]] = []
# temporary files being written, so that a process stopped by a signal can remove them before it
# leaves (trnsim.cli.entry): the old files stay as they were
_PENDING: set[str] = set()


def discard_pending() -> None:
    """Remove every temporary file still being written (the targets are untouched)."""
    for temporary in list(_PENDING):
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        _PENDING.discard(temporary)


def same_file(a: os.PathLike | str, b: os.PathLike | str) -> bool:
    """Whether two paths name one file: the same file on disk (through symlinks and hard links), or,
    when either does not exist yet, the same path once relative parts and symlinks are resolved."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # a missing file, or a name the system cannot hold
        return os.path.realpath(a) == os.path.realpath(b)


@contextlib.contextmanager
def protecting(inputs: Iterable[tuple[str, Path]]) -> Iterator[None]:
    """While the block runs, refuse to write over any of ``inputs``: ``(description, path)`` pairs,
    the description saying how the run was given the file (``--topology in.yaml``), for messages."""
    saved = list(_PROTECTED)
    _PROTECTED[:] = saved + list(inputs)
    try:
        yield
    finally:
        _PROTECTED[:] = saved


def refuse_inputs(path: os.PathLike | str, option: str | None = None) -> None:
    """Raise :class:`UsageError` if ``path`` is a file the run reads (see :func:`protecting`); the
    message names the ``option`` that gave ``path``, when known."""
    for described, protected in _PROTECTED:
        if same_file(path, protected):
            raise UsageError(
                f"{option} {path} is the same file as {described}: an output never replaces an input; "
                "give another file name"
                if option
                else f"cannot write {path}: it is the same file as {described}, which this run reads "
                "(an output never replaces an input)"
            )


def write_atomic(path: os.PathLike | str, data: str | bytes, durable: bool = True) -> None:
    """Replace ``path`` by ``data`` (text is written as UTF-8) in one step.

    ``durable`` (the default) makes the file and its rename reach the disk before returning; a file
    that can be lost to a crash of the machine, whose reader checks it (trnsim's disk cache: a torn
    entry fails its checksum and is computed again), can skip those waits (a few ms each).

    A symlink keeps pointing at the file it names, which is the one replaced; an existing file keeps
    its permission bits (and, where the system allows, its owner), a new one gets the umask's. A
    device or a pipe (``-o /dev/stdout``) has nothing to replace and is written in place.

    Raises
    ------
    UsageError
        If ``path`` is a file the run reads (see :func:`protecting`), or the system refuses the
        write (a missing or read-only folder, a full disk): one line naming the file.
    """
    path = Path(path)
    refuse_inputs(path)
    data = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    target = Path(os.path.realpath(path))
    try:
        _replace(target, data, durable)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _replace(target: Path, data: bytes, durable: bool = True) -> None:
    import tempfile

    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        with open(target, "wb") as stream:  # a device or a pipe: nothing to swap, nothing to keep
            stream.write(data)
        return
    if info is not None and not os.access(target, os.W_OK):
        # a read-only file is one its owner protects: refuse, as writing in place would
        raise PermissionError(13, "Permission denied (the file is read-only)")
    mode = stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask()
    try:
        fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        _PENDING.add(temporary)
    except PermissionError:
        if info is None:
            raise
        # a writable file in a folder that is not (a shared folder, a file made writable for us):
        # the file can only be written in place, as it always was before
        with open(target, "r+b") as stream:
            stream.write(data)
            stream.truncate()
        return
    try:
        try:
            _write_all(fd, data)
            os.fchmod(fd, mode)
            if info is not None and (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
                with contextlib.suppress(OSError):  # only root may give a file away: keep trying
                    os.fchown(fd, info.st_uid, info.st_gid)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
    except BaseException:  # an error, Ctrl-C or SIGTERM: the old file stays, the half-written goes
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    finally:
        _PENDING.discard(temporary)
    if durable:
        _sync_folder(target.parent)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _umask() -> int:
    """The process's umask (read by setting it, as POSIX offers no other way, and set back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable; best effort (some file systems refuse a folder's fsync)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
