"""The busiest links of a routed step or schedule: the edge that binds and the link classes at the peak.

Edges within rounding of the busiest count as busiest, so that equal loads never pick an edge or a
class by the noise of the last bit.
"""

import numpy as np


def busiest_edge(seconds: np.ndarray) -> int:
    """The busiest directed edge; among edges busy within rounding of the busiest, the first, so that
    equal loads never pick a class by the noise of the last bit (or by what the classes are named)."""
    return int(np.flatnonzero(seconds >= seconds.max() * (1 - 1e-9))[0])


def busiest_classes(seconds: np.ndarray, classes) -> str:
    """The link classes of the busiest directed edges, sorted and joined by ``=``.

    Edges within rounding of the busiest count (as in :func:`busiest_edge`), so a balanced load names
    every class it keeps at the peak (``x=y=z`` on a torus) rather than the first class in edge order.

    Parameters
    ----------
    seconds : numpy.ndarray
        How long each directed edge is busy (any unit).
    classes : sequence of str
        Each directed edge's link class.

    Returns
    -------
    str
        ``x``, ``x=y=z``; ``-`` when no edge is busy.
    """
    top = float(seconds.max(initial=0.0))
    if top <= 0:
        return "-"
    return "=".join(sorted({classes[i] for i in np.flatnonzero(seconds >= top * (1 - 1e-9))}))
