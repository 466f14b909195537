"""The same command prints the same bytes whatever Python's string hashing (PYTHONHASHSEED): no
result, order or name may follow the iteration order of a set of strings (commit 005aeab fixed one
that did; tests/collectives/test_dimensions.py keeps that case)."""

import os
import subprocess
import sys

import pytest

SEEDS = (0, 1, 12345)
COMMANDS = [
    "collective allreduce --sku nl72x2 --format json",
    "collective alltoall --sku nl72x2 --groups rack:* --skew 2:4 --sizes 1M,1G --format json",
    "topo show nl72x2 --format json",  # a switched system: its switch roles, classes and cuts
    "topo show nl72x2",
    "faults nl16 --random 2 --samples 20 --seed 7 --sizes 1G --format json",
    "compare allgather --sku nl16 --sku nl16:fail=chip:3 --sizes 1M,1G --format csv",
]


def _run(seed: int, command: str) -> tuple[int, bytes, bytes]:
    env = {**os.environ, "PYTHONHASHSEED": str(seed), "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-m", "trnsim", *command.split()], capture_output=True, timeout=600, env=env
    )
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_prints_the_same_bytes_under_every_hash_seed(command):
    runs = {seed: _run(seed, command) for seed in SEEDS}
    code, out, err = runs[SEEDS[0]]
    assert code == 0 and out, err.decode()
    for seed in SEEDS[1:]:
        assert runs[seed] == (code, out, err), f"PYTHONHASHSEED={seed} printed other bytes than {SEEDS[0]}"
