"""Sensitivity-analysis designs through SALib (the ``analysis`` extra):
Morris's elementary-effects trajectories (Morris 1991; SALib
``sample.morris.sample``) and Saltelli's extension of the Sobol' sequence for
first- and total-order Sobol' indices (Saltelli 2002, Saltelli et al. 2010;
SALib ``sample.sobol.sample``). Every factor must be continuous: the points
are unit positions and their order is the structure SALib's analysis reads
(``xrun analyze`` passes the design points in that order).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from xdoe.design._common import check_factors, rng_from, spec_of
from xdoe.design._design import Design
from xdoe.design._factors import Factor
from xdoe.errors import DesignError

if TYPE_CHECKING:
    from xdoe.documents import DesignSpec

__all__ = ["morris", "saltelli", "salib_problem"]


def salib_problem(names: Sequence[str]) -> dict[str, Any]:
    """SALib's problem of ``names`` over the unit cube."""
    return {"num_vars": len(names), "names": list(names), "bounds": [[0.0, 1.0]] * len(names)}


def _salib(factors: Sequence[Factor], method: str) -> tuple[tuple[Factor, ...], Any, Any]:
    """The factors and SALib's ``morris`` and ``sobol`` samplers.

    Raises:
        DesignError: a factor with levels or a ``when``, fewer than two
            factors, or SALib missing (names the extra to install).
    """
    factors = check_factors(factors)
    for f in factors:
        if f.levels is not None or f.when:
            raise DesignError(f"{method} needs unconditional continuous factors (range), but factor {f.name!r} "
                              f"{'has levels' if f.levels is not None else 'has a when'}")
    if len(factors) < 2:
        raise DesignError(f"{method} needs at least two factors")
    try:
        from SALib.sample import morris as morris_sample
        from SALib.sample import sobol as sobol_sample
    except ImportError:
        from xdoe._extras import install_command

        raise DesignError(f"design {method} needs SALib: {install_command('analysis')}") from None
    return factors, morris_sample, sobol_sample


def morris(factors: Sequence[Factor], spec: DesignSpec | Mapping[str, Any] | None = None,
           seed: np.random.SeedSequence | int = 0) -> Design:
    """Morris's elementary-effects trajectories (Morris 1991; SALib
    ``sample.morris.sample``) over the unit cube of continuous ``factors``.

    Args:
        factors: two or more unconditional continuous factors.
        spec: ``{"trajectories": N, "levels": p}`` (defaults 10 and 4).
        seed: int or ``SeedSequence`` of SALib's generator.

    Returns:
        A :class:`~xdoe.design.Design` (method ``morris``) of
        ``N (d + 1)`` unit positions, trajectory after trajectory (the order
        SALib's analysis reads); ``info`` ``{"trajectories", "levels"}``.

    Raises:
        DesignError: a factor with levels or a ``when``, fewer than two
            factors, an odd ``levels`` (SALib only warns that the sample
            may be biased: its points leave the grid), or SALib missing
            (names the extra to install).
    """
    factors, morris_sample, _ = _salib(factors, "morris")
    spec = spec_of("morris", spec)
    trajectories, levels = spec.get("trajectories", 10), spec.get("levels", 4)
    if levels % 2:
        raise DesignError(f"morris: levels must be even (the step p / (2 (p - 1)) leaves the grid of p levels "
                          f"when p is odd, so the design is biased; Morris 1991), got {levels}")
    points = morris_sample.sample(salib_problem([f.name for f in factors]), trajectories, num_levels=levels,
                                  seed=rng_from(seed))
    return Design(factors, "morris", f"morris: {len(points)} points (SALib)", np.clip(points, 0.0, 1.0),
                  info={"trajectories": trajectories, "levels": levels})


def saltelli(factors: Sequence[Factor], spec: DesignSpec | Mapping[str, Any] | None = None,
             seed: np.random.SeedSequence | int = 0) -> Design:
    """Saltelli's extension of the Sobol' sequence for first- and total-order
    Sobol' indices (Saltelli 2002, Saltelli et al. 2010; SALib
    ``sample.sobol.sample``) over the unit cube of continuous ``factors``.

    Args:
        factors: two or more unconditional continuous factors.
        spec: ``{"n": N, "second_order": bool}`` (defaults 64, a power of
            two, and false).
        seed: int or ``SeedSequence`` of SALib's generator.

    Returns:
        A :class:`~xdoe.design.Design` (method ``saltelli``) of ``N (d + 2)``
        unit positions (``N (2 d + 2)`` with second order), in SALib's order;
        ``info`` ``{"n", "second_order"}``.

    Raises:
        DesignError: ``n`` not a power of two, or as :func:`morris`.
    """
    factors, _, sobol_sample = _salib(factors, "saltelli")
    spec = spec_of("saltelli", spec)
    n, second = spec.get("n", 64), bool(spec.get("second_order", False))
    if n & (n - 1):
        raise DesignError(f"saltelli: n must be a power of two (Sobol' balance), got {n}")
    points = sobol_sample.sample(salib_problem([f.name for f in factors]), n, calc_second_order=second,
                                 seed=rng_from(seed))
    return Design(factors, "saltelli", f"saltelli: {len(points)} points (SALib)", np.clip(points, 0.0, 1.0),
                  info={"n": n, "second_order": second})
