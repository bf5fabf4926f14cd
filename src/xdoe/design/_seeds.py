"""Per-run seeds: ``SeedSequence(seed, spawn_key=(1, k1, k2, repetition))``'s
first uint32 word, computed without a ``SeedSequence`` object per run.

:func:`run_seed` is ``numpy.random.SeedSequence(root, spawn_key=(1, k1, k2,
r)).generate_state(1, numpy.uint32)[0]``, bit for bit: the same hash mixing
(numpy's ``bit_generator.pyx``, derived from M. E. O'Neill's
``seed_seq_fe``, https://www.pcg-random.org/posts/developing-a-seed_seq-alternative.html),
restricted to what the first output word depends on. The pool after the
root seed's words and the first spawn-key word is the same for every run of
an experiment, so it is computed once per root seed; each run then mixes
three more words into pool word 0 and hashes it out. About 7x faster than
building a ``SeedSequence``, and numpy is not imported. Checked against
numpy over many roots and keys in ``tests/design/test_seeds.py``.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any, Callable

from xdoe.design._shared import MAX_INSTANCES
from xdoe.documents import canonical_json
from xdoe.errors import DesignError

__all__ = ["LevelSeeds", "run_seed", "seed_of_levels_json", "seeds_of_levels_json", "COPY_KEY", "seed_levels"]

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

_M32 = 0xFFFFFFFF
_POOL = 4  # numpy's DEFAULT_POOL_SIZE
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_MULT_A3 = pow(_MULT_A, 3, 1 << 32)


def _words(n: int) -> list[int]:
    """A non-negative int as uint32 words, least significant first (0: ``[0]``)."""
    out = [n & _M32]
    n >>= 32
    while n:
        out.append(n & _M32)
        n >>= 32
    return out


def _mix(x: int, y: int) -> int:
    r = (_MIX_L * x - _MIX_R * y) & _M32
    return r ^ (r >> 16)


class _Hash:
    """numpy's ``hashmix`` with its running hash constant."""

    def __init__(self) -> None:
        self.const = _INIT_A

    def __call__(self, value: int) -> int:
        value ^= self.const
        self.const = (self.const * _MULT_A) & _M32
        value = (value * self.const) & _M32
        return value ^ (value >> 16)


@functools.lru_cache(maxsize=64)
def _prefix(root: int) -> tuple[int, int]:
    """Pool word 0 and the hash constant after mixing the root seed's words
    (padded to the pool size) and the spawn key's first word, ``1``."""
    entropy = _words(root)
    entropy += [0] * (_POOL - len(entropy))
    entropy.append(1)
    hashmix = _Hash()
    pool = [hashmix(entropy[i]) for i in range(_POOL)]
    for src in range(_POOL):
        for dst in range(_POOL):
            if src != dst:
                pool[dst] = _mix(pool[dst], hashmix(pool[src]))
    for word in entropy[_POOL:]:
        for dst in range(_POOL):
            pool[dst] = _mix(pool[dst], hashmix(word))
    return pool[0], hashmix.const


def _first_word(root: int, key: tuple[int, ...]) -> int:
    """``SeedSequence(root, spawn_key=(1, *key)).generate_state(1, uint32)[0]``."""
    word0, const = _prefix(root)
    for value in key:
        for word in _words(value):
            # the first of the pool's four hashmix calls for this word goes to word 0
            h = word ^ const
            const = (const * _MULT_A) & _M32
            h = (h * const) & _M32
            word0 = _mix(word0, h ^ (h >> 16))
            const = (const * _MULT_A3) & _M32  # the calls for pool words 1..3
    out = word0 ^ _INIT_B
    out = (out * ((_INIT_B * _MULT_B) & _M32)) & _M32
    return out ^ (out >> 16)


def run_seed(root_seed: int, levels: dict[str, Any], repetition: int) -> int:
    """The seed of one run (uint32): ``SeedSequence(root_seed, spawn_key=(1,
    k1, k2, repetition))``'s first ``generate_state`` word, where ``k1, k2``
    are the first two big-endian 32-bit words of sha256 of the canonical JSON
    of ``levels`` (docs/architecture.md, "Seeds").

    Raises:
        DesignError: a level holds NaN or an infinity.
    """
    try:
        text = canonical_json(levels)
    except ValueError:
        raise DesignError(f"a level holds NaN or an infinity, which has no canonical form: {levels!r}") from None
    return seed_of_levels_json(root_seed, text, repetition)


