"""Every table of every command fits 80 columns over the catalog, or leaves columns out and says which.

Off a terminal with COLUMNS unset a table is fitted to 80 columns, as on an 80-column terminal; every
line printed (title, header, rows, footers) must fit, and a left-out column is named on a line that
says how to see it.
"""

import pytest

from tests.conftest import CATALOG, topology

SKUS = [path.stem for path in CATALOG]
WIDTH = 80


@pytest.fixture(autouse=True)
def _eighty_columns(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)


def _per_system(sku: str) -> list[str]:
    lines = [
        f"topo show {sku}",
        f"topo hops {sku}",
        f"topo hops {sku} --from 1",
        f"topo path {sku} 0 3 --routing single",
        f"collective allreduce --sku {sku} --sizes 1K,1G",
        f"collective allreduce --sku {sku} --sizes 1M,1G --algo all --explain",
        f"collective alltoall --sku {sku} --sizes 1M --routing hash:2 --explain",
        f"faults {sku} --op allreduce --sizes 1M --kind chip --domains 10 --random 1 --samples 2",
    ]
    system = topology(sku)
    if system.n_ranks <= 144:  # a matrix of 256 ranks shows the same as one of 144, slowly
        lines.append(f"topo hops {sku} --matrix")
    if system.spec.scale_out is not None:
        lines += [
            f"cluster fabric --sku {sku} --domains 16",
            f"cluster collective allreduce --sku {sku} --domains 16 --sizes 1M,1G",
        ]
    return lines


OTHERS = [
    "topo list",
    "collective algorithms",
    "topo validate " + " ".join(f"topologies/{sku}.yaml" for sku in SKUS),
    "compare allreduce " + " ".join(f"--sku {sku}" for sku in SKUS) + " --sizes 1M,1G",
    "compare alltoall --sku nl32x2 --sku nl72x2 --routing ecmp --routing single --routing hash --sizes 1G",
    "sweep --sku nl16 --sku nl72x2 --sizes 1M --groups tray:*",
    "collective allreduce --sku nl72x2 --groups server:* --routing hash:2 --sizes 1M --explain",
    "collective alltoall --sku nl72x2 --skew 2:4 --sizes 256M --explain",
    "layout --sku nl72x2 --ep 72 --tp 2 --size ep=64M,tp=16M --compare-mappings",
    "layout --sku nl64 --ep 16 --tp 4 --hidden 7168 --tokens 8192 --topk 8 --layers 60 --compare-mappings",
    "faults nl64 trn2-nl256-concept nl32x2 nl72x2 --op allreduce --sizes 1M --kind chip --domains 100",
    "calibrate examples/measurements/n5-allgather-32r.txt --sku trn1-nl16",
    "calibrate examples/measurements/g4-allreduce-4r-ring.txt --sku gb200-nvl72 --group 0-3 --algo ring "
    "--fit-sizes 64M: --fit collective_ns,efficiency",
]


def _check(cli, line: str) -> None:
    result = cli(*line.split())
    assert result.code == 0, (line, result.err)
    too_wide = [text for text in result.out.splitlines() if len(text) > WIDTH]
    assert not too_wide, (line, too_wide[:3])
    if "not shown to fit" in result.out:
        note = " ".join(result.out.split(f"not shown to fit {WIDTH} columns: ")[1].split())
        assert "--wide" in note and "--format json|csv|markdown" in note, note


@pytest.mark.parametrize("sku", SKUS)
def test_every_table_of_a_system_fits_80_columns(cli, monkeypatch, sku):
    monkeypatch.chdir(CATALOG[0].parent.parent)
    for line in _per_system(sku):
        _check(cli, line)


@pytest.mark.parametrize("line", OTHERS)
def test_every_other_table_fits_80_columns(cli, monkeypatch, line):
    monkeypatch.chdir(CATALOG[0].parent.parent)
    _check(cli, line)


def test_wide_and_columns_show_what_80_columns_leave_out(cli, monkeypatch):
    monkeypatch.chdir(CATALOG[0].parent.parent)
    narrow = cli("topo", "list")
    dropped = " ".join(narrow.out.split("not shown to fit 80 columns: ")[1].split()).split(";")[0].split(", ")
    assert dropped and all(name not in narrow.out.split("not shown")[0] for name in ("aliases", "file"))
    for wide in (cli("topo", "list", "--wide"), cli("--wide", "topo", "list")):
        assert "not shown" not in wide.out and max(len(text) for text in wide.out.splitlines()) > WIDTH
        header = next(text for text in wide.out.splitlines() if text.startswith("┃"))
        assert all(name in header for name in dropped)
    monkeypatch.setenv("COLUMNS", "300")
    assert cli("topo", "list").out == cli("topo", "list", "--wide").out
