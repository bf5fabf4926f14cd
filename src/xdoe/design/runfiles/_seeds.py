"""Per-run seeds: the one function every run's seed comes from
(docs/architecture.md, "Seeds").

:func:`run_seed` is ``numpy.random.SeedSequence(root, spawn_key=(1, k1, k2,
repetition)).generate_state(1, numpy.uint32)[0]`` (:func:`xdoe._random.seed_word`,
the function every other seed of xdoe is made with), where ``k1, k2`` are the
first two big-endian 32-bit words of sha256 of the canonical JSON of the design
point's levels. The seed depends on what the run is, not on its position, so
adding a repetition or a level never changes an existing run's seed.
"""

from __future__ import annotations

import hashlib
from typing import Any

from xdoe._random import seed_word
from xdoe.documents import canonical_json
from xdoe.errors import DesignError

__all__ = ["COPY_KEY", "run_seed", "seed_levels"]

#: the key added to the levels a seed is computed from, for the ``c``-th
#: (``c >= 1``) design point with the same levels as an earlier one (a centre
#: point of a central composite design, a replicated point): the copies are
#: replicates, so they get seeds of their own (``docs/designs.md``)
COPY_KEY = "~copy"


def seed_levels(levels: dict[str, Any], copy: int) -> dict[str, Any]:
    """The levels a run's seed is computed from: ``levels`` itself for the
    first design point with these levels (``copy == 0``), else with
    ``{COPY_KEY: copy}`` added."""
    return levels if not copy else {**levels, COPY_KEY: copy}


def run_seed(root_seed: int, levels: dict[str, Any], repetition: int) -> int:
    """The seed of one run, an int in ``[0, 2**32)``:
    ``SeedSequence(root_seed, spawn_key=(1, k1, k2, repetition))``'s first
    ``generate_state`` word (uint32), ``k1, k2`` the first two big-endian
    32-bit words of sha256 of the canonical JSON of ``levels``.

    Raises:
        DesignError: a level holds NaN or an infinity; a negative seed or repetition.
    """
    try:
        text = canonical_json(levels)
    except ValueError:
        raise DesignError(f"a level holds NaN or an infinity, which has no canonical form: {levels!r}") from None
    if root_seed < 0 or repetition < 0:
        raise DesignError(f"seeds and repetitions are non-negative, got {root_seed!r} and {repetition!r}")
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return seed_word(root_seed, 1, int.from_bytes(digest[0:4], "big"),
                     int.from_bytes(digest[4:8], "big"), repetition)
