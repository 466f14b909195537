"""SplitMix64 (Steele, Lea and Flood, OOPSLA 2014), elementwise on ``uint64`` arrays.

Two users: hash routing mixes (seed, source, destination, device) into a fixed per-flow choice
(:mod:`trnsim.routing.hashed`), and the exact bounds hash link records and colours
(:mod:`trnsim.model.optimum`). Both need a cheap hash that spreads every input bit over the output;
neither needs it to be cryptographic.
"""

import numpy as np

# SplitMix64's increment (the golden ratio in 64 bits) and its finaliser's two multipliers
GAMMA = np.uint64(0x9E3779B97F4A7C15)
MUL1 = np.uint64(0xBF58476D1CE4E5B9)
MUL2 = np.uint64(0x94D049BB133111EB)


def mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: spreads every input bit over the output (wrapping ``uint64`` arithmetic).

    Examples
    --------
    >>> import numpy as np
    >>> hex(int(mix64(np.array([1], dtype=np.uint64))[0]))
    '0x5692161d100b05e5'
    """
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * MUL1
        x = (x ^ (x >> np.uint64(27))) * MUL2
        return x ^ (x >> np.uint64(31))


def splitmix64(x: np.ndarray) -> np.ndarray:
    """One SplitMix64 step from state ``x``: the finaliser of ``x + GAMMA``.

    From state 0 this is the generator's first output, ``0xe220a8397b1dcdaf``.

    Examples
    --------
    >>> import numpy as np
    >>> hex(int(splitmix64(np.zeros(1, dtype=np.uint64))[0]))
    '0xe220a8397b1dcdaf'
    """
    with np.errstate(over="ignore"):
        return mix64(x + GAMMA)
