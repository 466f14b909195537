"""Errors that trnsim reports to users, each mapped to an exit code in one place."""

EXIT_OK = 0
EXIT_THRESHOLD = 1
EXIT_USAGE = 2


def _as_is(parameter: str) -> str:
    return parameter


class TrnsimError(Exception):
    """An error with a one-line message meant for the user (no traceback).

    The library says what was wrong in its own terms and names no command-line flag. ``see`` names
    the parameters that would fix it (``str()`` ends with ``(see save_baseline)``); the command line
    shows each as the flag that sets it (``(see --save-baseline)``: :meth:`render`, called by
    :func:`trnsim.cli.app.main`).
    """

    exit_code = EXIT_USAGE

    def __init__(self, message: object = "", *, see: str | tuple[str, ...] = ()):
        super().__init__(message)
        self.see = (see,) if isinstance(see, str) else tuple(see)

    def render(self, name=_as_is) -> str:
        """The line, each parameter shown as ``name(parameter)`` (as the library names it by default)."""
        text = _text(self.args[0], name) if self.args else ""
        if self.see:
            text += f" (see {', '.join(map(name, self.see))})"
        return text

    def __str__(self) -> str:
        return self.render()

    def within(self, context: str) -> "TrnsimError":
        """The same error, of the same type and naming the same parameters, with ``context: ``
        before its message (a variant's name, the input it came from)."""
        import copy

        error = copy.copy(self)
        error.args = (f"{context}: {self.args[0] if self.args else ''}",)
        return error


def _text(message: object, name) -> str:
    """A message that may itself be an error (a part of a value's), rendered with the same names."""
    return message.render(name) if isinstance(message, TrnsimError) else str(message)


class ConfigError(TrnsimError):
    """A topology file that cannot be read, parsed or validated."""


class HardwareError(ConfigError):
    """A topology that asks for more ports or lanes than a device has."""


class UsageError(TrnsimError):
    """Bad command-line input: an unknown SKU, a malformed size, a group naming missing chips."""


class ParameterError(UsageError):
    """A bad value for a parameter of the library, said in the library's own terms.

    The message says what was expected and names no command-line flag: the line starts with the
    parameter's name (``alpha_us: must be >= 0, got -1.0``), which the command line shows as the
    flag that set it (``--alpha-us: ...``; :meth:`TrnsimError.render`), so each layer speaks its own
    terms and the user still reads which option was wrong.

    Parameters
    ----------
    message : str or TrnsimError
        What was wrong (an error from a part of the value, e.g. one group of several, keeps the
        parameter it names when shown).
    parameter : str or tuple of str
        The parameter (or parameters, shown joined by ``/``) the error concerns, as the library's
        functions name them (``alpha_us``, ``fail``, ``group``).
    value : str, optional
        The value as the line shows it after the name (already quoted where it is text).
    context : str
        Text before the whole line (:meth:`within`).
    """

    def __init__(
        self,
        message: "str | TrnsimError",
        parameter: str | tuple[str, ...],
        value: str | None = None,
        context: str = "",
    ):
        parameters = (parameter,) if isinstance(parameter, str) else tuple(parameter)
        # the constructor's arguments, so that a copy or a pickled error (a sweep's worker) is whole
        Exception.__init__(self, message, parameters, value, context)
        self.message, self.parameters, self.value, self.context = message, parameters, value, context
        self.see = ()

    def render(self, name=_as_is) -> str:
        head = "/".join(name(parameter) for parameter in self.parameters)
        if self.value is not None:
            head += f" {self.value}"
        return f"{self.context}{head}: {_text(self.message, name)}"

    def within(self, context: str) -> "ParameterError":
        return ParameterError(self.message, self.parameters, self.value, f"{context}: {self.context}")


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
