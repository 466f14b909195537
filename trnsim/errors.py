"""Errors that trnsim reports to users, each mapped to an exit code in one place."""

EXIT_OK = 0
EXIT_THRESHOLD = 1
EXIT_USAGE = 2


# The parameters of the library that its messages may name, written in braces: ``{alpha_us}``. Only
# these (and the names an error lists itself) are replaced when a message is shown, so that a value's
# own braces are shown as they are; the command line maps each to its flag (trnsim.cli.app.FLAGS).
PARAMETERS = (
    "algo",
    "alpha_us",
    "blast_radius",
    "calibration",
    "chips_per_rack",
    "constraint",
    "counts",
    "design",
    "domains",
    "dtype",
    "efa_routing",
    "engine",
    "experts",
    "fabric_tbit",
    "fail",
    "fit",
    "fit_sizes",
    "group",
    "groups",
    "hidden",
    "hop_us",
    "inter_algo",
    "jobs",
    "kind",
    "layers",
    "loss",
    "max_chunks",
    "min_chunk_bytes",
    "nic_gbit_per_chip",
    "nodes",
    "objective",
    "overrides",
    "oversubscription",
    "pairs",
    "params",
    "port_gbit",
    "random",
    "ranks",
    "ranks_per_chip",
    "root",
    "routing",
    "runtime",
    "save_baseline",
    "scheduler",
    "search",
    "size",
    "skew",
    "sku",
    "switch_layers",
    "tokens",
    "topk",
    "topology",
    "tor_tbit",
    "tors_per_rack",
    "traffic",
    "vary",
)


def _as_is(parameter: str) -> str:
    return parameter


def _names(names: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return (names,) if isinstance(names, str) else tuple(names)


def _restore(cls: type, args: tuple, state: dict) -> "TrnsimError":
    """Rebuild a pickled error (a sweep's worker sends its errors back) without its constructor."""
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class TrnsimError(Exception):
    """An error with a one-line message meant for the user (no traceback).

    The library says what was wrong in its own terms and names no command-line flag. A message that
    names a parameter of the library writes it in braces (``"give {skew} or {traffic}, not both"``;
    one of :data:`PARAMETERS`, or listed in ``names``): ``str()`` shows each as the parameter
    (``give skew or traffic, not both``), and :meth:`render` as the caller calls it; the command line
    shows the flag that sets it (``give --skew or --traffic, not both``;
    :func:`trnsim.cli.app.error_text`).

    Parameters
    ----------
    message : str or TrnsimError
        The line; an error (a part's, e.g. one group's of several) keeps the parameters it names.
    names : str or tuple of str
        Parameters outside :data:`PARAMETERS` the message names in braces (a caller's own).
    """

    exit_code = EXIT_USAGE

    def __init__(self, message: object = "", *, names: str | tuple[str, ...] = ()):
        inner = message.names if isinstance(message, TrnsimError) else ()
        text = message.template if isinstance(message, TrnsimError) else str(message)
        super().__init__(text)
        self.names = tuple(dict.fromkeys((*inner, *_names(names))))

    @property
    def template(self) -> str:
        """The message with each parameter it names still in braces."""
        return str(self.args[0]) if self.args else ""

    def render(self, name=_as_is) -> str:
        """The line, each parameter it names shown as ``name(parameter)`` (itself by default)."""
        text = self.template
        if "{" in text:
            for parameter in dict.fromkeys((*getattr(self, "names", ()), *PARAMETERS)):
                token = "{" + parameter + "}"
                if token in text:
                    text = text.replace(token, name(parameter))
        return text

    def __str__(self) -> str:
        return self.render()

    def within(self, context: str) -> "TrnsimError":
        """The same error, of the same type and naming the same parameters, with ``context: ``
        before its message (a variant's name, the input it came from)."""
        import copy

        error = copy.copy(self)
        error.args = (f"{context}: {self.template}",)
        return error

    def __reduce__(self):
        return (_restore, (type(self), self.args, dict(self.__dict__)))


class ConfigError(TrnsimError):
    """A topology file that cannot be read, parsed or validated."""


class HardwareError(ConfigError):
    """A topology that asks for more ports or lanes than a device has."""


class UsageError(TrnsimError):
    """Bad command-line input: an unknown SKU, a malformed size, a group naming missing chips."""


class ParameterError(UsageError):
    """A bad value for a parameter of the library: the line starts with the parameter's name and the
    value (``alpha_us: must be >= 0, got -1.0``; ``fail 'chip:99': ...``), which the command line
    shows as the flag that set it (``--alpha-us: ...``).

    Parameters
    ----------
    message : str or TrnsimError
        What was wrong (an error from a part of the value keeps the parameters it names).
    parameter : str or tuple of str
        The parameter (or parameters, shown joined by ``/``) the error concerns, as the library's
        functions name them (``alpha_us``, ``fail``, ``group``).
    value : str, optional
        The value as the line shows it after the name (already quoted where it is text).
    """

    def __init__(
        self, message: "str | TrnsimError", parameter: str | tuple[str, ...], value: str | None = None
    ):
        self.parameters = _names(parameter)
        self.value = value
        head = "/".join("{" + p + "}" for p in self.parameters)
        inner = message.template if isinstance(message, TrnsimError) else str(message)
        super().__init__(f"{head}{'' if value is None else ' ' + value}: {inner}", names=self.parameters)
        if isinstance(message, TrnsimError):
            self.names = tuple(dict.fromkeys((*self.names, *message.names)))


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
