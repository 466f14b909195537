"""What every picture shares: matplotlib kept quiet, and the file written whole or not at all.

Used by :mod:`trnsim.outputs.plot` and :mod:`trnsim.outputs.draw`; imports nothing heavy (matplotlib is the
callers' to import).
"""

import contextlib
from pathlib import Path

from trnsim.errors import printable


class PictureWarning(UserWarning):
    """What matplotlib warned of while drawing a picture, in one printable line."""


@contextlib.contextmanager
def quiet():
    """Keep matplotlib's warnings and log messages off stderr while a picture is drawn (usable as a
    decorator). Its warnings (a glyph the font lacks, say) come back as one :class:`PictureWarning`
    of one printable line, so that a successful run's stderr holds only trnsim's own lines."""
    import logging
    import warnings

    logger = logging.getLogger("matplotlib")
    level = logger.level
    logger.setLevel(logging.ERROR)  # font cache notes and the like: nothing a user acts on
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
    finally:
        logger.setLevel(level)
    said = list(dict.fromkeys(printable(str(w.message)) for w in caught))
    if said:
        more = f" (and {len(said) - 1} other warning{'s' if len(said) > 2 else ''})" if len(said) > 1 else ""
        warnings.warn(f"matplotlib, drawing the picture: {said[0]}{more}", PictureWarning, stacklevel=3)


def save_picture(figure, output: Path, **options) -> None:
    """Render ``figure`` in memory in the format ``output``'s suffix names, then write the file in
    one step (:func:`trnsim.atomic.write_atomic`): an interrupted run leaves no half picture. The
    figure is closed afterwards, written or not (pyplot keeps every open figure alive)."""
    import io

    from trnsim.atomic import write_atomic

    try:
        buffer = io.BytesIO()
        figure.savefig(buffer, format=output.suffix.lower().lstrip("."), **options)
    finally:
        import matplotlib.pyplot

        matplotlib.pyplot.close(figure)
    write_atomic(output, buffer.getvalue())
