"""One uint32 seed from a seed and a spawn key, the way every seed of xdoe
is made (docs/architecture.md, "Seeds"): component seeds from the run seed
(:mod:`xdoe.execution._seeding`) and a branch's seed from its parent's
(:mod:`xdoe.tree._branch`) and xgen's run seeds (:mod:`xdoe.design.runfiles._seeds`)."""

from __future__ import annotations

__all__ = ["seed_word"]


def seed_word(seed: int, *key: int) -> int:
    """``int(numpy.random.SeedSequence(seed, spawn_key=key).generate_state(1, uint32)[0])``.

    Args:
        seed: a non-negative int (any size).
        key: non-negative ints, the spawn key.

    Returns:
        an int in ``[0, 2**32)``.

    Raises:
        ValueError / TypeError: from numpy, for a negative or non-integer seed or key.
    """
    import numpy as np  # here: importing xdoe loads no numpy

    ss = np.random.SeedSequence(int(seed), spawn_key=tuple(int(k) for k in key))
    return int(ss.generate_state(1, np.uint32)[0])
