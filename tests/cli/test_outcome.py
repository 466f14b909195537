"""A catalog command asked again prints what it printed before (trnsim.cli.outcome), exactly what it
prints with the cache off, at every width and in every format; an edited file, a what-if or another
option is another request; a run that reads or writes another file is never kept."""

import shutil

import pytest

from tests.conftest import CATALOG

LINES = [
    ("collective", "allreduce", "--sku", "nl72x2"),
    ("collective", "alltoall", "--sku", "nl16", "--sizes", "1M,1G", "--format", "json"),
    ("collective", "allgather", "--sku", "nl64", "--group", "0-15", "--sizes", "1M", "--format", "csv"),
    ("collective", "allreduce", "--sku", "nl16", "--algo", "all", "--sizes", "64K,1G", "--explain"),
    ("collective", "allgather", "--sku", "nl72x2", "--groups", "server:*", "--sizes", "1M"),
    ("collective", "broadcast", "--sku", "nl16", "--root", "3", "--sizes", "1M", "--format", "markdown"),
    ("collective", "allreduce", "--sku", "nl16", "--sizes", "1M", "--range"),
    ("collective", "allreduce", "--sku", "v5e", "--runtime", "xla", "--sizes", "1M,1G"),
    ("collective", "alltoall", "--sku", "nl72x2", "--sizes", "1M", "--fail", "cable:5"),
    ("topo", "show", "nl72x2"),
    ("topo", "show", "nl64", "--set", "torus.axes.z.lanes=8", "--format", "json"),
    ("topo", "list"),
    ("topo", "list", "--format", "csv"),
    ("compare", "alltoall", "--sku", "nl72x2", "--sku", "trn3-nl72x2-gen3", "--sizes", "1M,1G"),
    (
        "compare",
        "allreduce",
        "--sku",
        "nl16",
        "--sku",
        "nl16:fail=link:x:0",
        "--sizes",
        "1G",
        "--format",
        "json",
    ),
    ("faults", "nl16", "--op", "allreduce"),
    ("sweep", "--sku", "nl16", "--sku", "nl64", "--op", "allreduce", "--sizes", "1M,1G"),
    ("sweep", "--sku", "nl16", "--sku", "nl32x2", "--op", "alltoall", "--jobs", "2", "--sizes", "1M"),
]


@pytest.fixture
def refuse_work(monkeypatch):
    """``refuse_work(True)``: building a system fails from then on, so what prints was kept."""
    import trnsim.topology
    import trnsim.topology.load

    build = trnsim.topology.load_topology

    def refuse(*args, **kwargs):
        raise AssertionError("the system was built")

    def switch(on: bool) -> None:
        for module in (trnsim.topology, trnsim.topology.load):
            monkeypatch.setattr(module, "load_topology", refuse if on else build)

    return switch


def _off(cli, monkeypatch, *line):
    """The line's result with the cache off."""
    monkeypatch.setenv("TRNSIM_CACHE", "off")
    try:
        return cli(*line)
    finally:
        monkeypatch.delenv("TRNSIM_CACHE")


@pytest.mark.parametrize("line", LINES, ids=" ".join)
def test_asked_again_it_prints_what_it_printed_with_the_cache_off(cli, monkeypatch, refuse_work, line):
    reference = _off(cli, monkeypatch, *line)
    assert reference.code == 0, reference.err
    first = cli(*line)
    refuse_work(True)
    assert cli(*line) == first == reference
    for columns in ("100", "60"):  # another width: printed afresh from what was kept, and kept
        monkeypatch.setenv("COLUMNS", columns)
        wider = cli(*line)
        assert cli(*line) == wider
        refuse_work(False)
        assert wider == _off(cli, monkeypatch, *line)
        refuse_work(True)


def test_wide_prints_every_column_from_what_was_kept(cli, monkeypatch, refuse_work):
    line = ("collective", "allreduce", "--sku", "nl72x2", "--sizes", "1M,1G")
    cli(*line)
    refuse_work(True)
    wide = cli("--wide", *line)
    refuse_work(False)
    assert wide == _off(cli, monkeypatch, "--wide", *line) and "bottleneck" in wide.out


def test_an_edited_file_is_worked_out_afresh(cli, monkeypatch, tmp_path):
    path = tmp_path / "mine.yaml"
    shutil.copy(next(p for p in CATALOG if p.stem == "trn2-nl16"), path)
    line = ("collective", "allreduce", "--topology", str(path), "--sizes", "1G", "--format", "json")
    before = cli(*line)
    path.write_text(path.read_text().replace("default: 0.88", "default: 0.5"))
    after = cli(*line)
    assert after == _off(cli, monkeypatch, *line) and after.out != before.out