def seed_of_levels_json(root_seed: int, levels_json: str, repetition: int) -> int:
    """:func:`run_seed` of the levels whose canonical JSON is ``levels_json``.

    Raises:
        DesignError: a negative seed or repetition.
    """
    digest = hashlib.sha256(levels_json.encode("utf-8")).digest()
    if root_seed < 0 or repetition < 0:
        raise DesignError(f"seeds and repetitions are non-negative, got {root_seed!r} and {repetition!r}")
    return _first_word(int(root_seed), (int.from_bytes(digest[0:4], "big"), int.from_bytes(digest[4:8], "big"),
                                        int(repetition)))


class LevelSeeds:
    """:func:`run_seed` for many runs of one experiment: the canonical JSON
    of the levels is joined from the remembered ``"name":value`` text of
    each level (the text ``canonical_json`` writes for a flat mapping with
    string keys: its items in key order, separated by commas), instead of
    encoding the whole mapping for every run. At most
    :data:`~xdoe.design._shared.MAX_INSTANCES` texts are kept (then
    forgotten in bulk), so memory stays flat. Levels that cannot be keyed
    (a list or mapping), a float zero (``0.0 == -0.0``, written differently)
    and every error take :func:`run_seed` itself."""

    def __init__(self, root_seed: int) -> None:
        self.root_seed = root_seed
        self._items: dict[tuple, str] = {}

    def seed(self, levels: dict[str, Any], repetition: int) -> int:
        items = self._items
        parts = []
        try:
            for name in sorted(levels):
                value = levels[name]
                kind = type(value)
                if kind is float and value == 0:
                    return run_seed(self.root_seed, levels, repetition)
                text = items.get((name, kind, value))
                if text is None:
                    if len(items) >= MAX_INSTANCES:
                        items.clear()
                    text = items[(name, kind, value)] = canonical_json({name: value})[1:-1]
                parts.append(text)
        except (TypeError, ValueError):  # unhashable, not a str key, NaN...: the general path decides
            return run_seed(self.root_seed, levels, repetition)
        return seed_of_levels_json(self.root_seed, "{" + ",".join(parts) + "}", repetition)


def seeds_of_levels_json(root_seed: int) -> Callable[[str, int], int]:
    """:func:`seed_of_levels_json` for one root seed, as a function of
    ``(levels_json, repetition)``: the hash constants of the three key words
    (each one uint32 word when the repetition is below 2**32) do not depend on
    their values, so they are computed once; larger repetitions take
    :func:`seed_of_levels_json` itself.

    Raises:
        DesignError: a negative root seed (when called: a negative repetition).
    """
    if root_seed < 0:
        raise DesignError(f"seeds and repetitions are non-negative, got {root_seed!r}")
    root = int(root_seed)
    word0, const = _prefix(root)
    steps = []
    for _ in range(3):
        mult = (const * _MULT_A) & _M32
        steps.append((const, mult))
        const = (mult * _MULT_A3) & _M32
    (x1, m1), (x2, m2), (x3, m3) = steps
    final = (_INIT_B * _MULT_B) & _M32
    sha256 = hashlib.sha256

    def seed(levels_json: str, repetition: int) -> int:
        if not 0 <= repetition <= _M32:
            return seed_of_levels_json(root, levels_json, repetition)
        digest = sha256(levels_json.encode("utf-8")).digest()
        w = word0
        for word, xor, mult in ((int.from_bytes(digest[0:4], "big"), x1, m1),
                                (int.from_bytes(digest[4:8], "big"), x2, m2), (repetition, x3, m3)):
            h = ((word ^ xor) * mult) & _M32
            r = (_MIX_L * w - _MIX_R * (h ^ (h >> 16))) & _M32
            w = r ^ (r >> 16)
        out = ((w ^ _INIT_B) * final) & _M32
        return out ^ (out >> 16)

    return seed
