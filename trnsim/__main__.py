"""Allow ``python -m trnsim``."""

from trnsim.cli.entry import main

main()