@pytest.mark.parametrize(
    "other",
    [
        ("--set", "efficiency.default=0.5"),
        ("--routing", "single"),
        ("--fail", "link:x:0"),
        ("--alpha-us", "2"),
    ],
    ids=" ".join,
)
def test_a_what_if_is_a_request_of_its_own(cli, monkeypatch, other):
    line = ("collective", "allreduce", "--sku", "nl16", "--sizes", "1M,1G", "--format", "json")
    plain = cli(*line)
    changed = cli(*line, *other)
    assert changed.code == 0 and changed.out != plain.out
    assert changed == _off(cli, monkeypatch, *line, *other) and plain == _off(cli, monkeypatch, *line)


def test_a_run_that_reads_or_writes_another_file_is_not_kept(cli, tmp_path):
    import os
    from pathlib import Path

    folder = Path(os.environ["TRNSIM_CACHE_DIR"])
    out = tmp_path / "schedule.json"
    line = ("collective", "allreduce", "--sku", "nl16", "--sizes", "1M", "--algo", "ring")
    assert cli(*line, "--export-schedule", str(out)).code == 0
    assert out.exists() and not list(folder.glob("*/outcome/*"))
    out.unlink()
    assert cli(*line, "--export-schedule", str(out)).code == 0 and out.exists()  # written again
    assert cli(*line).code == 0 and len(list(folder.glob("*/outcome/*"))) == 1


def test_an_error_is_never_kept(cli, monkeypatch):
    line = ("collective", "allreduce", "--sku", "nl16", "--group", "0-99")
    first = cli(*line)
    assert first.code == 2 and cli(*line) == first


@pytest.mark.parametrize(
    "command", [("collective", "allreduce", "--sizes", "1M"), ("topo", "show")], ids=" ".join
)
def test_the_notes_of_loading_the_file_are_said_again(cli, monkeypatch, refuse_work, tmp_path, command):
    text = next(p for p in CATALOG if p.stem == "trn2-nl16").read_text()
    start = text.index("\nefficiency:")
    end = text.index("\n", text.index("\n", start + 1) + 1)
    while text[end + 1 : end + 2] in (" ", "\n"):  # the section's indented lines
        end = text.index("\n", end + 1)
    path = tmp_path / "raw.yaml"
    path.write_text(text[:start] + text[end:])
    line = (*command, "--topology", str(path))
    reference = _off(cli, monkeypatch, *line)
    assert reference.code == 0 and "no efficiency section" in reference.err
    assert cli(*line) == reference
    refuse_work(True)
    assert cli(*line) == reference


def test_topo_list_builds_only_the_system_whose_file_changed(cli, monkeypatch, tmp_path):
    import trnsim.topology

    folder = tmp_path / "catalog"
    shutil.copytree(CATALOG[0].parent, folder)
    monkeypatch.setenv("TRNSIM_CATALOG", str(folder))
    first = cli("topo", "list", "--format", "json")
    edited = folder / "trn2-nl16.yaml"
    edited.write_text(edited.read_text().replace("default: 0.88", "default: 0.5"))
    built = []
    build = trnsim.topology.load_topology

    def counted(*args, **kwargs):
        built.append(kwargs.get("topology"))
        return build(*args, **kwargs)

    monkeypatch.setattr(trnsim.topology, "load_topology", counted)
    second = cli("topo", "list", "--format", "json")
    assert built == [edited] and second.out != first.out
    assert second == _off(cli, monkeypatch, "topo", "list", "--format", "json")


def test_one_name_for_two_files_is_two_requests(cli, monkeypatch, tmp_path):
    # the same bytes under the same relative name in two folders inside the checkout: a comparison
    # names each file by where it is (baseline.portable), so each folder's output is its own
    import os

    root = CATALOG[0].parent.parent
    folders = [root / "build" / f"outcome-{os.getpid()}-{n}" for n in range(2)]
    try:
        for folder in folders:
            folder.mkdir(parents=True)
            shutil.copy(next(p for p in CATALOG if p.stem == "trn2-nl16"), folder / "mine.yaml")
        line = ("compare", "allreduce", "--topology", "mine.yaml", "--sizes", "1M", "--format", "json")
        outs = []
        for folder in folders:
            monkeypatch.chdir(folder)
            outs.append(cli(*line))
            assert outs[-1] == _off(cli, monkeypatch, *line)
        assert outs[0].out != outs[1].out
    finally:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
