"""Output files are written whole or not at all, keep their permissions, and never replace an input."""

import json
import os
import stat
import subprocess
import sys
import threading

import pytest

from trnsim import atomic
from trnsim.errors import UsageError


def _leftovers(folder):
    return sorted(name for name in os.listdir(folder) if name.endswith(".tmp"))


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_write_that_fails_halfway_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch, failure):
    target = tmp_path / "baseline.json"
    target.write_text("the old content\n")
    written = []

    def half_then_fail(fd, data):
        os.write(fd, data[: len(data) // 2])
        written.append(len(data) // 2)
        raise failure

    monkeypatch.setattr(atomic, "_write_all", half_then_fail)
    with pytest.raises(UsageError if isinstance(failure, OSError) else KeyboardInterrupt) as caught:
        atomic.write_atomic(target, "x" * 100_000)
    assert written == [50_000]  # the writer did get halfway
    assert target.read_text() == "the old content\n"
    assert _leftovers(tmp_path) == []
    if isinstance(failure, OSError):
        assert str(caught.value) == f"cannot write {target}: No space left on device"


def test_a_failed_rename_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "report.html"
    target.write_text("old")

    def refuse(source, destination):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(atomic.os, "replace", refuse)
    with pytest.raises(UsageError, match="Input/output error"):
        atomic.write_atomic(target, "new")
    assert target.read_text() == "old" and _leftovers(tmp_path) == []


def test_an_existing_file_keeps_its_permission_bits_and_a_new_one_follows_the_umask(tmp_path):
    kept = tmp_path / "kept.yaml"
    kept.write_text("old")
    os.chmod(kept, 0o640)
    atomic.write_atomic(kept, "new")
    assert kept.read_text() == "new" and stat.S_IMODE(kept.stat().st_mode) == 0o640
    previous = os.umask(0o027)
    try:
        fresh = tmp_path / "fresh.yaml"
        atomic.write_atomic(fresh, "new")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~0o027


def test_a_writable_file_in_a_folder_we_cannot_write_is_written_in_place(tmp_path, monkeypatch):
    import tempfile

    target = tmp_path / "shared.json"
    target.write_text("a longer old content")

    def no_new_files(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", no_new_files)
    atomic.write_atomic(target, "new")
    assert target.read_text() == "new"
    with pytest.raises(UsageError, match="Permission denied"):  # and a new file cannot be made there
        atomic.write_atomic(tmp_path / "new.json", "new")


def test_a_symlink_keeps_pointing_at_the_file_it_names(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    atomic.write_atomic(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_a_device_is_written_in_place():
    atomic.write_atomic("/dev/null", "nothing to keep")  # os.replace would need to replace /dev/null


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any file")
def test_a_read_only_file_is_refused_as_before(tmp_path):
    target = tmp_path / "locked.json"
    target.write_text("old")
    os.chmod(target, 0o444)
    with pytest.raises(UsageError, match="Permission denied"):
        atomic.write_atomic(target, "new")
    assert target.read_text() == "old"


def test_a_protected_input_is_refused_through_relative_paths_symlinks_and_hard_links(tmp_path, monkeypatch):
    source = tmp_path / "in.yaml"
    source.write_text("input")
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.yaml").symlink_to(source)
    os.link(source, tmp_path / "hard.yaml")
    monkeypatch.chdir(tmp_path)
    with atomic.protecting([(f"--topology {source}", source)]):
        for name in ("in.yaml", "sub/../in.yaml", "link.yaml", "hard.yaml", str(source)):
            with pytest.raises(UsageError, match=f"same file as --topology {source}"):
                atomic.write_atomic(name, "output")
        atomic.write_atomic("other.yaml", "output")  # anything else is fine
    assert source.read_text() == "input"
    atomic.write_atomic("in.yaml", "output")  # outside the block nothing is protected
    assert source.read_text() == "output"


def _document(n: int) -> str:
    # writers of different lengths: a shorter file written over a longer one in place would keep
    # the longer one's tail
    return json.dumps({"writer": n, "rows": [n] * (50_000 * (n + 1))}) + "\n"


def _read_while(target, busy) -> tuple[int, list[str]]:
    """Read ``target`` over and over while ``busy()``: how many reads, and those that were not a whole
    document (a half-written file, or one emptied for writing)."""
    reads, broken = 0, []
    while busy():
        try:
            text = target.read_text()
        except FileNotFoundError:
            continue
        reads += 1
        try:
            json.loads(text)
        except ValueError:
            broken.append(f"{len(text)} bytes")
    return reads, broken


def test_threads_writing_one_file_leave_one_writers_whole_file_and_readers_never_see_half(tmp_path):
    target = tmp_path / "baseline.json"
    start = threading.Barrier(4)

    def write(n):
        start.wait()
        for _ in range(20):
            atomic.write_atomic(target, _document(n))

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    reads, broken = _read_while(target, lambda: any(thread.is_alive() for thread in threads))
    for thread in threads:
        thread.join()
    assert broken == [] and reads > 0
    document = json.loads(target.read_text())
    assert document["rows"] == [document["writer"]] * (50_000 * (document["writer"] + 1))
    assert _leftovers(tmp_path) == []


def test_processes_saving_one_baseline_at_once_leave_one_whole_valid_baseline(tmp_path):
    """Processes saving the same baseline at once: the last writer wins with a whole file, which
    trnsim's own reader accepts, and a reader meanwhile only ever sees whole baselines."""
    target = tmp_path / "base.json"
    script = (
        "import sys; from trnsim.studies import baseline\n"
        "n = int(sys.argv[1])\n"
        "rows = [{'variant': f'v{n}', 'op': 'allreduce', 'group': 'all', 'algo': 'auto', 'dtype': 'float',"
        " 'alpha_us': None, 'max_chunks': None, 'min_chunk_bytes': None, 'requested_bytes': b,"
        " 'bytes': b, 'time_us': 1.0, 'busbw_gbps': float(n), 'efficiency': 0.5, 'algorithm': 'ring'}"
        " for b in range(1, 1000 * (n + 2) + 1)]\n"
        "for _ in range(20):\n"
        "    baseline.save(sys.argv[2], rows, [{'label': f'v{n}'}], {'command': 'compare'})\n"
    )
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(n), str(target)], stderr=subprocess.PIPE, text=True
        )
        for n in range(4)
    ]
    reads, broken = _read_while(target, lambda: any(writer.poll() is None for writer in writers))
    errors = [writer.communicate()[1] for writer in writers]
    assert [writer.returncode for writer in writers] == [0] * 4, errors
    assert broken == []
    from trnsim.studies import baseline

    saved = baseline.load(target)
    (winner,) = {row["variant"] for row in saved["rows"]}
    assert len(saved["rows"]) == 1000 * (int(winner[1:]) + 2)
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["topo", "export", "nl16", "-o", "OUT.graphml"],
        ["topo", "draw", "nl16", "-o", "OUT.png"],
        [
            "calibrate",
            "MEASURED",
            "--sku",
            "nl16",
            "--ranks-per-chip",
            "1",
            "--fit",
            "step_ns",
            "-o",
            "OUT.yaml",
        ],
        ["collective", "allreduce", "--sku", "nl16", "--sizes", "1M", "--export-schedule", "OUT.json"],
        ["collective", "allreduce", "--sku", "nl16", "--sizes", "1M", "--heatmap", "OUT.svg"],
        ["compare", "allreduce", "--sku", "nl16", "--sizes", "1M", "--save-baseline", "OUT.json"],
        ["sweep", "--sku", "nl16", "--op", "allreduce", "--sizes", "1M", "-o", "OUT.csv"],
        ["plot", "allreduce", "--sku", "nl16", "--sizes", "1M,1G", "-o", "OUT.pdf"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_every_command_that_writes_a_file_leaves_the_old_one_when_the_disk_fills(
    cli, tmp_path, monkeypatch, argv
):
    """The writer fails halfway (a full disk) in each command that writes a file: exit 2, one line,
    the old file as it was and no temporary file."""
    from pathlib import Path

    pytest.importorskip("matplotlib")
    measured = Path(__file__).resolve().parents[1] / "examples" / "measurements" / "n2-allreduce-2r-gbs.txt"
    (output,) = [word for word in argv if word.startswith("OUT.")]
    old = tmp_path / output
    old.write_bytes(b"what the user had")
    argv = [str(old) if word == output else str(measured) if word == "MEASURED" else word for word in argv]

    def fail_halfway(fd, data):
        os.write(fd, data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic, "_write_all", fail_halfway)
    result = cli(*argv)
    assert result.code == 2 and result.err.strip().endswith(f"cannot write {old}: No space left on device")
    assert old.read_bytes() == b"what the user had" and _leftovers(tmp_path) == []
