"""Helpers shared by the design algorithms (seeds, level counts, checks).

numpy is imported where it is used: a full factorial is built and checked
without it (``xgen check`` start-up, issue 16).
"""

from __future__ import annotations

import math
import numbers
import sys
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from xdoe.design._factors import Factor
from xdoe.errors import DesignError

if TYPE_CHECKING:
    import numpy as np

    from xdoe.documents import DesignSpec


def _is_seed_sequence(seed: object) -> bool:
    np = sys.modules.get("numpy")  # not loaded: ``seed`` cannot be a SeedSequence
    return np is not None and isinstance(seed, np.random.SeedSequence)


def check_seed(seed: object) -> None:
    """Refuse a seed :func:`as_seed_sequence` would refuse, without importing numpy.

    Raises:
        DesignError: ``seed`` is neither a non-negative int nor a ``SeedSequence``.
    """
    if _is_seed_sequence(seed):
        return
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0:
        return
    raise DesignError(f"design seed must be a non-negative int or a numpy SeedSequence, got {seed!r}")


def as_seed_sequence(seed: np.random.SeedSequence | int, spawn_key: tuple[int, ...] = ()) -> np.random.SeedSequence:
    """``seed`` as a :class:`numpy.random.SeedSequence` (an int ``s`` gives
    ``SeedSequence(s, spawn_key=spawn_key)``; a ``SeedSequence`` is returned as is).

    Raises:
        DesignError: see :func:`check_seed`.
    """
    check_seed(seed)
    if _is_seed_sequence(seed):
        return seed  # type: ignore[return-value]
    import numpy as np

    return np.random.SeedSequence(int(seed), spawn_key=spawn_key)  # type: ignore[call-overload]


def spec_of(method: str, spec: DesignSpec | Mapping[str, Any] | None) -> DesignSpec:
    """The options of design ``method`` as a :class:`~xdoe.documents.DesignSpec`:
    ``spec`` itself (its method must be ``method``), or a mapping of the
    method's options (``{"n": 16}``) checked as a ``design:`` mapping is, or
    ``None`` (no options).

    Raises:
        DesignError: a spec of another method, an unknown option or one of
            the wrong type.
    """
    from xdoe.documents import DesignSpec, parse_design

    if isinstance(spec, DesignSpec):
        if spec.method != method:
            raise DesignError(f"{method} was given the options of design {spec.method}")
        return spec
    if spec is None:
        return DesignSpec(method)
    if not isinstance(spec, Mapping):
        raise DesignError(f"{method}: spec must be a DesignSpec or a mapping of its options, got {spec!r}")
    if "method" in spec and spec["method"] != method:
        raise DesignError(f"{method} was given the options of design {spec['method']}")
    return parse_design({**spec, "method": method})


def size_of(spec: DesignSpec, key: str = "n") -> int:
    """The number of design points option ``key`` of ``spec`` gives.

    Raises:
        DesignError: ``key`` not given.
    """
    n = spec.get(key)
    if n is None:
        raise DesignError(f"design {spec.method} needs {key}: the number of design points")
    return int(n)


def rng_from(seed: np.random.SeedSequence | int) -> np.random.Generator:
    """A fresh generator derived only from ``seed``."""
    import numpy as np

    return np.random.default_rng(as_seed_sequence(seed))


def check_factors(factors: Sequence[Factor]) -> tuple[Factor, ...]:
    """Return ``factors`` as a tuple after checking types and unique names."""
    out = tuple(factors)
    seen: set[str] = set()
    for f in out:
        if not isinstance(f, Factor):
            raise DesignError(f"expected Factor objects, got {type(f).__name__}")
        if f.name in seen:
            raise DesignError(f"factor {f.name!r} is given twice")
        seen.add(f.name)
    return out


def check_n(n: object, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise DesignError(f"{what} needs a number of design points n >= 1, got {n!r}")
    return int(n)


def full_size(factors: Sequence[Factor]) -> int:
    """Number of points of the full factorial of categorical ``factors``."""
    return math.prod(len(f.levels) for f in factors if f.levels is not None)


def balanced_levels(n: int, k: int) -> np.ndarray:
    """``n`` level indices ``floor(i k / n)`` for ``i = 0..n-1``: ascending,
    each of the ``k`` levels ``floor(n/k)`` or ``ceil(n/k)`` times."""
    import numpy as np

    return (np.arange(n, dtype=np.int64) * k) // n


def pdist(x: np.ndarray, metric: str = "euclidean") -> np.ndarray:
    """:func:`scipy.spatial.distance.pdist`, imported on first use (scipy.spatial
    takes a noticeable time to import, and xgen refuses bad documents without it)."""
    from scipy.spatial.distance import pdist as _pdist

    return _pdist(x, metric)


def squareform(distances: np.ndarray) -> np.ndarray:
    """:func:`scipy.spatial.distance.squareform`, imported on first use."""
    from scipy.spatial.distance import squareform as _squareform

    return _squareform(distances)


def factorial_indices(ks: Sequence[int]) -> np.ndarray:
    """Integer level indices ``(prod(ks), len(ks))`` in product order."""
    import numpy as np

    total = int(np.prod(ks, dtype=np.int64)) if ks else 1
    if len(ks) == 0:
        return np.zeros((1, 0), dtype=np.int64)
    out = np.empty((total, len(ks)), dtype=np.int64)
    # mixed-radix decoding, vectorised (same order as itertools.product)
    idx = np.arange(total, dtype=np.int64)
    for j in range(len(ks) - 1, -1, -1):
        idx, out[:, j] = np.divmod(idx, ks[j])
    return out


def map_categorical(u: np.ndarray, factors: Sequence[Factor]) -> np.ndarray:
    """Replace each categorical column of ``u`` (values in distinct cells) by
    balanced level indices assigned by rank."""
    import numpy as np

    out = np.array(u, dtype=np.float64, copy=True)
    n = out.shape[0]
    for j, f in enumerate(factors):
        if f.levels is not None:
            ranks = np.argsort(np.argsort(out[:, j], kind="stable"), kind="stable")
            out[:, j] = balanced_levels(n, len(f.levels))[ranks]
    return out
