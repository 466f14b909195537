"""What a command line imports: run in a fresh interpreter (nothing imported beforehand), with an
empty disk cache, as the start-up tests ask."""

import json
import subprocess
import sys

_RUN = (
    "import json, sys\n"
    "from trnsim.cli.app import main\n"
    "try:\n"
    "    main(sys.argv[1:])\n"
    "except SystemExit as exc:\n"
    "    assert exc.code in (0, None), exc.code\n"
    "print(json.dumps(sorted(sys.modules)))\n"
)


def modules_imported_by(line, cache_dir) -> set[str]:
    """The names in ``sys.modules`` after ``trnsim LINE`` ran (it must exit 0)."""
    done = subprocess.run(
        [sys.executable, "-c", _RUN, *line],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "", "COLUMNS": "200", "TRNSIM_CACHE_DIR": str(cache_dir)},
    )
    return set(json.loads(done.stdout.splitlines()[-1]))
