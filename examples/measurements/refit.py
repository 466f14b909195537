"""Refit every calibration of manifest.yaml: `python examples/measurements/refit.py` (needs trnsim installed)."""

import subprocess
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent  # paths in the command lines (and so in the files) are relative to the checkout
FOLDER = HERE.relative_to(ROOT)


def trnsim() -> str:
    """The trnsim next to this Python (a venv's), else the one on PATH."""
    beside = Path(sys.executable).parent / "trnsim"
    return str(beside) if beside.exists() else "trnsim"


def command(name: str, entry: dict, output: Path | None = None) -> list[str]:
    """The `trnsim calibrate` command line for one manifest entry."""
    args = [trnsim(), "calibrate", str(FOLDER / name), "--sku", entry["sku"]]
    for edit in entry.get("set", []):
        args += ["--set", edit]
    for key in ("group", "fit", "algo", "loss", "fit_sizes"):
        if key in entry:
            args += [f"--{key.replace('_', '-')}", str(entry[key])]
    if output is not None:
        args += ["-o", str(output)]
    return args


def calibration_name(name: str) -> str:
    """``n5-allgather-32r.txt`` -> ``n5-allgather-32r.yaml``; a JSON run keeps ``-json`` in its name."""
    path = Path(name)
    return f"{path.stem}.yaml" if path.suffix == ".txt" else f"{path.stem}-{path.suffix[1:]}.yaml"


def main() -> int:
    manifest = yaml.safe_load((HERE / "manifest.yaml").read_text())["runs"]
    for name, entry in manifest.items():
        if "sku" not in entry or "predict_with" in entry:
            continue
        output = FOLDER / "calibrations" / calibration_name(name)
        args = command(name, entry, output)
        print("trnsim " + " ".join(args[1:]), flush=True)
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
