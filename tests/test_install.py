"""A wheel of the checkout installs a trnsim that works from any folder, catalog included."""

import json
import os
import shutil
import site
import subprocess
import sys
import tomllib
import venv
from importlib.util import find_spec
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
BIN = "Scripts" if os.name == "nt" else "bin"
# a build of the copy must not see what an in-tree build or the editable install leaves behind
NOT_SOURCE = (".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis")


def _run(args, cwd, **env) -> subprocess.CompletedProcess:
    """Run a command, failing loudly; without TRNSIM_CATALOG or PYTHONPATH, which could hide a broken install."""
    environ = {k: v for k, v in os.environ.items() if k not in {"TRNSIM_CATALOG", "PYTHONPATH"}}
    result = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, f"{args} exited {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    """A new venv holding a wheel of the checkout; this environment's packages but not its trnsim."""
    if find_spec("pip") is None:
        pytest.skip("pip is not installed in this environment")
    tmp = tmp_path_factory.mktemp("install")
    # build from a clean copy: an in-tree build reuses build/lib, which keeps files deleted since
    source = tmp / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCE))
    wheels = tmp / "wheels"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", wheels, source],
        cwd=tmp,
    )
    (wheel,) = wheels.glob("trnsim-*.whl")

    env = tmp / "venv"
    venv.create(env, with_pip=False)
    python = env / BIN / "python"
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=tmp)
    # A path line in a .pth only extends sys.path: the .pth files in those folders (the editable
    # trnsim's finder among them) do not run, so the dependencies are visible and our trnsim is not.
    (Path(purelib.stdout.strip()) / "_deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    _run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", wheel],
        cwd=tmp,
    )
    return env


def test_the_fresh_venv_imports_the_wheel_not_the_checkout(fresh, tmp_path):
    probe = (
        "import json, sys, trnsim; from trnsim.spec.catalog import catalog_dir; "
        "print(json.dumps([trnsim.__file__, str(catalog_dir()), sorted(sys.modules)]))"
    )
    package, catalog, modules = json.loads(_run([fresh / BIN / "python", "-c", probe], cwd=tmp_path).stdout)
    assert Path(package).is_relative_to(fresh)
    assert Path(catalog).is_relative_to(fresh)
    assert not [name for name in modules if name.startswith("__editable__")]


def test_topo_list_shows_every_catalog_file(fresh, tmp_path):
    listed = json.loads(
        _run([fresh / BIN / "trnsim", "topo", "list", "--format", "json"], cwd=tmp_path).stdout
    )
    names = {
        yaml.safe_load(path.read_text(encoding="utf-8"))["name"]
        for path in (ROOT / "topologies").glob("*.yaml")
    }
    assert names
    assert {sku["name"] for sku in listed["skus"]} == names


def test_the_parts_catalog_ships_with_the_package(fresh, tmp_path):
    bill = json.loads(
        _run([fresh / BIN / "trnsim", "topo", "cost", "nl72x2", "--format", "json"], cwd=tmp_path).stdout
    )
    shipped = yaml.safe_load((ROOT / "topologies" / "parts" / "parts.yaml").read_text(encoding="utf-8"))[
        "parts"
    ]
    assert {line["part"] for line in bill["lines"]} <= set(shipped)
    assert all(Path(line["origin"]).is_relative_to(fresh) for line in bill["lines"])


def test_a_catalog_alias_resolves(fresh, tmp_path):
    args = ["collective", "allreduce", "--sku", "nl72x2", "--sizes", "1M", "--format", "json"]
    result = json.loads(_run([fresh / BIN / "trnsim", *args], cwd=tmp_path).stdout)
    assert result["sku"] == "trn3-nl72x2-gen1"


def test_the_ci_example_runs_against_the_installed_command(fresh, tmp_path):
    script = ROOT / "examples" / "ci" / "compare-nl72x2.sh"
    artifacts = tmp_path / "artifacts"
    _run(["bash", script], cwd=tmp_path, TRNSIM=str(fresh / BIN / "trnsim"), OUT=str(artifacts))
    assert {path.name for path in artifacts.iterdir()} >= {"compare-alltoall.md", "compare-allreduce.md"}


def test_every_package_is_listed_in_pyproject():
    # the catalog's package-dir mapping rules out packages.find, so a new subpackage must be named
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"]
    )
    found = {".".join(init.parent.relative_to(ROOT).parts) for init in (ROOT / "trnsim").rglob("__init__.py")}
    # and the folders of data files that ship as packages (no __init__.py: nothing to import)
    assert listed == found | {"trnsim.topologies", "trnsim.spec.templates", "trnsim.measurements"}


def test_topo_new_writes_the_shipped_template(fresh, tmp_path):
    for kind in ("torus", "switched"):
        _run([fresh / BIN / "trnsim", "topo", "new", kind, "-o", f"{kind}.yaml"], cwd=tmp_path)
        _run([fresh / BIN / "trnsim", "topo", "validate", f"{kind}.yaml"], cwd=tmp_path)


def test_validate_finds_the_shipped_published_runs(fresh, tmp_path):
    environ = {k: v for k, v in os.environ.items() if k not in {"TRNSIM_CATALOG", "PYTHONPATH"}}
    result = subprocess.run(
        [str(fresh / BIN / "trnsim"), "validate", "--format", "json"],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode in (0, 1), result.stderr  # 1 only if a predicted row is outside its gate
    runs = json.loads(result.stdout)["runs"]
    shipped = sorted((ROOT / "examples" / "measurements" / "runs").glob("*.yaml"))
    assert len(runs) == len(shipped) > 0
