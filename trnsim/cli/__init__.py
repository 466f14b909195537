"""The command-line interface: parses arguments and renders; no model logic lives here."""
