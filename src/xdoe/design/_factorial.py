"""The full factorial design."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from xdoe.design._common import check_factors, full_size, spec_of
from xdoe.design._design import Design
from xdoe.design._factors import Factor
from xdoe.errors import DesignError

if TYPE_CHECKING:
    import numpy as np

    from xdoe.documents import DesignSpec

__all__ = ["full_factorial"]


def full_factorial(
    factors: Sequence[Factor],
    spec: DesignSpec | Mapping[str, Any] | None = None,
    seed: np.random.SeedSequence | int = 0,
) -> Design:
    """Every combination of the levels of categorical ``factors`` (the
    general full factorial; Montgomery, *Design and Analysis of Experiments*,
    8th ed. 2012, ch. 5; pyDOE ``fullfact`` gives the same points, its first
    factor fastest).

    Args:
        factors: categorical factors (unique names).
        spec: no options (``None`` or ``{}``).
        seed: unused (nothing is drawn); part of the signature every design
            method shares.

    Returns:
        A :class:`~xdoe.design.Design` (method ``full_factorial``) of
        ``prod(k_i)`` points; ``points`` ``(prod(k_i), d)`` float64 level
        indices in :func:`itertools.product` order (the first factor varies
        slowest), built on first use. Zero factors give one point with no
        columns.

    Raises:
        DesignError: a factor is continuous (full factorial needs levels), or
            an option is given.
    """
    factors = check_factors(factors)
    spec_of("full_factorial", spec)
    for f in factors:
        if f.levels is None:
            raise DesignError(
                f"full_factorial needs levels, but factor {f.name!r} is continuous "
                f"(range [{f.low}, {f.high}]); use design lhs or maximin"
            )
    return Design.grid(factors, "full_factorial", f"full factorial of {full_size(factors)} points")
