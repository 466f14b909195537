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


class NotApplicable(Exception):
    """An algorithm cannot run this op on this group, or its flows cannot be routed as asked; the
    message says why. The caller skips that algorithm (an algorithm asked for by name is reported as
    :class:`NotApplicableError`)."""


class ThresholdError(TrnsimError):
    """A comparison failed its threshold (exit code 1)."""

    exit_code = EXIT_THRESHOLD


EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a Ctrl-C


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwind (temporary files go, worker processes stop) and exit
    128 + the signal's number. A BaseException, so that no ``except Exception`` swallows it."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.exit_code = 128 + signum


def printable(text: str, newlines: bool = False) -> str:
    """``text`` with control and format characters (a bell, a terminal escape, a bidi override)
    shown as escapes such as ``\\x07``, so that printing or drawing it shows what it holds and does
    nothing else; line breaks and tabs become spaces unless ``newlines`` (then only tabs do)."""
    import unicodedata

    shown = []
    for char in text:
        if char == "\n" and newlines:
            shown.append(char)
        elif char in "\n\r\t":
            shown.append(" ")
        elif unicodedata.category(char)[0] == "C":
            shown.append(char.encode("unicode_escape").decode("ascii"))
        else:
            shown.append(char)
    return "".join(shown)
