"""Errors that trnsim reports to users, each mapped to an exit code in one place."""

EXIT_OK = 0
EXIT_THRESHOLD = 1
EXIT_USAGE = 2


class TrnsimError(Exception):
    """An error with a one-line message meant for the user (no traceback)."""

    exit_code = EXIT_USAGE


class ConfigError(TrnsimError):
    """A topology file that cannot be read, parsed or validated."""


class HardwareError(ConfigError):
    """A topology that asks for more ports or lanes than a device has."""


class UsageError(TrnsimError):
    """Bad command-line input: an unknown SKU, a malformed size, a group naming missing chips."""


class FileAsSkuError(UsageError):
    """A file path given where a catalog SKU name goes; the CLI adds the option that takes files."""


class NotApplicableError(UsageError):
    """An algorithm asked for by name cannot run this op on this group."""


class ThresholdError(TrnsimError):
    """A comparison failed its threshold (exit code 1)."""

    exit_code = EXIT_THRESHOLD
