"""Allow ``python -m trnsim``."""

from trnsim.cli.app import main

main()
