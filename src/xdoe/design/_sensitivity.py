"""Sensitivity-analysis designs through SALib (the ``analysis`` extra):
Morris's elementary-effects trajectories (Morris 1991; SALib
``sample.morris.sample``) and Saltelli's extension of the Sobol' sequence for
first- and total-order Sobol' indices (Saltelli 2002, Saltelli et al. 2010;
SALib ``sample.sobol.sample``). Every factor must be continuous: the points
are unit positions and their order is the structure SALib's analysis reads
(``xrun analyze`` passes the design points in that order).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from xdoe.design._factors import Factor
from xdoe.documents import DesignSpec
from xdoe.errors import DesignError

__all__ = ["sensitivity_design", "salib_problem"]

INSTALL = "pip install 'xdoe[analysis]'"


def salib_problem(names: Sequence[str]) -> dict[str, Any]:
    """SALib's problem of ``names`` over the unit cube."""
    return {"num_vars": len(names), "names": list(names), "bounds": [[0.0, 1.0]] * len(names)}


def sensitivity_design(factors: Sequence[Factor], spec: DesignSpec, seed: np.random.SeedSequence
                       ) -> tuple[np.ndarray, dict[str, Any]]:
    """``(points, info)`` of a Morris (``trajectories``, default 10; ``levels``,
    default 4) or Saltelli (``n``, default 64, a power of two; ``second_order``,
    default false) design: ``(N (d + 1), d)`` or ``(n (d + 2), d)``
    (``n (2 d + 2)`` with second order) unit positions.

    Raises:
        DesignError: a factor with levels or a ``when``, fewer than two
            factors, or SALib missing (names the extra to install).
    """
    for f in factors:
        if f.levels is not None or f.when:
            raise DesignError(f"{spec.method} needs unconditional continuous factors (range), but factor {f.name!r} "
                              f"{'has levels' if f.levels is not None else 'has a when'}")
    if len(factors) < 2:
        raise DesignError(f"{spec.method} needs at least two factors")
    try:
        from SALib.sample import morris as morris_sample
        from SALib.sample import sobol as sobol_sample
    except ImportError:
        raise DesignError(f"design {spec.method} needs SALib: {INSTALL}") from None
    problem = salib_problem([f.name for f in factors])
    rng = np.random.default_rng(seed)
    if spec.method == "morris":
        trajectories, levels = spec.get("trajectories", 10), spec.get("levels", 4)
        points = morris_sample.sample(problem, trajectories, num_levels=levels, seed=rng)
        return np.clip(points, 0.0, 1.0), {"trajectories": trajectories, "levels": levels}
    n, second = spec.get("n", 64), bool(spec.get("second_order", False))
    if n & (n - 1):
        raise DesignError(f"saltelli: n must be a power of two (Sobol' balance), got {n}")
    points = sobol_sample.sample(problem, n, calc_second_order=second, seed=rng)
    return np.clip(points, 0.0, 1.0), {"n": n, "second_order": second}
