"""What the command line typed, beyond the values typer hands a command: the order in which repeated
options of different names were given, and whether an option was given at all or took its default.

Typer collects ``--sku a --topology f --sku b`` into two lists, ``[a, b]`` and ``[f]``, and a default
``--max-regression 5%`` looks the same as a typed one. The argument parser knows both: it records
every occurrence in order, and the context records where each value came from. A command declared
with ``cls=OrderedCommand`` keeps that order in its context, which it takes as a ``typer.Context``
parameter.
"""

from typer.core import TyperCommand

from trnsim.errors import UsageError

_ORDER = "trnsim.typed_order"


class OrderedCommand(TyperCommand):
    """A command that records the order of its parameters' occurrences on the command line."""

    def make_parser(self, ctx):
        parser = super().make_parser(ctx)
        parse = parser.parse_args

        def parse_args(args):
            # the parser's own order: one entry per occurrence, options and arguments alike, so
            # `--sku=a`, abbreviations and `--` are read exactly as the values themselves were
            opts, rest, order = parse(args=args)
            ctx.meta[_ORDER] = [getattr(param, "name", None) for param in order]
            return opts, rest, order

        parser.parse_args = parse_args
        return parser


def in_typed_order(ctx, **lists: list | None) -> list[tuple[str, object]]:
    """The values of repeatable options as ``(name, value)`` pairs in the order they were typed.

    Parameters
    ----------
    ctx : typer.Context
        The command's context; its command should be an :class:`OrderedCommand`.
    **lists
        Each option's parameter name and its list of values, e.g. ``sku=[...], topology=[...]``.

    Returns
    -------
    list of (str, value)
        In the order typed; where the order is not known (another command class, values that did
        not come from the command line), the options in the order passed, each in its own order.
    """
    values = {name: list(items or []) for name, items in lists.items()}
    typed = [name for name in (ctx.meta.get(_ORDER, []) if ctx is not None else []) if name in values]
    if sorted(typed) != sorted(name for name, items in values.items() for _ in items):
        return [(name, item) for name, items in values.items() for item in items]
    pending = {name: iter(items) for name, items in values.items()}
    return [(name, next(pending[name])) for name in typed]


def given(ctx, name: str) -> bool:
    """Whether parameter ``name`` was given (on the command line or in its environment variable)."""
    source = ctx.get_parameter_source(name) if ctx is not None else None
    # compared by name: the enum is click's or typer's bundled copy of it, depending on the version
    return source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT")


def flag(ctx, name: str) -> str:
    """How the option of parameter ``name`` is spelled on the command line (its first long name)."""
    for param in ctx.command.params:
        if param.name == name:
            return next((opt for opt in param.opts if opt.startswith("--")), param.opts[0])
    return f"--{name.replace('_', '-')}"


def refuse_without(ctx, needed: str, dependents: tuple[str, ...]) -> None:
    """Refuse options that act only with another one: ``--max-regression`` without ``--baseline``.

    Raises
    ------
    UsageError
        One line naming the option given and the one it needs.
    """
    if ctx is None or ctx.params.get(needed) not in (None, False):
        return
    for name in dependents:
        if given(ctx, name):
            raise UsageError(
                f"{flag(ctx, name)} applies only with {flag(ctx, needed)} FILE: without a baseline nothing "
                "is checked"
            )
